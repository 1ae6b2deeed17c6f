/**
 * The Autopilot and Decision kinds (issue 13; seed 002 is the specification; crds/autopilots.yaml
 * and crds/decisions.yaml are the schemas).
 *
 * An Autopilot plans over the Projects it selects and changes desired state only: it creates
 * AgentSessions, sets `desiredState: Stopped`, or stamps the restart annotation — with the same
 * validation and compare-and-swap as a person's apply. Every choice is a Decision object that can
 * be read, approved or rejected. It never writes its own spec (so it cannot change its own
 * autonomy level) and never touches a kind other than AgentSession, Project status, Decision and
 * Event.
 */
import type { AutopilotSchemaSpec, AutopilotSchemaStatus } from './generated/autopilot.js';
import type { DecisionSchemaSpec, DecisionSchemaStatus } from './generated/decision.js';
import type { JudgePolicy } from './session-policy.js';
import type { LabelSelectorSpec } from './labels.js';
import type { Resource } from './types.js';

export const AUTONOMY_LEVELS = ['observe', 'cautious', 'moderate', 'full'] as const;
export type AutonomyLevel = (typeof AUTONOMY_LEVELS)[number];

export const AUTOPILOT_ACTIONS = ['start', 'stop', 'restart', 'notify', 'skip'] as const;
export type AutopilotAction = (typeof AUTOPILOT_ACTIONS)[number];

/** The planner: the heuristic one (offline, deterministic), or an LLM backend configured like the judge. */
export type PlannerSpec = Omit<JudgePolicy, 'enabled' | 'maxConcurrent'>;

export type AutopilotGuardrails = {
  /** The actions it may take at all (default: all five). An action not listed is Rejected (Allowlist). */
  actions?: AutopilotAction[];
  cooldowns?: {
    /** No second start/stop/restart of one project within this (default 10m). */
    sameProject?: string;
    /** No second action of one kind within this, any project (default 5m). */
    sameAction?: string;
  };
  /** Projects it leaves alone (no start, stop or restart), beside those with spec.protected. */
  protectedProjects?: LabelSelectorSpec;
  /** A session running for less than this is not stopped or restarted unless its run failed (default 30m). */
  youngSessionWindow?: string;
  /** Recovery restarts per project within errorRetryWindow before it escalates (default 3). */
  maxErrorRetries?: number;
  /**
   * Continuations of runs stopped at their time box (class TimeBox) per project within
   * errorRetryWindow (default 3), counted apart from maxErrorRetries.
   */
  maxTimeBoxContinuations?: number;
  /** The window the error retries are counted in (default 24h). */
  errorRetryWindow?: string;
  /** A project idle longer than this many days is stale (default: each Project's spec.staleAfter, itself 72h). */
  stalenessDays?: number;
  /** No start when the Node reports less free memory than this (default: the session policy's, else 2048). */
  minFreeMemoryMB?: number;
  /** No start when this many of the selected projects' sessions are active (default 4). */
  maxActiveSessions?: number;
  /** At most this many starts per think (default 1). */
  maxStartsPerThink?: number;
};

/** What a start creates: the AgentSession's fields besides project, prompt and name. */
export type AutopilotSessionTemplate = {
  agentRef?: string;
  policyRef?: string;
  maxDuration?: string;
  labels?: Record<string, string>;
};

export type AutopilotSpec = AutopilotSchemaSpec;

export type ApprovalDefault = 'proceed' | 'reject';
/**
 * The default action when nobody answers: seed 002's "reply within 5 min or it will proceed" for
 * a stop and a recovery restart; anything else is dropped.
 */
export const APPROVAL_DEFAULTS: { timeout: string; onTimeout: Record<AutopilotAction, ApprovalDefault> } = {
  timeout: '1h',
  onTimeout: { start: 'reject', stop: 'proceed', restart: 'proceed', notify: 'reject', skip: 'reject' },
};

export type ThinkTrigger = 'interval' | 'session-ended' | 'escalation' | 'evaluation' | 'approval' | 'spec' | 'start';

export type DecisionCounts = Partial<Record<DecisionPhase, number>>;

export type AutopilotStatus = AutopilotSchemaStatus;

export type Autopilot = Resource<AutopilotSpec, AutopilotStatus>;

// ---- Decision -------------------------------------------------------------------------------

