/**
 * Who writes which part of an AgentSession's status, declared (like server-side apply's field
 * managers). Three reconcilers write the one status object, each computing from what it read:
 * the session reconciler (the lifecycle and what it observed), the assessment reconciler
 * (detector, breaker, its consumer position) and the judge (the last evaluation). Their top-level
 * fields are disjoint, so their merged writes (client/status.ts) never undo each other.
 *
 * `conditions` is the one shared field: a list keyed by condition type that writes merge entry by
 * entry (its x-kubernetes-list-map-keys). CONDITION_OWNERS names the condition types the
 * assessment reconciler and the judge may change; the session reconciler also writes Escalated
 * (by hand, or cleared on a new run), and the runtime writes Reconciled on every kind.
 */
import type { AgentSessionStatus } from './session.js';

export const STATUS_FIELDS = {
  session: [
    'observedGeneration',
    'phase',
    'run',
    'restarts',
    'lastStart',
    'tmuxSession',
    'workspace',
    'workdir',
    'startTime',
    'completionTime',
    'nextRestartTime',
    'deadlineTime',
    'stopRequestTime',
    'exitCode',
    'reason',
    'message',
    'lastOutput',
    'headBefore',
    'git',
    'result',
    'lifecycle',
    'agent',
    'context',
    'usage',
    'report',
    'handoff',
    'messageDelivery',
    'promptDelivery',
    'pause',
    'frozen',
  ],
  scheduler: ['binding'],
  assessment: ['detector', 'breaker', 'assessment'],
  judge: ['lastEvaluation'],
} as const satisfies Record<string, readonly (keyof AgentSessionStatus)[]>;

/** Fields every manager may write: merged per entry, not owned whole. */
export const SHARED_STATUS_FIELDS = ['conditions'] as const satisfies readonly (keyof AgentSessionStatus)[];

export type StatusManager = keyof typeof STATUS_FIELDS;
export type OwnedField<M extends StatusManager> = (typeof STATUS_FIELDS)[M][number];
type SharedField = (typeof SHARED_STATUS_FIELDS)[number];

/** The part of AgentSessionStatus manager M owns. */
export type OwnedStatus<M extends StatusManager> = Pick<AgentSessionStatus, OwnedField<M>>;

/**
 * What manager M writes: any of its fields (a field given as undefined is removed, one left out
 * is left as it is) and, optionally, the conditions as it wants them (merged per type against
 * what it read).
 */
export type StatusPatch<M extends StatusManager> = {
  [K in OwnedField<M>]?: AgentSessionStatus[K] | undefined;
} & Pick<AgentSessionStatus, SharedField>;

/** Condition types only these managers change (a write of another type by them is a bug). */
export const CONDITION_OWNERS: Partial<Record<StatusManager, readonly string[]>> = {
  assessment: ['BreakerOpen'],
  judge: ['JudgeFailed', 'Escalated'],
};

// ---- compile-time checks: the field sets are disjoint and cover AgentSessionStatus ---------------

type Others<M extends StatusManager> = Exclude<StatusManager, M>;
/** Fields claimed by two managers (never when the sets are disjoint). */
type Overlap = { [M in StatusManager]: OwnedField<M> & OwnedField<Others<M>> }[StatusManager];
/** Status fields no manager owns (never when the sets cover the status). */
type Unowned = Exclude<keyof AgentSessionStatus, OwnedField<StatusManager> | SharedField>;
type Check<T> = [T] extends [never] ? true : { error: T };
export const STATUS_FIELDS_DISJOINT: Check<Overlap> = true;
export const STATUS_FIELDS_COVER: Check<Unowned> = true;

/** Every manager (a mapped type, so one added to STATUS_FIELDS must be added here). */
const MANAGERS: { [M in StatusManager]: M } = {
  session: 'session',
  assessment: 'assessment',
  judge: 'judge',
  scheduler: 'scheduler',
};

/** The manager that owns a top-level status field (undefined for shared and unknown fields). */
export const ownerOf = (field: string): StatusManager | undefined =>
  Object.values(MANAGERS).find((m) => {
    const owned: readonly string[] = STATUS_FIELDS[m];
    return owned.includes(field);
  });

/**
 * Manager M's part of a whole status: every field it owns (undefined where `status` has none, so
 * a field it dropped is removed) plus the conditions.
 */
export function ownedBy<M extends StatusManager>(manager: M, status: AgentSessionStatus): StatusPatch<M> {
  const out: Record<string, unknown> = status.conditions ? { conditions: status.conditions } : {};
  for (const f of STATUS_FIELDS[manager]) out[f] = status[f];
  return out as StatusPatch<M>;
}
