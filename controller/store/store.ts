/**
 * The Store contract, modelled on etcd so a second backend (etcd for several hosts) is another
 * implementation of this interface, not a rewrite of its callers:
 *  - one global revision; every write gets a new one and it becomes the object's resourceVersion
 *    (a transaction's ops may share one: etcd gives a whole transaction a single revision);
 *  - update/updateStatus/delete with a resourceVersion are compare-and-swap (Conflict otherwise);
 *  - a transaction may carry `unchanged` guards over a kind (and namespace): Conflict when anything
 *    there was written after a given revision (etcd: a mod_revision Compare over a key range);
 *  - spec-level changes bump metadata.generation, status writes never do;
 *  - create/update ignore `status`; updateStatus ignores everything but `status`;
 *  - delete of an object with finalizers only sets deletionTimestamp; it disappears when the last
 *    finalizer is removed; dependents (ownerReferences) are deleted with their owner;
 *  - watch delivers ADDED/MODIFIED/DELETED in revision order from any revision still retained
 *    (older ones fail with reason Gone: the caller relists, as with etcd compaction).
 * The conformance suite in test/support/store-conformance.ts pins this down for every backend.
 */
import { ApiError, isApiError } from '../api/errors.js';
import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import type { Selector } from '../api/labels.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent<T extends Resource = Resource> {
  type: WatchEventType;
  object: T;
  revision: number;
}

export interface ListOptions {
  namespace?: string; // undefined = all namespaces
  labelSelector?: Selector;
}

export interface ListResult<T extends Resource = Resource> {
  items: T[];
  revision: number;
}

export interface WatchOptions<K extends string = string> {
  kind?: K; // undefined = every kind
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

/**
 * A guard: the transaction fails with Conflict (as a failed compare-and-swap does) when any object
 * of `kind` — in `namespace`, or in any namespace when it is undefined — has a resourceVersion
 * greater than `since`, i.e. was created or written (spec, metadata or status) after the caller
 * last looked. It writes nothing. Guards are checked before any op of the transaction is applied,
 * inside the same serialised write, so "create X only if nothing of kind K appeared since revision
 * R" holds even against a write landing at the same moment (no duplicate from a stale view).
 * Deletions are not seen: a removed object leaves nothing to compare. That is fine for what it is
 * for — a deletion cannot create a duplicate; it can only make the view more cautious than needed.
 *
 * etcd: a Compare on the mod revision over the key range of the kind's (and namespace's) prefix —
 * `Compare{target: MOD, key: prefix, range_end: prefix with its last byte + 1, result: LESS,
 * mod_revision: since + 1}` in the txn's If (true only when every key in the range satisfies it);
 * a false compare takes the Else branch, which the backend reports as this Conflict.
 */
export type UnchangedGuard = { op: 'unchanged'; kind: string; namespace?: string; since: number };

export type WriteOp =
  | { op: 'create'; object: Resource }
  | { op: 'update'; object: Resource }
  | { op: 'updateStatus'; object: Resource }
  | { op: 'delete'; key: ObjectKey; options?: DeleteOptions }
  | UnchangedGuard;

export interface TxnOptions {
  /** Run every check and compute results, then roll back (server-side dry run). */
  dryRun?: boolean;
  /**
   * Leader fencing: the transaction applies only while `holder` holds lease `lease` (unexpired),
   * checked inside the same serialised write, so a deposed leader whose lease was taken over
   * writes nothing. Otherwise it fails with a Conflict whose `isFenced()` is true (no retry helps:
   * the caller is no longer the leader). etcd: a Compare on the lease key in the txn's If.
   */
  fence?: { lease: string; holder: string };
}

/**
 * A write of one object as a transaction of one op, its result typed as what was written: a decode
 * point (see Store) — the store returns the object it now holds under the key written.
 */
export async function writeOne<T extends Resource>(store: Pick<Store, 'txn'>, op: WriteOp): Promise<T> {
  return (await store.txn([op]))[0] as T;
}

/**
 * A watch callback for kind K as one for any object: a decode point (see Store) for backends that
 * keep their watchers in one list; each is called only with objects of the kind it asked for.
 */
export function anyKind<K extends string>(onEvent: (ev: WatchEvent<ObjectOf<K>>) => void): (ev: WatchEvent) => void {
  return onEvent as (ev: WatchEvent) => void;
}

/** The cause a fenced-off transaction's Conflict carries (see TxnOptions.fence). */
export const FENCED = 'Fenced';

/** A Conflict because the caller's lease was not held (TxnOptions.fence), not a stale object. */
export const isFenced = (e: unknown): boolean =>
  isApiError(e, 'Conflict') && e.causes.some((c) => c.field === 'fence' && c.message.startsWith(FENCED));

/** Why `holder` does not hold the lease `cur` at `now` (ms), or undefined when it does. */
export function fenceBroken(cur: LeaseRecord | undefined, holder: string, now: number): string | undefined {
  if (!cur) return 'nobody holds it';
  if (cur.holderIdentity !== holder) return `${cur.holderIdentity} holds it`;
  const expires = Date.parse(cur.renewTime) + cur.leaseDurationSeconds * 1000;
  if (expires < now) return `it expired at ${new Date(expires).toISOString()}`;
  return undefined;
}

/** The Conflict a transaction fails with when its fence does not hold. */
export function fencedError(fence: { lease: string; holder: string }, why: string): ApiError {
  return new ApiError(
    'Conflict',
    `Operation cannot be fulfilled: ${fence.holder} does not hold lease "${fence.lease}" (${why}); ` +
      'it is no longer the leader',
    [{ field: 'fence', message: `${FENCED}: lease ${fence.lease}` }],
  );
}

export interface LeaseRecord {
  name: string;
  holderIdentity: string;
  acquireTime: string;
  renewTime: string;
  leaseDurationSeconds: number;
  leaderTransitions: number;
}

/**
 * Typed by kind (api/kinds.ts KindMap): `get({ kind: 'Pipeline', … })`, `list('Pipeline')` and
 * `watch({ kind: 'Pipeline', … })` give Pipelines, and a write returns the type written; a kind
 * known only at run time gives a plain Resource. A backend decodes what it stored into that type in
 * one place (each says where): the store keeps an object only under its own kind's key, and admission
 * validated it against its kind's schema before it was written.
 */
export interface Store {
  get<K extends string>(key: ObjectKey<K>): Promise<ObjectOf<K> | undefined>;
  list<K extends string>(kind: K, opts?: ListOptions): Promise<ListResult<ObjectOf<K>>>;
  create<T extends Resource>(obj: T): Promise<T>;
  update<T extends Resource>(obj: T): Promise<T>;
  updateStatus<T extends Resource>(obj: T): Promise<T>;
  /** Returns the object as it is after the call (with deletionTimestamp) or as it was when removed. */
  delete<K extends string>(key: ObjectKey<K>, opts?: DeleteOptions): Promise<ObjectOf<K>>;
  /**
   * All-or-nothing: either every op is applied or none is (first error is thrown). Guards
   * (`unchanged`) are checked first and have no result: the results are the written objects, one
   * per other op, in order.
   */
  txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]>;
  watch<K extends string>(
    opts: WatchOptions<K>,
    onEvent: (ev: WatchEvent<ObjectOf<K>>) => void,
    onError?: (err: Error) => void,
  ): WatchHandle;
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
  /**
   * Whether no one can write to this store at all now (etcd: every member down or without a leader),
   * as opposed to this process being cut off from it. Absent: the store cannot tell (one SQLite file).
   */
  cannotCommit?(): Promise<boolean>;
}
