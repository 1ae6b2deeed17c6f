/**
 * Status writes by several reconcilers on one object. The session reconciler, the assessment
 * reconciler (detector, breaker) and the judge each own some of an AgentSession's status
 * (api/status-fields.ts); each computes its new status from the object it read, and a write must
 * not undo what another wrote in between. So a write is a three-way merge: of what this writer
 * changed since it read (`base` → `mine`), applied to what the store holds now (`theirs`), field
 * by field and condition by condition, with compare-and-swap and a retry on Conflict.
 */
import { isDeepStrictEqual } from 'node:util';
import { isApiError } from '../api/errors.js';
import type { AgentSession, AgentSessionStatus } from '../api/session.js';
import {
  CONDITION_OWNERS,
  ownerOf,
  STATUS_FIELDS,
  type StatusManager,
  type StatusPatch,
} from '../api/status-fields.js';
import { keyOf, type Condition, type Resource } from '../api/types.js';
import type { Store } from '../store/store.js';

/** Any kind's status, as far as the merge is concerned: top-level fields and a condition list. */
type Status = { [field: string]: unknown; conditions?: Condition[] };

/** `theirs` plus every top-level field and condition that `mine` changed relative to `base`. */
export function mergeStatus(base: Status | undefined, mine: Status, theirs: Status | undefined): Status {
  const b = base ?? {};
  const out: Status = structuredClone(theirs ?? {});
  for (const k of new Set([...Object.keys(b), ...Object.keys(mine)])) {
    if (k === 'conditions') continue;
    if (isDeepStrictEqual(b[k], mine[k])) continue;
    if (mine[k] === undefined) delete out[k];
    else out[k] = structuredClone(mine[k]);
  }
  const mineConds = new Map((mine.conditions ?? []).map((c) => [c.type, c]));
  const conds = [...(out.conditions ?? [])];
  for (const type of changedConditions(b, mine)) {
    const after = mineConds.get(type);
    const i = conds.findIndex((c) => c.type === type);
    if (after === undefined) {
      if (i >= 0) conds.splice(i, 1);
    } else if (i >= 0) conds[i] = structuredClone(after);
    else conds.push(structuredClone(after));
  }
  if (conds.length || out.conditions) out.conditions = conds;
  return out;
}

/** The condition types `mine` added, changed or removed relative to `base`. */
function changedConditions(base: Status, mine: Status): string[] {
  const before = new Map((base.conditions ?? []).map((c) => [c.type, c]));
  const after = new Map((mine.conditions ?? []).map((c) => [c.type, c]));
  return [...new Set([...before.keys(), ...after.keys()])].filter(
    (t) => !isDeepStrictEqual(before.get(t), after.get(t)),
  );
}

/**
 * Writes `mine` as the status of `read` (the object as this writer read it), merged onto the
 * current object. JSON-normalised first: a status carrying undefined keys never compares equal
 * after a store round trip. Returns the stored object, or undefined when it is gone.
 *
 * For kinds with one status writer (Project, Node) and the runtime's Reconciled condition. The
 * writers of an AgentSession use {@link writeOwnedStatus}, which checks field ownership.
 */
export async function writeStatusMerged<T extends Resource>(
  store: Store,
  read: T,
  mine: Status,
  attempts = 8,
): Promise<T | undefined> {
  const base: Status | undefined = read.status;
  const wanted: Status = JSON.parse(JSON.stringify(mine));
  let cur: Resource | undefined = read;
  for (let i = 0; i < attempts && cur; i++) {
    const merged = i === 0 ? wanted : mergeStatus(base, wanted, cur.status);
    if (isDeepStrictEqual(cur.status, merged)) return sameKind(read, cur);
    try {
      return sameKind(read, await store.updateStatus({ ...cur, status: merged }));
    } catch (e) {
      if (!isApiError(e, 'Conflict')) throw e;
      cur = await store.get(keyOf(read));
    }
  }
  if (cur)
    throw new Error(`status of ${read.kind} ${read.metadata.name}: still conflicting after ${attempts} attempts`);
  return undefined;
}

/** The store hands back what was stored under `read`'s key: the same kind, so the same type. */
const sameKind = <T extends Resource>(_read: T, stored: Resource): T => stored as T;

/**
 * Writes manager `manager`'s part of an AgentSession's status: `patch` holds only fields it owns
 * (api/status-fields.ts; a field given as undefined is removed, one left out stays as it is) and,
 * optionally, the conditions as it wants them, merged per type against what it read. A field or
 * condition type that belongs to another writer is an error, not a silent overwrite.
 */
export async function writeOwnedStatus<M extends StatusManager>(
  store: Store,
  read: AgentSession,
  manager: M,
  patch: StatusPatch<M>,
  attempts = 8,
): Promise<AgentSession | undefined> {
  const base: AgentSessionStatus = read.status ?? {};
  const what = `AgentSession ${read.metadata.name}`;
  const owned: readonly string[] = STATUS_FIELDS[manager];
  for (const field of Object.keys(patch)) {
    if (field === 'conditions' || owned.includes(field)) continue;
    const owner = ownerOf(field);
    const why = owner ? `owned by the ${owner} writer` : 'not a status field';
    throw new Error(`status.${field} of ${what}: ${why}, not written by the ${manager} writer`);
  }
  const mine: Status = { ...base, ...patch };
  if (!patch.conditions) mine.conditions = base.conditions;
  const only = CONDITION_OWNERS[manager];
  const foreign = only ? changedConditions(base, mine).filter((t) => !only.includes(t)) : [];
  if (foreign.length)
    throw new Error(
      `conditions ${foreign.join(', ')} of ${what}: the ${manager} writer writes only ${only?.join(', ')}`,
    );
  return writeStatusMerged(store, read, mine, attempts);
}
