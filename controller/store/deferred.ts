/**
 * A Store that is still being opened. Commands and the controller take their store synchronously,
 * but a store named by a config (yaml, ajv) or on etcd (its client) is loaded with a dynamic import,
 * so that the zero-config SQLite path never pays for either. Every call waits for the real store;
 * a failure to open it (a bad config, an unknown context) is each call's error.
 */
import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import type {
  DeleteOptions,
  ListOptions,
  Store,
  TxnOptions,
  WatchEvent,
  WatchHandle,
  WatchOptions,
  WriteOp,
} from './store.js';

export class DeferredStore implements Store {
  private closed = false;

  constructor(private readonly opening: Promise<Store>) {
    // Not an unhandled rejection when nobody calls: the first call reports it.
    opening.catch(() => undefined);
  }

  get = async <K extends string>(key: ObjectKey<K>) => (await this.opening).get(key);
  list = async <K extends string>(kind: K, opts?: ListOptions) => (await this.opening).list(kind, opts);
  create = async <T extends Resource>(obj: T) => (await this.opening).create(obj);
  update = async <T extends Resource>(obj: T) => (await this.opening).update(obj);
  updateStatus = async <T extends Resource>(obj: T) => (await this.opening).updateStatus(obj);
  delete = async <K extends string>(key: ObjectKey<K>, opts?: DeleteOptions) => (await this.opening).delete(key, opts);
  txn = async (ops: WriteOp[], opts?: TxnOptions) => (await this.opening).txn(ops, opts);
  revision = async () => (await this.opening).revision();
  uid = async () => (await this.opening).uid();
  tryAcquireLease = async (name: string, holder: string, seconds: number) =>
    (await this.opening).tryAcquireLease(name, holder, seconds);
  releaseLease = async (name: string, holder: string) => (await this.opening).releaseLease(name, holder);
  getLease = async (name: string) => (await this.opening).getLease(name);
  cannotCommit = async () => (await (await this.opening).cannotCommit?.()) ?? false;

  /** Starts the real watch once the store is open; a close before that means it never starts. */
  watch<K extends string>(
    opts: WatchOptions<K>,
    onEvent: (ev: WatchEvent<ObjectOf<K>>) => void,
    onError?: (err: Error) => void,
  ): WatchHandle {
    let inner: WatchHandle | undefined;
    let done = false;
    this.opening.then(
      (s) => {
        if (!done && !this.closed) inner = s.watch(opts, onEvent, onError);
      },
      (e: Error) => onError?.(e),
    );
    return {
      close: () => {
        done = true;
        inner?.close();
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    // A store that never opened has nothing to close.
    const s = await this.opening.catch(() => undefined);
    await s?.close();
  }
}
