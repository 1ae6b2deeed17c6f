/**
 * The Store contract, modelled on etcd so a second backend (etcd for several hosts) is another
 * implementation of this interface, not a rewrite of its callers:
 *  - one global revision; every write gets a new one and it becomes the object's resourceVersion;
 *  - update/updateStatus/delete with a resourceVersion are compare-and-swap (Conflict otherwise);
 *  - spec-level changes bump metadata.generation, status writes never do;
 *  - create/update ignore `status`; updateStatus ignores everything but `status`;
 *  - delete of an object with finalizers only sets deletionTimestamp; it disappears when the last
 *    finalizer is removed; dependents (ownerReferences) are deleted with their owner;
 *  - watch delivers ADDED/MODIFIED/DELETED in revision order from any revision still retained
 *    (older ones fail with reason Gone: the caller relists, as with etcd compaction).
 * The conformance suite in test/support/store-conformance.ts pins this down for every backend.
 */
import type { ObjectKey, Resource } from '../api/types.js';
import type { Selector } from '../api/labels.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent {
  type: WatchEventType;
  object: Resource;
  revision: number;
}

export interface ListOptions {
  namespace?: string; // undefined = all namespaces
  labelSelector?: Selector;
}

export interface ListResult {
  items: Resource[];
  revision: number;
}

export interface WatchOptions {
  kind?: string; // undefined = every kind
  namespace?: string;
  /** Deliver events with revision > fromRevision. */
  fromRevision: number;
}

export interface WatchHandle {
  close(): void;
}

export interface DeleteOptions {
  resourceVersion?: string;
}

export type WriteOp =
  | { op: 'create'; object: Resource }
  | { op: 'update'; object: Resource }
  | { op: 'updateStatus'; object: Resource }
  | { op: 'delete'; key: ObjectKey; options?: DeleteOptions };

export interface TxnOptions {
  /** Run every check and compute results, then roll back (server-side dry run). */
  dryRun?: boolean;
}

export interface LeaseRecord {
  name: string;
  holderIdentity: string;
  acquireTime: string;
  renewTime: string;
  leaseDurationSeconds: number;
  leaderTransitions: number;
}

export interface Store {
  get(key: ObjectKey): Promise<Resource | undefined>;
  list(kind: string, opts?: ListOptions): Promise<ListResult>;
  create(obj: Resource): Promise<Resource>;
  update(obj: Resource): Promise<Resource>;
  updateStatus(obj: Resource): Promise<Resource>;
  /** Returns the object as it is after the call (with deletionTimestamp) or as it was when removed. */
  delete(key: ObjectKey, opts?: DeleteOptions): Promise<Resource>;
  /** All-or-nothing: either every op is applied or none is (first error is thrown). */
  txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]>;
  watch(opts: WatchOptions, onEvent: (ev: WatchEvent) => void, onError?: (err: Error) => void): WatchHandle;
  revision(): Promise<number>;
  /** The store's identity, fixed when it was created (a restore makes a new one). */
  uid(): Promise<string>;
  /**
   * Acquire or renew a named lease for `holder`. Succeeds when the lease is free, expired or
   * already held by `holder`. Returns the record when held by `holder`, else undefined.
   */
  tryAcquireLease(name: string, holder: string, durationSeconds: number): Promise<LeaseRecord | undefined>;
  releaseLease(name: string, holder: string): Promise<void>;
  getLease(name: string): Promise<LeaseRecord | undefined>;
  close(): Promise<void>;
}
