/**
 * The assessment reconciler's part of an AgentSession's status (docs/assessment.md), and the
 * vocabulary metrics and the CLI read it with. Three top-level fields, written only by that
 * reconciler (api/status-fields.ts):
 *  - status.detector: EMAs, message counts, counts per signal, the last signals, the trajectory;
 *  - status.breaker: the breaker's state and counters (times as RFC 3339), thresholds in force,
 *    interventions made;
 *  - status.assessment: the consumer position in the event log, the open checkpoint segment,
 *    the turn in progress and a pending intervention.
 */
import type { LogPosition } from './log-position.js';

// ---- detector -------------------------------------------------------------------------------

export const SIGNALS = [
  'Frustration',
  'Satisfaction',
  'UserCorrection',
  'ToolRejected',
  'TestFailure',
  'TestSuccess',
  'BuildFailure',
  'BuildSuccess',
  'LintError',
  'LintSuccess',
  'ToolFailure',
  'Commit',
] as const;
export type Signal = (typeof SIGNALS)[number];

export type SignalRecord = {
  signal: Signal;
  /** Event seq in the session log. */
  seq: number;
  /** Message index in the run (1-based count of user and assistant messages and tool calls so far). */
  msg: number;
  at: string;
  detail?: string;
};

/** status.detector. */
export type DetectorState = {
  run: number;
  /** Events of this run taken. */
  events: number;
  /** User and assistant messages, tool calls included (the transcript's numbering). */
  messages: number;
  userMessages: number;
  frustrationEma: number;
  /** undefined until the first outcome. */
  successEma?: number;
  counts: Partial<Record<Signal, number>>;
  lastSignals: SignalRecord[];
  /**
   * Frustration EMA after each scored user message, compacted to at most TRAJECTORY points (each
   * the max over `stride` messages).
   */
  trajectory: { stride: number; points: number[]; acc?: number; n?: number };
  lastEventTime?: string;
};

/** The trajectory including a partly filled last point. */
export function trajectoryPoints(s: Pick<DetectorState, 'trajectory'>): number[] {
  const t = s.trajectory;
  return t.acc !== undefined ? [...t.points, t.acc] : [...t.points];
}

// ---- circuit breaker ------------------------------------------------------------------------

export const BREAKER_STATES = ['Closed', 'Open', 'HalfOpen'] as const;
export type BreakerStateName = (typeof BREAKER_STATES)[number];

const BREAKER_STATE_NAMES: readonly string[] = BREAKER_STATES;
export const isBreakerState = (s: unknown): s is BreakerStateName =>
  typeof s === 'string' && BREAKER_STATE_NAMES.includes(s);

export const INTERVENTION_TYPES = ['ClarificationPause', 'ApproachPivot', 'ExplicitCheckIn'] as const;
export type InterventionType = (typeof INTERVENTION_TYPES)[number];

export type InterventionRecord = {
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
};

export type PendingIntervention = {
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
};

/** The thresholds in force, as status shows them (durations in seconds). */
export type BreakerThresholdsStatus = {
  failureThreshold: number;
  correctionThreshold: number;
  correctionWindowSeconds: number;
  frustrationThreshold: number;
  noProgressTurns: number;
  cooldownSeconds: number;
};

/** status.breaker. */
export type BreakerStatus = {
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
  thresholds?: BreakerThresholdsStatus;
  /** Interventions decided in this session (sent or not: the history says which). */
  interventions: number;
  lastInterventionTime?: string;
  history: InterventionRecord[];
};

// ---- checkpoints ----------------------------------------------------------------------------

export type CheckpointTrigger = 'message-count' | 'task-boundary' | 'git-commit' | 'time' | 'session-end' | 'run-end';

export type CheckpointState = {
  /** Checkpoints taken in this session (all runs). */
  count: number;
  /** The current segment: a log position at or before its first event, and that event's seq. */
  segmentFrom: LogPosition;
  segmentStartSeq: number;
  segmentStartTime?: string;
  segmentMessages: number;
  /** Message index (detector numbering) of the segment's first message. */
  segmentFirstMsg: number;
  lastSeq?: number;
  lastTime?: string;
  lastSummary?: string;
};

/** One line of the session's checkpoints.jsonl (store/checkpoints.ts). */
export type CheckpointRecord = {
  /** Seq of the last event of the segment (the idempotency key). */
  seq: number;
  run: number;
  trigger: CheckpointTrigger;
  /** Event time of the segment's end. */
  time: string;
  fromSeq: number;
  /** Message indices (detector numbering) the segment spans. */
  firstMsg: number;
  lastMsg: number;
  title: string;
  summary: string;
  attempted?: string[];
  failures?: string[];
  successes?: string[];
  commits?: string[];
  /** Which backend wrote the summary (offline, or the judge's). */
  backend: string;
  model?: string;
  /** Set when the configured backend failed and the offline summary stands in. */
  fallback?: string;
};

// ---- status.assessment ----------------------------------------------------------------------

/** The turn in progress: whether anything happened and whether it made progress. */
export type TurnState = {
  activity: boolean;
  progress: boolean;
  count: number;
  /** Event time of the open turn's first activity. */
  startedAt?: string;
  /** The run's transcript is read: a Stop hook then waits for its turn's last transcript lines. */
  transcript?: boolean;
  /** Stop hooks waiting for the transcript to pass their time (or for the grace to run out), oldest first. */
  stops?: { ts: string; seq: number }[];
};

/** What a run came to (sampling decides about it after the next run began). */
export type RunSummary = {
  run: number;
  messages: number;
  counts: DetectorState['counts'];
  frustrationEma: number;
  trips: number;
};

/** status.assessment. */
export type AssessmentStatus = {
  run: number;
  position: LogPosition;
  policy?: string;
  turn: TurnState;
  gitMark?: string;
  checkpoints: CheckpointState;
  pendingIntervention?: PendingIntervention;
  previousRun?: RunSummary;
  lastUpdateTime?: string;
};
