/**
 * Status writes by several reconcilers on one object. The session reconciler, the assessment
 * reconciler (detector, breaker) and the judge each own some of an AgentSession's status; each
 * computes its new status from the object it read, and a write must not undo what another wrote
 * in between. So a write is a three-way merge: of what this writer changed since it read
 * (`base` → `mine`), applied to what the store holds now (`theirs`), field by field and
 * condition by condition, with compare-and-swap and a retry on Conflict.
 */
import { isDeepStrictEqual } from 'node:util';
import { isApiError } from '../api/errors.js';
import type { Condition, Resource } from '../api/types.js';
import type { Store } from '../store/store.js';

type Status = Record<string, unknown> & { conditions?: Condition[] };

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
  const baseConds = new Map((b.conditions ?? []).map((c) => [c.type, c]));
  const mineConds = new Map((mine.conditions ?? []).map((c) => [c.type, c]));
  const conds = [...(out.conditions ?? [])];
  for (const type of new Set([...baseConds.keys(), ...mineConds.keys()])) {
    const before = baseConds.get(type);
    const after = mineConds.get(type);
    if (isDeepStrictEqual(before, after)) continue;
    const i = conds.findIndex((c) => c.type === type);
    if (after === undefined) {
      if (i >= 0) conds.splice(i, 1);
    } else if (i >= 0) conds[i] = structuredClone(after);
    else conds.push(structuredClone(after));
  }
  if (conds.length || out.conditions) out.conditions = conds;
  return out;
}

/**
 * Writes `mine` as the status of `read` (the object as this writer read it), merged onto the
 * current object. JSON-normalised first: a status carrying undefined keys never compares equal
 * after a store round trip. Returns the stored object, or undefined when it is gone.
 */
export async function writeStatusMerged<T extends Resource>(
  store: Store,
  read: T,
  mine: Status,
  attempts = 8,
): Promise<T | undefined> {
  const base = read.status as Status | undefined;
  const wanted = JSON.parse(JSON.stringify(mine)) as Status;
  let cur: T | undefined = read;
  for (let i = 0; i < attempts && cur; i++) {
    const merged = i === 0 ? wanted : mergeStatus(base, wanted, cur.status as Status | undefined);
    if (isDeepStrictEqual(cur.status, merged)) return cur;
    try {
      return (await store.updateStatus({ ...cur, status: merged })) as T;
    } catch (e) {
      if (!isApiError(e, 'Conflict')) throw e;
      cur = (await store.get({
        kind: read.kind,
        namespace: read.metadata.namespace ?? '',
        name: read.metadata.name,
      })) as T | undefined;
    }
  }
  if (cur)
    throw new Error(`status of ${read.kind} ${read.metadata.name}: still conflicting after ${attempts} attempts`);
  return undefined;
}
