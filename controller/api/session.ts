/**
 * The AgentSession kind (crds/agentsessions.yaml is the schema): its spec, and its status with
 * every sub-status typed. Three writers share the status, each with its own fields
 * (api/status-fields.ts): the session reconciler, the assessment reconciler (api/assessment.ts)
 * and the judge (status.lastEvaluation, api/evaluation.ts).
 */
import type { AgentSessionSchemaSpec } from './generated/agentsession.js';
import type { AssessmentStatus, BreakerStatus, DetectorState } from './assessment.js';
import type { LastEvaluation } from './evaluation.js';
import type { FreezeStatus } from './freeze.js';
import type { LogPosition } from './log-position.js';
import type { ReportState } from './report.js';
import type { Phase } from './phases.js';
import type { Condition, Resource } from './types.js';

export type TimeoutAction = 'Stop' | 'Warn';

export type AgentSessionSpec = AgentSessionSchemaSpec;

/** status.git: progress of the current run since headBefore. */
export type GitStatus = {
  head?: string;
  branch?: string;
  commits?: number;
  insertions?: number;
  deletions?: number;
  filesChanged?: number;
  lastCommit?: { sha: string; subject: string; time: string };
};

// ---- status.agent ---------------------------------------------------------------------------

export type AgentActivity = 'starting' | 'idle' | 'busy' | 'waiting' | 'dialog' | 'exited';

/** Where status.agent.state came from: hooks/transcript, the pane, nothing yet, or the process ending. */
export type AgentStateSource = 'hook' | 'pane' | 'none' | 'process';

/** The agent's events folded, as a consumer of the session's event log (position committed with it). */
export type AgentObservation = {
  run: number;
  /** Consumer position in the session's event log. */
  position: LogPosition;
  /** Events consumed in this run, by type. */
  counts: Record<string, number>;
  /** State reported by hooks/transcript (undefined until the agent reported anything). */
  reported?: { state: AgentActivity; since: string; detail?: string };
  /** A permission request the agent reported and that is not yet answered. */
  permission?: { tool: string; command?: string; since: string };
  /** Whether this agent reports through hooks at all (then the pane is only a cross-check). */
  hooks: boolean;
  /** Last time any event arrived (progress). */
  lastEventAt?: string;
  turns: number;
  lastAssistantMessage?: string;
  /**
   * A rate or usage limit the agent reported. `resetsAt` (ISO): when it lifts, from the statusline's
   * rate_limits.*.resets_at or read from the limit text; absent when neither says.
   */
  quota?: { since: string; message: string; resetsAt?: string };
  interrupted?: { since: string };
  ended?: { reason: string; at: string };
  /** Context-window use from the latest usage report. */
  contextTokens?: number;
};

/** status.agent: the observation plus the state derived from it and where its sources are. */
export type SessionAgentStatus = AgentObservation & {
  state?: AgentActivity;
  source?: AgentStateSource;
  /** The agent CLI's own session id for this run (when its driver fixes one) and its transcript path. */
  sessionId?: string;
  transcript?: string;
  /** The directory the agent keeps its own records in for this run (its driver reads prompts there). */
  records?: string;
  /** The dialog last answered automatically (so one appearance gets one answer). */
  autoAnswered?: { dialog: string; at: string };
};

// ---- the other session-owned sub-statuses ---------------------------------------------------

/** status.context: context-window use of the agent (its transcript, or the statusline) and what was done about it. */
export type ContextStatus = {
  run: number;
  usedTokens: number;
  windowTokens: number;
  percent: number;
  /** The last reportEvery step an event was recorded for. */
  lastStep: number;
  /** Where the figure came from: the statusline is exact and cheap; the transcript is the fallback. */
  source?: 'transcript' | 'statusline';
  /** The context action in progress (checkpoint → compact → clear/rehydrate), if any. */
  step?: {
    name: 'Handoff' | 'Compact' | 'Clear' | 'Rehydrate';
    since: string;
    deadline: string;
    /** When its message or command went to the agent (it waits for an idle agent first). */
    sentAt?: string;
    /** When the agent confirmed it (Compact: PostCompact or SessionStart compact; the figure must drop too). */
    confirmedAt?: string;
    /** The figure when the sequence started (a compaction must bring it down). */
    percent?: number;
  };
  /** size:mtime of the statusline file last read (read again only when it changes). */
  stamp?: string;
  /** The agent's rate-limit windows as its statusline last reported them. */
  rateLimits?: { window: string; usedPercent?: number; resetsAt: string }[];
  /** Context actions started in this run (bounded by policy maxActionsPerRun). */
  actionsThisRun?: number;
  actions?: ContextAction[];
};

export type DeliveryConfirmation = 'hook' | 'transcript' | 'screen';

