/**
 * How the assessment state is kept in an AgentSession's status (the types are in
 * api/assessment.ts), in three top-level fields that only the assessment reconciler writes
 * (api/status-fields.ts, so its merged status writes never collide):
 *  - status.detector: EMAs, message counts, counts per signal, the last signals, the trajectory;
 *  - status.breaker: the breaker's state and counters (times as RFC 3339), thresholds in force,
 *    interventions made;
 *  - status.assessment: the consumer position in the event log, the open checkpoint segment,
 *    the turn in progress and a pending intervention.
 * The position is written in the same status write as everything derived from the events before
 * it: that is what makes consumption exactly-once across a controller kill -9.
 */
import { isBreakerState, type BreakerStatus } from '../../api/assessment.js';
import type { AgentSessionStatus, GitStatus } from '../../api/kinds.js';
import type { AssessmentState } from './assess.js';
import type { BreakerContext, BreakerStateName } from './breaker.js';

export type {
  AssessmentStatus,
  BreakerStatus,
  InterventionRecord,
  PendingIntervention,
} from '../../api/assessment.js';

export const HISTORY = 10;

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (s: string | undefined) => (s ? Date.parse(s) : undefined);

export function breakerToStatus(
  state: BreakerStateName,
  c: BreakerContext,
  prev: BreakerStatus | undefined,
): BreakerStatus {
  const out: BreakerStatus = {
    state,
    trips: c.trips,
    consecutiveFailures: c.consecutiveFailures,
    correctionTimes: c.corrections.map(iso),
    frustrationEma: c.frustrationEma,
    noProgressTurns: c.noProgressTurns,
    turnFailures: c.turnFailures,
    interventions: prev?.interventions ?? 0,
    history: prev?.history ?? [],
  };
  if (c.reason) out.reason = c.reason;
  if (c.why) out.message = c.why;
  if (c.openedAt !== undefined) out.openedTime = iso(c.openedAt);
  if (prev?.lastInterventionTime) out.lastInterventionTime = prev.lastInterventionTime;
  return out;
}

export function breakerFromStatus(b: Partial<BreakerStatus> | undefined): {
  state: BreakerStateName;
  context: BreakerContext;
} {
  const state: BreakerStateName = isBreakerState(b?.state) ? b.state : 'Closed';
  const context: BreakerContext = {
    consecutiveFailures: b?.consecutiveFailures ?? 0,
    corrections: (b?.correctionTimes ?? []).map((t) => Date.parse(t)).filter((t) => !Number.isNaN(t)),
    frustrationEma: b?.frustrationEma ?? 0,
    noProgressTurns: b?.noProgressTurns ?? 0,
    turnFailures: b?.turnFailures ?? 0,
    trips: b?.trips ?? 0,
  };
  if (b?.reason) context.reason = b.reason;
  if (b?.message) context.why = b.message;
  const opened = ms(b?.openedTime);
  if (opened !== undefined && !Number.isNaN(opened)) context.openedAt = opened;
  return { state, context };
}

/** The assessment state persisted in `status`, or undefined when there is none yet. */
export function stateFromStatus(st: AgentSessionStatus | undefined): AssessmentState | undefined {
  const a = st?.assessment;
  const d = st?.detector;
  if (!a?.position || !d || typeof d.run !== 'number') return undefined;
  return {
    detector: structuredClone(d),
    breaker: breakerFromStatus(st?.breaker),
    checkpoints: structuredClone(a.checkpoints),
    turn: { ...(a.turn ?? { activity: false, progress: false, count: 0 }) },
    ...(a.gitMark !== undefined ? { gitMark: a.gitMark } : {}),
    ...(a.previousRun ? { previousRun: structuredClone(a.previousRun) } : {}),
  };
}

/** Fingerprint of status.git: changes when HEAD, the commit count or the files changed do. */
export function gitFingerprint(git: GitStatus | undefined): string | undefined {
  if (!git) return undefined;
  return [git.head ?? '', git.commits ?? 0, git.filesChanged ?? 0, git.insertions ?? 0, git.deletions ?? 0].join(':');
}

/** The fingerprint status.git has when a run begins at `headBefore` (nothing committed or changed yet). */
export function gitBaseFingerprint(headBefore: string | undefined): string | undefined {
  return headBefore
    ? gitFingerprint({ head: headBefore, commits: 0, filesChanged: 0, insertions: 0, deletions: 0 })
    : undefined;
}
