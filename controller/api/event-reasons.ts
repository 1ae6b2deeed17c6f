/**
 * The registry of every Event reason orchctl records, by name, so that what routes or counts
 * Events (the notifier, metrics, tests, docs/notifications.md) names the same ones the writers use.
 * An Event is recorded only with a reason from here (test/unit/api/event-routing.test.ts scans the
 * writers for a string reason), and each reason has a row in api/event-routing.ts: who must act,
 * the tier, why.
 *
 * Transitions: each tells of a status change and is written in the same store transaction as the
 * change (client/status.ts WithEvents; docs/controller.md "Crash-only"), so it exists exactly
 * when the change is in the store, once. One-offs tell of no status change and are recorded on
 * their own, best-effort (EventRecorder.record).
 */

/** A Pipeline's transitions (reconcilers/pipeline/plan.ts). */
export const PipelineReason = {
  InvalidSpec: 'InvalidSpec',
  PhaseStarted: 'PhaseStarted',
  PhaseSucceeded: 'PhaseSucceeded',
  PhaseFailed: 'PhaseFailed',
  PhaseBlocked: 'PhaseBlocked',
  PhaseResumed: 'PhaseResumed',
  PhaseRecovering: 'PhaseRecovering',
  InvalidReport: 'InvalidReport',
  Resumed: 'Resumed',
  ResumeFailed: 'ResumeFailed',
  ResumeIgnored: 'ResumeIgnored',
  ResumeUnconfirmed: 'ResumeUnconfirmed',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  /** A phase's handoff could not be put in its prompt: told with the status write of its start. */
  HandoffNotAdded: 'HandoffNotAdded',
} as const;

/**
 * An AgentSession's lifecycle transitions (reconcilers/session/plan.ts). A run's end is told with
 * its status.reason (RunEndReason); the context, pause, message and agent-condition steps have
 * theirs below.
 */
export const SessionReason = {
  Started: 'Started',
  Stopping: 'Stopping',
  TimeBoxExceeded: 'TimeBoxExceeded',
  /** A run paused by its SessionPolicy's budget (pause.ts); the policy's own crossing has PolicyReason's. */
  BudgetExceeded: 'BudgetExceeded',
  /** A run ended by a budget with action Stop (its status.reason stays BudgetExceeded). */
  BudgetStopped: 'BudgetStopped',
  BackOff: 'BackOff',
  Escalated: 'Escalated',
  Restarting: 'Restarting',
  NewRun: 'NewRun',
  Completed: 'Completed',
  ContextWindow: 'ContextWindow',
  Deleted: 'Deleted',
  ReportUpdated: 'ReportUpdated',
  ReportBlocked: 'ReportBlocked',
  ReportComplete: 'ReportComplete',
  InvalidReport: 'InvalidReport',
  /** The task prompt did not get in (plan.ts, delivery). */
  PromptNotConfirmed: 'PromptNotConfirmed',
  /** Pauses (pause.ts). */
  Paused: 'Paused',
  Resumed: 'Resumed',
  ResumeFailed: 'ResumeFailed',
  /** A run that replaces one lost with its node (epoch.ts). */
  RunMoved: 'RunMoved',
  NodeRenamed: 'NodeRenamed',
  NodeReady: 'NodeReady',
  NodeLost: 'NodeLost',
  Rescheduled: 'Rescheduled',
  FailedScheduling: 'FailedScheduling',
  /** `orchctl send` and posted messages (messages.ts, cli/commands/send.ts). */
  MessageSent: 'MessageSent',
  MessageNotConfirmed: 'MessageNotConfirmed',
  MessageWaiting: 'MessageWaiting',
} as const;

/**
 * The status.reason of an ended run, which its Event carries (session/plan.ts endReason). A failure
 * text the Agent's detection data knows gives its own reason (manifests/agents: AgentCannotConnect).
 */
export const RunEndReason = {
  Error: 'Error',
  ExitStatusUnknown: 'ExitStatusUnknown',
  CommandNotFound: 'CommandNotFound',
  TimedOut: 'TimedOut',
  Stopped: 'Stopped',
  TmuxSessionLost: 'TmuxSessionLost',
  /** Start failures (actuator.ts, plan.ts). */
  TmuxFailed: 'TmuxFailed',
  AgentNotFound: 'AgentNotFound',
  NoWorkdir: 'NoWorkdir',
  /** The shipped claude-code Agent's failure pattern. */
  AgentCannotConnect: 'AgentCannotConnect',
  /** Hung up by its node's watchdog fuse (the node lost its lease); restarted without counting one. */
  NodeFenced: 'NodeFenced',
} as const;

/** Agent conditions whose turning True is an Event (session/agent-pass.ts EVENT_ON_TRUE). */
export const AgentConditionReason = {
  WaitingForInput: 'WaitingForInput',
  Stalled: 'Stalled',
  QuotaExhausted: 'QuotaExhausted',
} as const;

