/**
 * What a write does to an object, whatever backend stores it (store.ts's contract): what create
 * keeps and sets, when generation moves, finalizers and deletionTimestamp, compare-and-swap
 * preconditions, redaction, leases. Pure: the current object in, the next one out. Both backends
 * (sqlite.ts, etcd.ts) apply these outcomes; the conformance suite pins them.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, alreadyExists, conflict, notFound } from '../api/errors.js';
import { redact, redactDeep } from '../api/redact.js';
import type { ObjectKey, Resource } from '../api/types.js';
import type { DeleteOptions, LeaseRecord, UnchangedGuard } from './store.js';

/** RFC 3339 with second precision, like Kubernetes timestamps. */
export const nowStamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

export const objectKey = (o: Resource): ObjectKey => ({
  kind: o.kind,
  namespace: o.metadata.namespace ?? '',
  name: o.metadata.name,
});

function withoutStatus(obj: Resource): Resource {
  const { status: _status, ...rest } = obj;
  return rest as Resource;
}

/** Everything that is neither metadata nor status: a change here bumps generation. */
function specPart(obj: Resource): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/**
 * Statuses and Events carry error text from outside (LLM endpoints, tools, agents), which may
 * echo a key back: none of it is stored unredacted. Specs are the user's own and kept as written.
 */
export function redactForStore(obj: Resource): Resource {
  if (obj.status !== undefined) obj.status = redactDeep(obj.status);
  if (obj.kind === 'Event')
    for (const f of ['message', 'note'] as const) if (typeof obj[f] === 'string') obj[f] = redact(obj[f] as string);
  return obj;
}

/** The object create stores: no status, fresh system metadata. `existing` is what the key holds now. */
export function created(input: Resource, existing: Resource | undefined, uid: string): Resource {
  if (!input.kind) throw new ApiError('BadRequest', 'object has no kind');
  if (!input.metadata?.name) throw new ApiError('BadRequest', `${input.kind}: metadata.name is required`);
  if (existing) throw alreadyExists(input.kind, input.metadata.name);
  const obj = structuredClone(withoutStatus(input));
  const { deletionTimestamp: _d, resourceVersion: _rv, ...meta } = obj.metadata;
  obj.metadata = { ...meta, namespace: meta.namespace || undefined, uid, generation: 1, creationTimestamp: nowStamp() };
  if (!obj.metadata.namespace) delete obj.metadata.namespace;
  return obj;
}

/** The preconditions of update/updateStatus: the object exists, and its resourceVersion and uid match when given. */
export function current(input: Resource, cur: Resource | undefined): Resource {
  const key = objectKey(input);
  if (!cur) throw notFound(key.kind, key.name, key.namespace);
  const rv = input.metadata.resourceVersion;
  if (
    (rv !== undefined && rv !== cur.metadata.resourceVersion) ||
    (input.metadata.uid && input.metadata.uid !== cur.metadata.uid)
  )
    throw conflict(key.kind, key.name);
  return cur;
}

export type Outcome =
  | { kind: 'unchanged'; object: Resource }
  | { kind: 'write'; object: Resource }
  /** Gone: no finalizer left (its dependents go with it). */
  | { kind: 'remove'; object: Resource };

export function updated(input: Resource, cur: Resource): Outcome {
  const next = structuredClone(withoutStatus(input));
  if (cur.status !== undefined) next.status = cur.status;
  next.metadata = {
    ...next.metadata,
    uid: cur.metadata.uid,
    creationTimestamp: cur.metadata.creationTimestamp,
    generation: cur.metadata.generation,
    resourceVersion: cur.metadata.resourceVersion,
  };
  if (cur.metadata.deletionTimestamp) {
    next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
    const added = (next.metadata.finalizers ?? []).filter((f) => !(cur.metadata.finalizers ?? []).includes(f));
    if (added.length)
      throw new ApiError(
        'Invalid',
        `${cur.kind} "${cur.metadata.name}" is being deleted: ` +
          `finalizers may only be removed, not added (${added.join(', ')})`,
      );
  } else delete next.metadata.deletionTimestamp;
  if (!next.metadata.finalizers?.length) delete next.metadata.finalizers;
  if (!isDeepStrictEqual(specPart(next), specPart(cur))) next.metadata.generation = (cur.metadata.generation ?? 0) + 1;
  if (cur.metadata.deletionTimestamp && !next.metadata.finalizers?.length) return { kind: 'remove', object: next };
  // No-op writes keep the revision, as the API server does.
  if (isDeepStrictEqual(next, cur)) return { kind: 'unchanged', object: cur };
  return { kind: 'write', object: next };
}

export function statusUpdated(input: Resource, cur: Resource): Outcome {
  const next = structuredClone(cur);
  if (input.status === undefined) delete next.status;
  else next.status = structuredClone(input.status);
  if (isDeepStrictEqual(next.status, cur.status)) return { kind: 'unchanged', object: cur };
  return { kind: 'write', object: next };
}

/** Delete: with finalizers only deletionTimestamp is set (once); without, the object goes. */
export function deleted(key: ObjectKey, cur: Resource | undefined, opts: DeleteOptions = {}): Outcome {
  if (!cur) throw notFound(key.kind, key.name, key.namespace);
  if (opts.resourceVersion !== undefined && opts.resourceVersion !== cur.metadata.resourceVersion)
    throw conflict(key.kind, key.name);
  if (!cur.metadata.finalizers?.length) return { kind: 'remove', object: cur };
  if (cur.metadata.deletionTimestamp) return { kind: 'unchanged', object: cur };
  const next = structuredClone(cur);
  next.metadata.deletionTimestamp = nowStamp();
  next.metadata.generation = (next.metadata.generation ?? 0) + 1;
  return { kind: 'write', object: next };
}

/** Whether `dep` names `ownerUid` among its ownerReferences (then it goes when its owner goes). */
export const isDependent = (dep: Resource, owner: Resource): boolean =>
  (dep.metadata.namespace ?? '') === (owner.metadata.namespace ?? '') &&
  !!dep.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid);

/**
 * The lease record after `holder` asks for it at `now`: granted when it is free, expired or already
 * the holder's (a renewal keeps acquireTime); undefined while someone else holds it.
 */
export function acquiredLease(
  cur: LeaseRecord | undefined,
  name: string,
  holder: string,
  durationSeconds: number,
  now: Date,
): LeaseRecord | undefined {
  const expired = cur && Date.parse(cur.renewTime) + cur.leaseDurationSeconds * 1000 < now.getTime();
  if (cur && cur.holderIdentity !== holder && !expired) return undefined;
  const same = cur?.holderIdentity === holder;
  return {
    name,
    holderIdentity: holder,
    acquireTime: same && cur ? cur.acquireTime : now.toISOString(),
    renewTime: now.toISOString(),
    leaseDurationSeconds: durationSeconds,
    leaderTransitions: (cur?.leaderTransitions ?? 0) + (cur && !same ? 1 : 0),
  };
}

/** The Conflict an `unchanged` guard raises when an object of its kind is at `newest` > `since`. */
export function guardConflict(g: UnchangedGuard, newest: number): ApiError {
  const where =
    g.namespace === undefined ? 'any namespace' : g.namespace ? `namespace "${g.namespace}"` : 'the cluster';
  return new ApiError(
    'Conflict',
    `Operation cannot be fulfilled: ${g.kind.toLowerCase()} objects in ${where} changed since revision ` +
      `${g.since} (one is at revision ${newest}); please look again and retry`,
  );
}
