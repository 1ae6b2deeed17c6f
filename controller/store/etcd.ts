/**
 * The etcd backend of the Store (issue 16), for several hosts sharing one store: one key per
 * object under a prefix (etcd-keys.ts), resourceVersion = the key's mod_revision, every write an
 * etcd transaction with compare-and-swap (etcd-txn.ts), watch from a revision (etcd-watch.ts),
 * leases as CAS-written keys (etcd-leases.ts), and a deadline on every call (etcd-client.ts).
 * docs/store.md says how each operation maps to etcd.
 */
import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { ApiError } from '../api/errors.js';
import { matches } from '../api/labels.js';
import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import { checkEndpoints, connectEtcd, type EtcdTls, withDeadline } from './etcd-client.js';
import { EtcdKeys, rangeEnd } from './etcd-keys.js';
import { EtcdLeases } from './etcd-leases.js';
import { decodeObject, EtcdTxn } from './etcd-txn.js';
import { clusterCannotCommit } from './etcd-quorum.js';
import { watchObjects } from './etcd-watch.js';
import {
  anyKind,
  type DeleteOptions,
  type LeaseRecord,
  type ListOptions,
  type ListResult,
  type Store,
  type TxnOptions,
  type WatchEvent,
  type WatchHandle,
  type WatchOptions,
  type WriteOp,
  writeOne,
} from './store.js';

export interface EtcdStoreOptions {
  /** Client URLs of the cluster's members, e.g. `https://10.0.0.1:2379` (http:// only on loopback). */
  endpoints: string[];
  /** Every key of this store starts with it (default `/orchctl/`). */
  prefix?: string;
  /** Files (PEM): the cluster's CA, and a client certificate and key for mutual TLS. */
  tls?: EtcdTls;
  /** Every call fails after this long (default 5000 ms) instead of waiting out a leader election. */
  callTimeoutMs?: number;
  /**
   * Compact etcd's history to keep about this many revisions (as SQLite's retainRevisions). Unset:
   * the store never compacts; run etcd with --auto-compaction-* (docs/store.md).
   */
  retainRevisions?: number;
}

export const DEFAULT_PREFIX = '/orchctl/';
export const DEFAULT_CALL_TIMEOUT_MS = 5000;

export class EtcdStore implements Store {
  readonly endpoints: string[];
  readonly prefix: string;
  private readonly client: Etcd3;
  private readonly keys: EtcdKeys;
  private readonly leases: EtcdLeases;
  private readonly callTimeoutMs: number;
  private readonly watches = new Set<WatchHandle>();
  private compactedTo = 0;
  private closed = false;

  constructor(readonly opts: EtcdStoreOptions) {
    this.endpoints = checkEndpoints(opts.endpoints, opts.tls);
    this.prefix = opts.prefix ?? DEFAULT_PREFIX;
    if (!this.prefix.endsWith('/')) this.prefix += '/';
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.client = connectEtcd(this.endpoints, opts.tls, attemptTimeout(this.callTimeoutMs));
    this.keys = new EtcdKeys(this.prefix);
    this.leases = new EtcdLeases(this.client, this.keys);
  }

  /** `etcd http://a:2379,http://b:2379 /orchctl/`, for messages. */
  describe(): string {
    return `etcd ${this.endpoints.join(',')} ${this.prefix}`;
  }

  /** Every member refuses or has no leader: the cluster as a whole cannot commit (etcd-quorum.ts). */
  cannotCommit(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    return clusterCannotCommit(this.endpoints, this.opts.tls);
  }