/** The context-window steps (session/context.ts): a ContextActionType, or its renaming there. */
export const ContextReason = {
  ContextCheckpoint: 'ContextCheckpoint',
  HandoffWritten: 'HandoffWritten',
  HandoffTimedOut: 'HandoffTimedOut',
  CompactSent: 'CompactSent',
  Compacted: 'Compacted',
  CompactFailed: 'CompactFailed',
  ClearSent: 'ClearSent',
  Cleared: 'Cleared',
  Rehydrated: 'Rehydrated',
  AutoCompacted: 'AutoCompacted',
  RestartedWithRehydrate: 'RestartedWithRehydrate',
} as const;

/** The judge and the assessment (reconcilers/judge, reconcilers/assessment). */
export const AssessmentReason = {
  /** A judge's verdict asks for a person (its Escalated condition). */
  JudgeEscalated: 'Escalated',
  Evaluated: 'Evaluated',
  JudgeFailed: 'JudgeFailed',
  BreakerOpen: 'BreakerOpen',
  BreakerHalfOpen: 'BreakerHalfOpen',
  BreakerClosed: 'BreakerClosed',
  InterventionDelivered: 'InterventionDelivered',
  InterventionNotDelivered: 'InterventionNotDelivered',
} as const;

/** A SessionPolicy's budget (reconcilers/policy/plan.ts): the crossing, once, and its end. */
export const PolicyReason = {
  BudgetExceeded: 'BudgetExceeded',
  BudgetAvailable: 'BudgetAvailable',
} as const;

/** Nodes (reconcilers/node, reconcilers/nodelifecycle). */
export const NodeReason = {
  NodeReady: 'NodeReady',
  NodeNotReady: 'NodeNotReady',
  OrphanKilled: 'OrphanKilled',
  OrphanTmuxSession: 'OrphanTmuxSession',
} as const;

/** The notifier about its own channels (reconcilers/notifier). */
export const NotifierReason = {
  NotificationBudget: 'NotificationBudget',
  /** A channel failed to deliver: routed to the other channels (never to itself). */
  NotificationFailed: 'NotificationFailed',
} as const;

/** The autopilot (reconcilers/autopilot). */
export const AutopilotReason = {
  /** What it did or recommends (Normal); a give-up or an auth failure it escalates (Warning). */
  AutopilotNotice: 'AutopilotNotice',
  PlannerFailed: 'PlannerFailed',
  /** A Decision waits for a person's approve/reject. */
  DecisionPending: 'DecisionPending',
  /** A Decision nobody answered within approvalTimeout: its default action was taken. */
  DecisionExpired: 'DecisionExpired',
  /** A run stopped at its time box continues in a new run (class TimeBox, its own retry limit). */
  TimeBoxContinued: 'TimeBoxContinued',
} as const;

/**
 * The emergency stop (docs/freeze.md): on a session when its reconciler takes hold of it or lets it
 * go (with the status.frozen change), on a Project or Autopilot when `orchctl freeze|thaw` marks it.
 */
export const FreezeReason = {
  /** Held: a live run's processes stopped (SIGSTOP), nothing started or sent. Warning. */
  Frozen: 'Frozen',
  /** Let go: the run continues (SIGCONT). Normal. */
  Thawed: 'Thawed',
} as const;

/** Events that tell of no status change, recorded on their own (best-effort). */
export const OneOffReason = {
  PromptSanitized: 'PromptSanitized',
  AutoAnswered: 'AutoAnswered',
  AutoAnswerFailed: 'AutoAnswerFailed',
  ReconcileError: 'ReconcileError',
} as const;

type Values<T> = T[keyof T];

/** Every reason an Event may carry. */
export type EventReason =
  | Values<typeof PipelineReason>
  | Values<typeof SessionReason>
  | Values<typeof RunEndReason>
  | Values<typeof AgentConditionReason>
  | Values<typeof ContextReason>
  | Values<typeof AssessmentReason>
  | Values<typeof PolicyReason>
  | Values<typeof NodeReason>
  | Values<typeof NotifierReason>
  | Values<typeof AutopilotReason>
  | Values<typeof FreezeReason>
  | Values<typeof OneOffReason>;

/** The registry's groups by name, for the generated table. */
export const REASON_GROUPS = {
  PipelineReason,
  SessionReason,
  RunEndReason,
  AgentConditionReason,
  ContextReason,
  AssessmentReason,
  PolicyReason,
  NodeReason,
  NotifierReason,
  AutopilotReason,
  FreezeReason,
  OneOffReason,
} as const;

/** Every reason once, sorted. */
export const ALL_REASONS: readonly EventReason[] = [
  ...new Set(Object.values(REASON_GROUPS).flatMap((g) => Object.values(g) as EventReason[])),
].sort();
