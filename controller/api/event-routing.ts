/**
 * The routing table: for every reason of the registry (api/event-reasons.ts), who must act, the
 * tier the shipped policy (manifests/notifications/policy.yaml) gives it and why. The Record type
 * makes a reason without a row a compile error; test/unit/api/event-routing.test.ts checks that
 * the shipped policy routes each reason to its row's tier and that docs/notifications.md holds
 * the table generated from here (`npm run docs:notifications`).
 *
 * Besides the row's tier, the notifier itself raises a Warning by one tier once the same reason
 * was recorded more than REPEAT_ESCALATION.after times within its window (seed 002: an error
 * repeated more than twice is urgent), and holds WaitingForInput back for its grace (the route's
 * groupWait), dropping it when the session was answered in the meantime.
 */
import type { EventReason } from './event-reasons.js';
import type { NotificationTier } from './notification-channel.js';

/** Who must act on the Event. */
export type Actor = 'you' | 'you, soon' | 'nobody' | 'the controller';

export type ReasonRoute = {
  /** The kinds the reason is recorded about. */
  kinds: string[];
  who: Actor;
  tier: NotificationTier;
  /** The tier of a Warning of the reason, when it differs (e.g. an autopilot give-up). */
  warningTier?: NotificationTier;
  why: string;
};

const S = ['AgentSession'];
const P = ['Pipeline'];
const row = (kinds: string[], who: Actor, tier: NotificationTier, why: string, warningTier?: NotificationTier) => ({
  kinds,
  who,
  tier,
  why,
  ...(warningTier ? { warningTier } : {}),
});

