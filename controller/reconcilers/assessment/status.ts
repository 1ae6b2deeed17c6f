/**
 * How the assessment state is kept in an AgentSession's status, in three top-level fields that
 * only the assessment reconciler writes (so its merged status writes never collide):
 *  - status.detector: EMAs, message counts, counts per signal, the last signals, the trajectory;
 *  - status.breaker: the breaker's state and counters (times as RFC 3339), thresholds in force,
 *    interventions made;
 *  - status.assessment: the consumer position in the event log, the open checkpoint segment,
 *    the turn in progress and a pending intervention.
 * The position is written in the same status write as everything derived from the events before
 * it: that is what makes consumption exactly-once across a controller kill -9.
 */
import type { LogPosition } from '../../store/eventlog.js';
import type { AssessmentState, RunSummary } from './assess.js';
import { BREAKER_STATES, type BreakerContext, type BreakerStateName } from './breaker.js';
import type { CheckpointState } from './checkpoints.js';
import type { InterventionType } from './config.js';
import type { DetectorState } from './detector.js';

export interface InterventionRecord {
  id: string;
  type: InterventionType;
  why: string;
  /** Seq of the event that tripped the breaker. */
  seq: number;
  decidedTime: string;
  delivered: boolean;
  /** Delivered, DeliveredBeforeRestart, NotRunning, Observe, Stale, Superseded, or the sender's reason. */
  result: string;
  message?: string;
  deliveredTime?: string;
  retries?: number;
}

export interface PendingIntervention {
  id: string;
  type: InterventionType;
  why: string;
  text: string;
  seq: number;
  decidedTime: string;
  /** A position at or before the tripping event (to look for the text coming back). */
  from: LogPosition;
  /** Set just before a delivery attempt: after a crash, the attempt may have landed. */
  attemptTime?: string;
}

export interface BreakerStatus {
  state: BreakerStateName;
  reason?: InterventionType;
  message?: string;
  openedTime?: string;
  trips: number;
  consecutiveFailures: number;
  correctionTimes: string[];
  frustrationEma: number;
  noProgressTurns: number;
  turnFailures: number;
  thresholds?: Record<string, unknown>;
  /** Interventions decided in this session (sent or not: the history says which). */
  interventions: number;
  lastInterventionTime?: string;
  history: InterventionRecord[];
}

export interface AssessmentStatus {
  run: number;
  position: LogPosition;
  policy?: string;
  turn: AssessmentState['turn'];
  gitMark?: string;
  checkpoints: CheckpointState;
  pendingIntervention?: PendingIntervention;
  previousRun?: RunSummary;
  lastUpdateTime?: string;
}

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
  const state = BREAKER_STATES.includes(b?.state as BreakerStateName) ? (b!.state as BreakerStateName) : 'Closed';
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
export function stateFromStatus(st: Record<string, unknown> | undefined): AssessmentState | undefined {
  const a = st?.assessment as AssessmentStatus | undefined;
  const d = st?.detector as DetectorState | undefined;
  if (!a?.position || !d || typeof d.run !== 'number') return undefined;
  return {
    detector: structuredClone(d),
    breaker: breakerFromStatus(st?.breaker as BreakerStatus | undefined),
    checkpoints: structuredClone(a.checkpoints),
    turn: { ...(a.turn ?? { activity: false, progress: false, count: 0 }) },
    ...(a.gitMark !== undefined ? { gitMark: a.gitMark } : {}),
    ...(a.previousRun ? { previousRun: structuredClone(a.previousRun) } : {}),
  };
}

/** Fingerprint of status.git: changes when HEAD, the commit count or the files changed do. */
export function gitFingerprint(
  git: { head?: string; commits?: number; filesChanged?: number; insertions?: number; deletions?: number } | undefined,
): string | undefined {
  if (!git) return undefined;
  return [git.head ?? '', git.commits ?? 0, git.filesChanged ?? 0, git.insertions ?? 0, git.deletions ?? 0].join(':');
}