/** The outcome of one verified delivery into a pane (prompt, `orchctl send`, intervention). */
export type DeliveryResult = {
  delivered: boolean;
  reason: string;
  message: string;
  /** Extra presses of the submit (or answer) keys it took. */
  retries?: number;
  confirmedBy?: DeliveryConfirmation;
};

/** status.promptDelivery: how the current run's prompt delivery ended. */
export type PromptDeliveryStatus = {
  run?: number;
  delivered: boolean;
  reason: string;
  retries: number;
  confirmedBy?: DeliveryConfirmation;
  /** How often an unconfirmed prompt was delivered again once the screen showed an input box. */
  redeliveries?: number;
  at: string;
};

/** status.lifecycle: what the lifecycle machine needs beside phase/run/restarts to resume. */
export type LifecycleStatus = {
  stopReason?: 'Stopped' | 'TimedOut' | 'BudgetExceeded';
  /** metadata.generation the current run was started from. */
  runGeneration?: number;
  /** The restart annotation (orchctl.io/restartedAt) value the current run was started for: honoured once. */
  restartedAt?: string;
  /** status.binding.epoch the current run was started under: a run of an older epoch is stale (fencing). */
  epoch?: number;
  /** The Node the current run was started on (status.binding.nodeName then). */
  nodeName?: string;
};

/**
 * status.binding: the Node the session's runs go to, written by the scheduler (compare-and-swap)
 * and cleared by node-lifecycle when that Node is lost. Every new binding has a higher epoch; a
 * node acts on a session only while the binding names it, and a run started under an older epoch
 * is stale: its node kills it and writes nothing more for it.
 */
export type BindingStatus = {
  nodeName: string;
  epoch: number;
  boundAt: string;
};

/**
 * status.pause: the run is alive but orchctl holds it: it sends it nothing and it counts as
 * neither failed nor finished. RateLimited ends at `until` (+ jitter) with the continue message;
 * BudgetExceeded when the policy's window has room again (or the budget is raised).
 */
export type PauseReason = 'RateLimited' | 'BudgetExceeded';
export type PauseStatus = {
  run: number;
  reason: PauseReason;
  since: string;
  /** When it resumes (RateLimited: the limit's reset time plus jitter). */
  until?: string;
  message: string;
  /** Whether the paused session still counts against maxConcurrentSessions. */
  holdsSlot: boolean;
  /** When the continue message was sent (verified delivery); the pause ends when it is confirmed. */
  continueSentAt?: string;
  /** Continue messages that were not confirmed (each is tried again later, with backoff). */
  failedResumes?: number;
  /** A Hard budget interrupted the busy agent (its interruptKeys) when it paused it: when, last. */
  interruptedAt?: string;
};

/** One step of context handling, as listed in status.context.actions (bounded, newest last). */
export type ContextActionType =
  | 'HandoffRequested'
  | 'HandoffWritten'
  | 'HandoffTimedOut'
  | 'CompactSent'
  | 'Compacted'
  | 'CompactFailed'
  | 'ClearSent'
  | 'Cleared'
  | 'RehydrateDelivered'
  | 'AutoCompacted'
  | 'RestartedWithRehydrate';
export type ContextAction = { type: ContextActionType; at: string; percent?: number; message?: string };

/** Tokens of one kind of use, as the agent's transcript reports them. */
export type TokenCounts = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
};

/**
 * status.usage: the tokens the current run's agent messages used, summed from its transcript as a
 * consumer of the event log (committed with status.agent.position, so each message counts once),
 * and the cost estimated from the Agent's spec.pricing.
 */
export type UsageStatus = TokenCounts & {
  run: number;
  totalTokens: number;
  /** The model of the latest message. */
  model?: string;
  /** Estimated USD; present only when every model the run used is priced. */
  costUSD?: number;
  priced: boolean;
  /** The sums per model (the cost is recomputed from them, so a price change applies to the whole run). */
  byModel: (TokenCounts & { model: string })[];
  /** The last message counted and what was counted for it: its later (streamed) lines add only the rest. */
  last?: TokenCounts & { messageId: string };
  /**
   * Tokens and cost by the hour they were used in, across runs (carried over when a new run starts),
   * newest last, the last 25 hours: what a SessionPolicy budget sums over its window.
   */
  hourly?: UsageHour[];
};

/** One hour of a session's usage (`hour`: its start, ISO, UTC). costUSD only while every model was priced. */
export type UsageHour = { hour: string; tokens: number; costUSD?: number };

/**
 * status.report: the agent's progress report ($ORCHCTL_WORKSPACE/status.json, api/report.ts) as
 * last read, for the current run. A file that cannot be used sets `problem` and leaves the rest.
 */