  private call<T>(what: string, fn: (deadline: number) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ApiError('InternalError', 'store is closed'));
    return withDeadline(what, this.endpoints, this.callTimeoutMs, fn);
  }

  // ---- reads -------------------------------------------------------------------------------

  get<K extends string>(key: ObjectKey<K>): Promise<ObjectOf<K> | undefined> {
    return this.call('get', async () => {
      const res = await this.client.kv.range({ key: Buffer.from(this.keys.object(key)) });
      return res.kvs[0] ? decodeObject<K>(res.kvs[0]) : undefined;
    });
  }

  list<K extends string>(kind: K, opts: ListOptions = {}): Promise<ListResult<ObjectOf<K>>> {
    return this.call(`list ${kind}`, async () => {
      const prefix = this.keys.objects(kind, opts.namespace);
      // One range is one consistent snapshot: the items and the revision they were read at.
      const res = await this.client.kv.range({ key: Buffer.from(prefix), range_end: rangeEnd(prefix) });
      let items = res.kvs.map((kv) => decodeObject<K>(kv));
      if (opts.labelSelector?.length) items = items.filter((o) => matches(opts.labelSelector!, o.metadata.labels));
      // As SQLite orders them (etcd's key order puts "a-b/x" before "a/x").
      const ns = (o: Resource) => o.metadata.namespace ?? '';
      items.sort((a, b) => (ns(a) === ns(b) ? compare(a.metadata.name, b.metadata.name) : compare(ns(a), ns(b))));
      return { items, revision: Number(res.header.revision) };
    });
  }

  /**
   * The revision of the newest object write (leases and the identity key do not move it). A store
   * nothing was written to yet gets its revision key now: a watch from 0 would start before
   * whatever the cluster has compacted.
   */
  revision(): Promise<number> {
    return this.call('revision', async () => {
      const key = Buffer.from(this.keys.revision);
      const read = await this.client.kv.range({ key });
      if (read.kvs[0]) return Number(read.kvs[0].mod_revision);
      const res = await this.client.kv.txn({
        compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key, value: Buffer.alloc(0) } }, { request_range: { key } }],
        failure: [{ request_range: { key } }],
      });
      const kv = res.responses.find((r) => r.response_range)?.response_range?.kvs[0];
      return kv ? Number(kv.mod_revision) : Number(res.header.revision);
    });
  }

  /** The store's identity: a key created once, if absent, by whoever asks first. */
  uid(): Promise<string> {
    return this.call('uid', async () => {
      const key = Buffer.from(this.keys.uid);
      const res = await this.client.kv.txn({
        compare: [{ key, target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [{ request_put: { key, value: Buffer.from(randomUUID()) } }, { request_range: { key } }],
        failure: [{ request_range: { key } }],
      });
      const range = res.responses.find((r) => r.response_range)?.response_range;
      return range?.kvs[0]?.value.toString() ?? '';
    });
  }

  // ---- writes ------------------------------------------------------------------------------

  create<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'create', object: obj });
  }

  update<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'update', object: obj });
  }

  updateStatus<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'updateStatus', object: obj });
  }

  delete<K extends string>(key: ObjectKey<K>, opts?: DeleteOptions): Promise<ObjectOf<K>> {
    return writeOne(this, { op: 'delete', key, options: opts });
  }

  txn(ops: WriteOp[], opts: TxnOptions = {}): Promise<Resource[]> {
    const txn = new EtcdTxn(this.client, this.keys, ops, opts);
    return this.call(opts.dryRun ? 'dry-run transaction' : 'write', async (deadline) => {
      const { results, revision } = await txn.run(deadline);
      if (revision !== undefined) await this.compact(revision);
      return results;
    });
  }

  /** With retainRevisions: compact history older than that, in steps of a tenth of it. */
  private async compact(revision: number): Promise<void> {
    const retain = this.opts.retainRevisions;
    if (!retain || revision - retain <= this.compactedTo + Math.max(1, Math.floor(retain / 10))) return;
    const to = revision - retain;
    try {
      await this.client.kv.compact({ revision: to });
    } catch {
      /* someone compacted further already, or the cluster is busy: the next write tries again */
    }
    this.compactedTo = to;
  }

  // ---- watch -------------------------------------------------------------------------------

  watch<K extends string>(
    opts: WatchOptions<K>,
    onEvent: (ev: WatchEvent<ObjectOf<K>>) => void,
    onError?: (err: Error) => void,
  ): WatchHandle {
    if (this.closed) throw new ApiError('InternalError', 'store is closed');
    const inner = watchObjects(this.client, this.keys, opts, anyKind(onEvent), (err) => {
      this.watches.delete(handle);
      onError?.(err);
    });
    const handle: WatchHandle = {
      close: () => {
        this.watches.delete(handle);
        inner.close();
      },
    };
    this.watches.add(handle);
    return handle;
  }

  // ---- leases ------------------------------------------------------------------------------

  tryAcquireLease(name: string, holder: string, durationSeconds: number): Promise<LeaseRecord | undefined> {
    return this.call(`acquire lease ${name}`, () => this.leases.tryAcquire(name, holder, durationSeconds));
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.closed) return;
    await this.call(`release lease ${name}`, () => this.leases.release(name, holder));
  }

  getLease(name: string): Promise<LeaseRecord | undefined> {
    return this.call(`get lease ${name}`, () => this.leases.get(name));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.watches]) w.close();
    this.client.close();
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * How long one RPC attempt may take before etcd3 retries it on another member. A request caught
 * by a leader's death waits out this (measured: the first write after a SIGKILL of the leader
 * took this long with 2.5 s), so it is short; a call has several attempts within its deadline.
 */
const attemptTimeout = (callTimeoutMs: number) => Math.max(250, Math.min(1000, Math.floor(callTimeoutMs / 3)));
