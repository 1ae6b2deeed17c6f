/**
 * Status writes by several reconcilers on one object. The session reconciler, the assessment
 * reconciler (detector, breaker) and the judge each own some of an AgentSession's status
 * (api/status-fields.ts); each computes its new status from the object it read, and a write must
 * not undo what another wrote in between. So a write is a three-way merge: of what this writer
 * changed since it read (`base` → `mine`), applied to what the store holds now (`theirs`), field
 * by field and condition by condition, with compare-and-swap and a retry on Conflict.
 *
 * Fencing (several nodes): an AgentSession's writers work for the node its status.binding names,
 * at that binding's epoch. A retry after a Conflict goes on only while the binding is the one the
 * writer read; otherwise the session was moved (or its node lost) meanwhile, and what this writer
 * computed belongs to a run it no longer owns: the write fails with a fenced Conflict instead.
 *
 * Events: the Events that tell of the transition a write makes go in the same transaction
 * ({@link WithEvents}; client/events.ts), so a crash never leaves one without the other.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, isApiError } from '../api/errors.js';
import type { AgentSession, AgentSessionStatus } from '../api/session.js';
import {
  CONDITION_OWNERS,
  ownerOf,
  STATUS_FIELDS,
  type StatusManager,
  type StatusPatch,
} from '../api/status-fields.js';
import { keyOf, type Condition, type Resource } from '../api/types.js';
import { retryOnConflict } from '../store/retry.js';
import { isFenced, type Store } from '../store/store.js';
import { type EventNote, type EventRecorder, isEventRace } from './events.js';

/**
 * The Events of the transition a status write makes, written in its transaction. Written alone
 * when the status turns out unchanged (then they tell of no transition of the status).
 */
export interface WithEvents {
  recorder: Pick<EventRecorder, 'ops'>;
  events: readonly EventNote[];
}

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
  stillMine?: (cur: Resource) => string | undefined,
  withEvents?: WithEvents,
): Promise<T | undefined> {
  const base: Status | undefined = read.status;
  const wanted: Status = JSON.parse(JSON.stringify(mine));
  const events = withEvents?.events.length ? withEvents : undefined;
  // A fence (a lease or a binding not held) is not a stale read: no retry helps.
  const stale = (e: unknown) =>
    !isFenced(e) && !isBindingFenced(e) && (isApiError(e, 'Conflict') || (!!events && isEventRace(e)));
  let cur: Resource | undefined = read;
  try {
    return await retryOnConflict(
      async (i) => {
        if (i > 0) cur = await store.get(keyOf(read));
        if (!cur) return undefined;
        const lost = i === 0 ? undefined : stillMine?.(cur);
        if (lost) throw fencedByBinding(read, lost);
        const merged = i === 0 ? wanted : mergeStatus(base, wanted, cur.status);
        return writeMergedOnce(store, read, cur, merged, i > 0 && !isDeepStrictEqual(base, merged), events);
      },
      { attempts, retryOn: stale },
    );
  } catch (e) {
    if (!stale(e)) throw e;
    if (!(await store.get(keyOf(read)))) return undefined;
    throw new Error(`status of ${read.kind} ${read.metadata.name}: still conflicting after ${attempts} attempts`);
  }
}

/** One write of `merged` over `cur`; `retold`: a retry whose change, if already stored, needs no Event again. */
async function writeMergedOnce<T extends Resource>(
  store: Store,
  read: T,
  cur: Resource,
  merged: Status,
  retold: boolean,
  events: WithEvents | undefined,
): Promise<T> {
  const same = isDeepStrictEqual(cur.status, merged);
  if (same && !events) return sameKind(read, cur);
  // A retry finds the change these Events tell of already stored: the write that stored it (this
  // writer's from a stale read, e.g. an informer copy older than its own last write) told them.
  if (same && retold) return sameKind(read, cur);
  if (!events) return sameKind(read, await store.updateStatus({ ...cur, status: merged }));
  const notes = await events.recorder.ops(cur, events.events);
  if (same) {
    await store.txn(notes);
    return sameKind(read, cur);
  }
  const [stored] = await store.txn([{ op: 'updateStatus', object: { ...cur, status: merged } }, ...notes]);
  return sameKind(read, stored);
}

/** The cause a Conflict carries when the session's binding changed under a writer (see the file's comment). */
export const BINDING_CHANGED = 'BindingChanged';

/** A status write refused because the session is no longer bound where (or at the epoch) the writer read it. */
export const isBindingFenced = (e: unknown): boolean =>
  isApiError(e, 'Conflict') &&
  e.causes.some((c) => c.field === 'status.binding' && c.message.startsWith(BINDING_CHANGED));

/** The Conflict of a write for a session that is not (or no longer) bound where the writer read it. */
export function fencedByBinding(read: Resource, why: string): ApiError {
  return new ApiError(
    'Conflict',
    `Operation cannot be fulfilled on ${read.kind} ${read.metadata.name}: ${why}; ` +
      "the run this write was computed for is no longer this writer's",
    [{ field: 'status.binding', message: `${BINDING_CHANGED}: ${why}` }],
  );
}

type Binding = AgentSessionStatus['binding'];
const bindingText = (b: Binding) => (b ? `node ${b.nodeName} (epoch ${b.epoch})` : 'no node');

/** Why `cur`'s binding is not the one `read` had (a different node or epoch), or undefined when it is. */
export function bindingChanged(read: AgentSession, cur: Resource): string | undefined {
  const was = read.status?.binding;
  const now = (cur.status as AgentSessionStatus | undefined)?.binding;
  if (was?.nodeName === now?.nodeName && was?.epoch === now?.epoch) return undefined;
  return `bound to ${bindingText(now)}, was ${bindingText(was)}`;
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
  withEvents?: WithEvents,
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
  return writeStatusMerged(store, read, mine, attempts, (cur) => bindingChanged(read, cur), withEvents);
}