export type ReportStatus = {
  run: number;
  /** Present once a valid report was read. */
  status?: ReportState;
  tasksDone?: number;
  tasksTotal?: number;
  /** "done/total", for the TASKS column. */
  progress?: string;
  /** The subject of the first task in progress. */
  currentTask?: string;
  blocker?: string;
  /** The report's notes (cleaned, at most 2,000 characters): a pipeline hands them to the next phase. */
  notes?: string;
  /** When the last valid report was read. */
  updatedAt?: string;
  /** Why the file as it is now was not used (corrupt, too large, not the schema). */
  problem?: string;
  /** size:mtime of the file last read: it is read again only when this changes. */
  stamp: string;
};

/**
 * status.handoff: the run's $ORCHCTL_WORKSPACE/handoff.md as its node last read it (read again only
 * when its size:mtime stamp changes), cleaned of control characters and cut at 8 KiB, so that a
 * reader on another host — the pipeline in the control plane — has it without the file.
 */
export type HandoffStatus = {
  run: number;
  stamp: string;
  text: string;
  /** The file was longer than what is kept here. */
  truncated?: boolean;
  /** The file's size in bytes. */
  bytes: number;
  /** When it was read. */
  at: string;
};

/**
 * status.messageDelivery: the last message (api/message.ts, the orchctl.io/message annotation) the
 * session's node took up, and how it went. Waiting: held for an idle point or the end of a pause;
 * Delivering: recorded before it is typed (a node that stops then leaves it Unconfirmed, never
 * sends it again); Delivered / Failed with the verified delivery's reason.
 */
export type MessageDeliveryStatus = {
  id: string;
  from?: string;
  state: 'Waiting' | 'Delivering' | 'Delivered' | 'Failed' | 'Unconfirmed';
  /** The run it went to (or waits for). */
  run?: number;
  delivered?: boolean;
  reason: string;
  message: string;
  retries?: number;
  confirmedBy?: DeliveryConfirmation;
  at: string;
};

/**
 * Why a run was started (status.lastStart.reason): its first run; the restart policy after a failed
 * run (the only kind RESTARTS counts); a spec change; or a new run asked through the restart
 * annotation — by `orchctl restart` (Manual), an Autopilot decision, a pipeline's recovery of a
 * lost run or its resume of an ended one, the context policy's restart — or of unknown origin
 * (Restart); or the run of a lost node started again on this one (NodeLost).
 */
export type StartReason =
  | 'FirstRun'
  | 'RestartPolicy'
  | 'SpecChanged'
  | 'Manual'
  | 'Autopilot'
  | 'Recovery'
  | 'Resume'
  | 'Context'
  | 'Restart'
  | 'NodeLost'
  | 'NewRun';

/** What the restart annotation's writers say beside it (RESTART_REASON_ANNOTATION): who asked. */
export const RESTART_REASONS = ['Manual', 'Autopilot', 'Recovery', 'Resume', 'Context'] as const;
export type RestartReason = (typeof RESTART_REASONS)[number];

/** status.lastStart: the current (or last) run's start, recorded with the run before tmux starts it. */
export type LastStart = { run: number; reason: StartReason; time: string; message: string };

/** status.result: result.json as the agent wrote it. Free-form and untrusted (agent-written JSON). */
export type SessionResult = Record<string, unknown>;

export type AgentSessionStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: Phase;
  run?: number;
  /** restartPolicy restarts since the last new run (what maxRestarts caps); other new runs count in `run`. */
  restarts?: number;
  lastStart?: LastStart;
  tmuxSession?: string;
  workspace?: string;
  workdir?: string;
  startTime?: string;
  completionTime?: string;
  nextRestartTime?: string;
  deadlineTime?: string;
  /** When the stop keys were sent (the grace period runs from it). */
  stopRequestTime?: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  lastOutput?: string;
  headBefore?: string;
  git?: GitStatus;
  result?: SessionResult;
  lifecycle?: LifecycleStatus;
  agent?: SessionAgentStatus;
  context?: ContextStatus;
  usage?: UsageStatus;
  pause?: PauseStatus;
  /** Held by `orchctl freeze` (api/freeze.ts): nothing is done to or for it until thawed. */
  frozen?: FreezeStatus;
  binding?: BindingStatus;
  report?: ReportStatus;
  handoff?: HandoffStatus;
  messageDelivery?: MessageDeliveryStatus;
  promptDelivery?: PromptDeliveryStatus;
  detector?: DetectorState;
  breaker?: BreakerStatus;
  assessment?: AssessmentStatus;
  lastEvaluation?: LastEvaluation;
};

export type AgentSession = Resource<AgentSessionSpec, AgentSessionStatus>;