/** Seed 002 §2.8 / issue 25: needs-a-person Events are tier 1. */
export const REASON_ROUTES: Readonly<Record<EventReason, ReasonRoute>> = {
  // Pipelines
  InvalidSpec: row(P, 'you, soon', 2, 'the pipeline cannot run until its spec is fixed'),
  PhaseStarted: row(P, 'nobody', 4, 'progress, visible in get pipelines'),
  PhaseSucceeded: row(P, 'nobody', 3, 'how the night went: batched'),
  PhaseFailed: row(P, 'you', 1, 'the phases after it do not run until a person acts'),
  PhaseBlocked: row(P, 'you', 1, 'the agent asks a person (seed 003): the pipeline waits for the answer'),
  PhaseResumed: row(P, 'nobody', 4, 'a person resumed it'),
  PhaseRecovering: row(P, 'the controller', 3, 'a recovery run is under way'),
  InvalidReport: row([...P, ...S], 'you, soon', 2, "the agent's report cannot be read: the phase cannot finish"),
  Resumed: row([...P, ...S], 'nobody', 4, 'what a person or the controller asked for happened'),
  ResumeFailed: row([...P, ...S], 'you, soon', 2, 'the resume did not get in: the work stays held'),
  ResumeIgnored: row(P, 'nobody', 4, 'nothing to resume'),
  ResumeUnconfirmed: row(P, 'you, soon', 2, 'the answer may not have reached the agent'),
  Succeeded: row(P, 'nobody', 3, 'how the night went: batched'),
  Failed: row(P, 'you', 1, 'a pipeline that failed stops; what later phases needed is not done'),
  HandoffNotAdded: row(P, 'nobody', 3, 'the phase runs without the handoff'),
  // Sessions
  Started: row(S, 'nobody', 4, 'routine'),
  Stopping: row(S, 'nobody', 4, 'routine'),
  TimeBoxExceeded: row(S, 'the controller', 3, 'the run is stopped at its time box and continued'),
  BudgetExceeded: row(
    [...S, 'SessionPolicy'],
    'you, soon',
    2,
    'sessions pause until the window has room or a person raises the budget',
  ),
  BudgetStopped: row(S, 'you', 1, 'a budget with action Stop ended the run: nothing restarts it'),
  BackOff: row(S, 'the controller', 4, 'the restart policy retries'),
  NodeFenced: row(S, 'the controller', 3, 'its node lost its lease: restarted, no restart counted; batched'),
  Escalated: row(S, 'you', 1, 'the controller or the judge gave up on the session'),
  Restarting: row(S, 'nobody', 4, 'routine'),
  NewRun: row(S, 'nobody', 4, 'routine'),
  Completed: row(S, 'nobody', 3, 'how runs ended: batched'),
  ContextWindow: row(S, 'nobody', 4, 'the context steps handle it'),
  Deleted: row(S, 'nobody', 4, 'a person deleted it'),
  ReportUpdated: row(S, 'nobody', 4, 'progress'),
  ReportBlocked: row(S, 'you', 1, 'the agent reports it cannot go on without a person'),
  ReportComplete: row(S, 'nobody', 3, 'how runs ended: batched'),
  PromptNotConfirmed: row(S, 'you', 1, 'the task prompt did not get in: the agent does nothing'),
  Paused: row(S, 'nobody', 4, 'a rate limit: resumed by itself'),
  RunMoved: row(S, 'the controller', 3, 'a lost node: the run continues elsewhere'),
  NodeRenamed: row(S, 'nobody', 4, 'a person renamed the node'),
  NodeReady: row([...S, 'Node'], 'nobody', 4, 'back to normal'),
  NodeLost: row(S, 'you, soon', 2, 'the machine stopped answering; its runs move if they can'),
  Rescheduled: row(S, 'nobody', 4, 'routine'),
  FailedScheduling: row(S, 'you, soon', 2, 'no node can take the session'),
  MessageSent: row(S, 'nobody', 4, 'what was asked happened'),
  MessageNotConfirmed: row(S, 'you, soon', 2, 'a message may not have reached the agent'),
  MessageWaiting: row(S, 'nobody', 4, 'sent at the next idle point'),
  // Run ends (status.reason); a run that fails again and again is raised by the repeat rule
  Error: row(S, 'the controller', 3, 'the restart policy or the autopilot retries; batched'),
  ExitStatusUnknown: row(S, 'the controller', 3, 'retried like an error; batched'),
  CommandNotFound: row(S, 'you, soon', 2, 'restarting cannot help: install the agent'),
  TimedOut: row(S, 'the controller', 3, 'stopped at maxDuration; batched'),
  Stopped: row(S, 'nobody', 4, 'a person or the autopilot stopped it'),
  TmuxSessionLost: row(S, 'the controller', 3, 'retried; batched'),
  TmuxFailed: row(S, 'you, soon', 2, 'tmux cannot start the run'),
  AgentNotFound: row(S, 'you, soon', 2, 'the session names no Agent that exists'),
  NoWorkdir: row(S, 'you, soon', 2, 'nothing gives the session a working directory'),
  AgentCannotConnect: row(S, 'the controller', 3, 'the provider was unreachable; retried, batched'),
  // Agent conditions
  WaitingForInput: row(S, 'you', 1, 'the agent asks a question; sent once it waited its grace unanswered'),
  Stalled: row(S, 'you, soon', 2, 'busy with no progress'),
  QuotaExhausted: row(S, 'you, soon', 2, "the provider's quota is used up"),
  // Context steps
  ContextCheckpoint: row(S, 'nobody', 4, 'routine'),
  HandoffWritten: row(S, 'nobody', 4, 'routine'),
  HandoffTimedOut: row(S, 'the controller', 3, 'the run continues without a handoff'),
  CompactSent: row(S, 'nobody', 4, 'routine'),
  Compacted: row(S, 'nobody', 4, 'routine'),
  CompactFailed: row(S, 'the controller', 3, 'the next context step takes over'),
  ClearSent: row(S, 'nobody', 4, 'routine'),
  Cleared: row(S, 'nobody', 4, 'routine'),
  Rehydrated: row(S, 'nobody', 4, 'routine'),
  AutoCompacted: row(S, 'nobody', 4, 'routine'),
  RestartedWithRehydrate: row(S, 'the controller', 3, 'a new run continues from the handoff'),
  // Judge and assessment
  Evaluated: row(S, 'nobody', 4, 'in the digest'),
  JudgeFailed: row(['Evaluation'], 'you, soon', 2, 'the judge cannot judge: its backend needs a look'),
  BreakerOpen: row(S, 'you, soon', 2, 'the session is held after a trip'),
  BreakerHalfOpen: row(S, 'nobody', 4, 'routine'),
  BreakerClosed: row(S, 'nobody', 4, 'routine'),
  InterventionDelivered: row(S, 'nobody', 4, 'routine'),
  InterventionNotDelivered: row(S, 'the controller', 3, 'tried again at the next trip'),
  // Policies and nodes
  BudgetAvailable: row(['SessionPolicy'], 'nobody', 3, 'paused sessions resume'),
  NodeNotReady: row(['Node'], 'you, soon', 2, 'the node stopped posting its status'),
  OrphanKilled: row(['Node'], 'nobody', 4, '--gc-orphans did what was asked'),
  OrphanTmuxSession: row(['Node'], 'you, soon', 3, 'a tmux session orchctl cannot account for'),
  // The notifier (about a channel: never sent to that channel)
  NotificationBudget: row(['NotificationChannel'], 'nobody', 4, "the channel's status says it; logged"),
  NotificationFailed: row(['NotificationChannel'], 'you', 1, 'a channel is failing: told on the other channels'),
  // The autopilot
  AutopilotNotice: row(
    ['Project', 'Autopilot'],
    'you',
    3,
    'what it did or recommends is batched; a give-up or an auth failure (Warning) needs a person',
    1,
  ),
  PlannerFailed: row(['Autopilot'], 'you, soon', 2, 'the autopilot cannot think'),
  DecisionPending: row(
    ['Project', 'Autopilot'],
    'you, soon',
    2,
    'a Decision waits for approve/reject; a held-back recovery (Warning) is urgent',
    1,
  ),
  DecisionExpired: row(['Project', 'Autopilot'], 'you, soon', 2, 'nobody answered: its default action was taken'),
  TimeBoxContinued: row(['Project'], 'the controller', 3, 'the run ran out of time and goes on in a new one; batched'),
  // The emergency stop (docs/freeze.md): a person did it; the others who watch are told, grouped, not paged
  // once per session held.
  Frozen: row([...S, 'Project', 'Autopilot'], 'you, soon', 2, 'nothing moves until a person thaws it'),
  Thawed: row([...S, 'Project', 'Autopilot'], 'nobody', 3, 'work goes on; batched'),
  // One-offs
  PromptSanitized: row(S, 'nobody', 4, 'control characters were removed from a prompt'),
  AutoAnswered: row(S, 'nobody', 4, 'the Agent opted in'),
  AutoAnswerFailed: row(S, 'you, soon', 2, 'a dialog stays on screen'),
  ReconcileError: row(['AgentSession', 'Pipeline', 'Project'], 'the controller', 4, 'retried with backoff'),
};

