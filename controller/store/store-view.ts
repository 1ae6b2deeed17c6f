import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import { type DeleteOptions, type Store, type TxnOptions, type WriteOp, writeOne } from './store.js';

/**
 * A store over another: every call forwarded, every write through txn(), which a subclass overrides
 * (the roles' fenced stores, app/role-stores.ts; the session controller's noted writes,
 * runtime/own-writes.ts).
 */
export abstract class StoreView implements Store {
  constructor(protected readonly inner: Store) {}

  get: Store['get'] = (key) => this.inner.get(key);
  list: Store['list'] = (kind, opts) => this.inner.list(kind, opts);
  watch: Store['watch'] = (opts, onEvent, onError) => this.inner.watch(opts, onEvent, onError);
  revision: Store['revision'] = () => this.inner.revision();
  uid: Store['uid'] = () => this.inner.uid();
  tryAcquireLease: Store['tryAcquireLease'] = (name, holder, s) => this.inner.tryAcquireLease(name, holder, s);
  releaseLease: Store['releaseLease'] = (name, holder) => this.inner.releaseLease(name, holder);
  getLease: Store['getLease'] = (name) => this.inner.getLease(name);
  close: Store['close'] = () => this.inner.close();
  cannotCommit: Store['cannotCommit'] = () => this.inner.cannotCommit?.() ?? Promise.resolve(false);

  create<T extends Resource>(object: T): Promise<T> {
    return writeOne(this, { op: 'create', object });
  }
  update<T extends Resource>(object: T): Promise<T> {
    return writeOne(this, { op: 'update', object });
  }
  updateStatus<T extends Resource>(object: T): Promise<T> {
    return writeOne(this, { op: 'updateStatus', object });
  }
  delete<K extends string>(key: ObjectKey<K>, options?: DeleteOptions): Promise<ObjectOf<K>> {
    return writeOne(this, { op: 'delete', key, options });
  }
  abstract txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]>;
}
