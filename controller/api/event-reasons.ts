/**
 * Reasons of the Events the pipeline and session reconcilers record, by name, so that what routes
 * or counts Events (the notifier, metrics, tests) names the same ones the writers use.
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
 * its status.reason (Completed, Error, Stopped, TimedOut, TmuxSessionLost, a start failure's
 * reason…); the context, pause, message and agent-condition steps have theirs in their own files.
 */
export const SessionReason = {
  Started: 'Started',
  Stopping: 'Stopping',
  TimeBoxExceeded: 'TimeBoxExceeded',
  BudgetExceeded: 'BudgetExceeded',
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

/** The autopilot's Events (reconcilers/autopilot), recorded in the transaction of the Decision they tell of. */
export const AutopilotReason = {
  /** A run stopped at its time box continues in a new run (class TimeBox, its own retry limit). */
  TimeBoxContinued: 'TimeBoxContinued',
} as const;

/** Events that tell of no status change, recorded on their own (best-effort). */
export const OneOffReason = {
  PromptSanitized: 'PromptSanitized',
  AutoAnswered: 'AutoAnswered',
  AutoAnswerFailed: 'AutoAnswerFailed',
  ReconcileError: 'ReconcileError',
} as const;