/** The markers between which docs/notifications.md holds the generated table. */
export const TABLE_BEGIN = '<!-- routing-table: generated by `npm run docs:notifications`; do not edit -->';
export const TABLE_END = '<!-- /routing-table -->';

const tierText = (r: ReasonRoute) => (r.warningTier ? `${r.tier} (Warning: ${r.warningTier})` : String(r.tier));

/** The routing table as Markdown, the most urgent first, then by reason. */
export function routingTableMarkdown(): string {
  const rows = (Object.entries(REASON_ROUTES) as [EventReason, ReasonRoute][]).sort(
    ([a, x], [b, y]) =>
      Math.min(x.tier, x.warningTier ?? 4) - Math.min(y.tier, y.warningTier ?? 4) || a.localeCompare(b),
  );
  return [
    '| Reason | About | Tier | Who acts | Why |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(([reason, r]) => `| ${reason} | ${r.kinds.join(', ')} | ${tierText(r)} | ${r.who} | ${r.why} |`),
  ].join('\n');
}

/** `doc` with the text between the markers replaced by the generated table; throws without the markers. */
export function withRoutingTable(doc: string): string {
  const a = doc.indexOf(TABLE_BEGIN);
  const b = doc.indexOf(TABLE_END);
  if (a < 0 || b < a) throw new Error(`the routing table markers are missing (${TABLE_BEGIN} … ${TABLE_END})`);
  return `${doc.slice(0, a + TABLE_BEGIN.length)}\n${routingTableMarkdown()}\n${doc.slice(b)}`;
}