/**
 * - `Executed`: desired state was changed (status.result says how);
 * - `PendingApproval`: the gate wants a person (`orchctl approve|reject decision`);
 * - `Logged`: recorded only (observe level, skip);
 * - `Rejected`: a guardrail or a person refused it (status.guardrail names which);
 * - `Superseded`: what it was decided on changed before it executed; the next think re-plans;
 * - `Failed`: the write failed for another reason (status.message);
 * - `Expired`: nobody answered within spec.approval.timeout; its default action was taken
 *   (status.message says which; executedAt and result are set when it proceeded).
 */
export const DECISION_PHASES = [
  'Executed',
  'PendingApproval',
  'Logged',
  'Rejected',
  'Superseded',
  'Failed',
  'Expired',
] as const;
export type DecisionPhase = (typeof DECISION_PHASES)[number];

/** Guardrails and checks a Decision can be refused by (status.guardrail). */
export const GUARDRAILS = [
  'Allowlist',
  'UnknownTarget',
  'Blocked',
  'ProtectedProject',
  'SameProjectCooldown',
  'SameActionCooldown',
  'YoungSession',
  'MaxErrorRetries',
  'ResourceFloor',
  'AlreadyRunning',
  'NotRunning',
  'Paused',
  'Person',
] as const;
export type Guardrail = (typeof GUARDRAILS)[number];

/** seed 002 §2.4: how a failed run is classified. */
export const ERROR_CLASSES = ['Transient', 'Dependency', 'Auth', 'Logic', 'TimeBox', 'Unknown'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** An object the decision read, at the version it read. */
export type SnapshotRef = {
  kind: string;
  name: string;
  resourceVersion: string;
  generation?: number;
  /** For a session: the run it was on. */
  run?: number;
};

export type DecisionSpec = DecisionSchemaSpec;

export type DecisionStatus = DecisionSchemaStatus;

export type Decision = Resource<DecisionSpec, DecisionStatus>;

/** Labels on what an autopilot creates, and on its Decisions. */
export const AUTOPILOT_LABEL = 'orchctl.io/autopilot';
export const DECISION_LABEL = 'orchctl.io/decision';
export const PROJECT_LABEL = 'orchctl.io/project';
export const ACTION_LABEL = 'orchctl.io/action';
/**
 * The restart annotation (like kubectl's `kubectl.kubernetes.io/restartedAt`): a new value asks the
 * session reconciler for a new run — the current one is stopped first. Written by the autopilot's
 * restart and by `orchctl restart session`.
 */
export const RESTARTED_AT_ANNOTATION = 'orchctl.io/restartedAt';
/**
 * Beside it, from each of its writers: who asked for the new run (api/session.ts RESTART_REASONS),
 * which becomes the reason of the run's start (status.lastStart). Written in the same update.
 */
export const RESTART_REASON_ANNOTATION = 'orchctl.io/restart-reason';
/** Beside it, from the autopilot: the note for the new run's prompt (a recovery restart names the error). */
export const RESTART_NOTE_ANNOTATION = 'orchctl.io/restart-note';
/** The Decision that created or restarted a session. */
export const DECISION_ANNOTATION = 'orchctl.io/decision';

// ---- Project.status.errorRetries (written by the autopilot) -------------------------------------

export type ErrorRetries = {
  /** Recovery restarts in the current window (TimeBox continuations are in timeBoxes). */
  count: number;
  /** Continuations of runs stopped at their time box in the current window. */
  timeBoxes?: number;
  windowStart: string;
  /** The last failed run it looked at (so one failure is counted once). */
  lastFailure?: { session: string; run: number; class: ErrorClass; at: string };
  /** Set when it stopped retrying (Auth/Unknown, or count reached maxErrorRetries). */
  escalated?: { reason: string; at: string };
};

export const DEFAULTS = {
  interval: '5m',
  sameProject: '10m',
  sameAction: '5m',
  youngSessionWindow: '30m',
  maxErrorRetries: 3,
  maxTimeBoxContinuations: 3,
  errorRetryWindow: '24h',
  /** The time box of a session it starts when neither its template nor its policy sets one (seed 002 §2.7). */
  maxDuration: '45m',
  minFreeMemoryMB: 2048,
  maxActiveSessions: 4,
  maxStartsPerThink: 1,
  keep: 50,
  ttl: '168h',
} as const;
