/**
 * Context handling (issue 15, seed 003's context_threshold), pure: the figure from the agent's
 * statusline, and the sequence a SessionPolicy's `context` asks for when the window fills:
 *
 *   Handoff   at checkpointAt %, at an idle agent: ask it (verified delivery) to write
 *             $ORCHCTL_WORKSPACE/handoff.md; done when the file is written and its turn ended
 *             (Stop), or at handoffTimeout (orchctl's last checkpoint summary stands in);
 *   Compact   `/compact <focus>` typed at idle; done when PostCompact or SessionStart(compact)
 *             came AND the figure dropped; failed on a StopFailure or no confirmation in time;
 *   Clear     (compaction failed, or action ClearAndRehydrate) `/clear` at idle; done on
 *             SessionStart(clear);
 *   Rehydrate the rehydrate prompt (rehydrate.ts) delivered at idle; done on its UserPromptSubmit.
 *
 * An agent whose driver has neither command gets a new run instead (the restart annotation with a
 * note; PrepareRun gives it the handoff). So does a Clear or Rehydrate that is not confirmed.
 * Crash-only: the step in progress is status.context.step, with when it was sent and its deadline,
 * and the agent's events are consumed once with status.agent's position — a restarted controller
 * goes on from there, or gives the step up at its deadline. A step waits for an idle agent (never
 * mid-turn) as long as it takes; its deadline runs from when it was sent.
 */
import { ContextReason, type EventReason, SessionReason } from '../../api/event-reasons.js';
import { parseDuration } from '../../api/duration.js';
import type { LastEvaluation } from '../../api/evaluation.js';
import type { ContextPolicy } from '../../api/session-policy.js';
import type { AgentSessionStatus, ContextAction, ContextActionType, ContextStatus } from '../../api/session.js';
import type { ContextCommands } from '../../agents/driver.js';
import type { StatuslineRecord } from '../../agents/statusline.js';
import type { HandoffReading } from '../../observers/context-files.js';
import type { AgentEvent } from '../../store/eventlog.js';
import { contextStep, contextStepMessage } from './agent-state.js';
import { rehydratePrompt } from './rehydrate.js';

export const CONTEXT_DEFAULTS = {
  reportEvery: 10,
  checkpointAt: 50,
  action: 'Compact',
  compactFocus: 'keep the task, the decisions made, what is done and what comes next',
  handoffTimeout: '3m',
  maxActionsPerRun: 3,
} as const;
/** How long a typed /compact may take to be confirmed (a summary of a large context is slow). */
export const COMPACT_TIMEOUT_MS = 5 * 60_000;
/** How long /clear and the rehydrate prompt may take to be confirmed. */
export const CLEAR_TIMEOUT_MS = 60_000;
export const REHYDRATE_TIMEOUT_MS = 2 * 60_000;
/** status.context.actions keeps the newest this many. */
export const MAX_CONTEXT_ACTIONS = 20;

type Step = NonNullable<ContextStatus['step']>;

export type ContextEffect =
  | { kind: 'event'; warning: boolean; reason: string; message: string }
  /** Verified delivery of text into the agent's input. */
  | { kind: 'deliver'; text: string }
  /** A command typed into the agent's input at idle (`/compact …`, `/clear`). */
  | { kind: 'command'; text: string }
  /** A new run through the restart annotation, with this note. */
  | { kind: 'restart'; note: string };

export interface ContextInput {
  /** The status being planned (status.context and status.agent are updated on it). */
  status: AgentSessionStatus;
  policy?: ContextPolicy;
  /** What the agent's driver can type; undefined: restart with the rehydrate prompt instead. */
  commands?: ContextCommands;
  /** The statusline file, when it changed since status.context.stamp. */
  statusline?: { stamp: string; record: StatuslineRecord };
  /** The run's events consumed in this pass. */
  events: readonly AgentEvent[];
  /** The run's handoff.md (read while a step is in progress). */
  handoff?: HandoffReading;
  checkpointSummary?: string;
  lastEvaluation?: LastEvaluation;
  /** The agent may be sent something now: idle, its prompt delivered, a live pane, not paused. */
  ready: boolean;
  now: number;
}

export interface ContextOutput {
  effects: ContextEffect[];
  /** Look again then (a step's deadline). */
  wakeAt?: number;
}

const iso = (t: number) => new Date(t).toISOString();
const at = (s: string | undefined) => (s ? Date.parse(s) : Number.NaN);

/** The policy with its defaults. */
export function contextPolicy(p: ContextPolicy) {
  return {
    reportEvery: p.reportEvery ?? CONTEXT_DEFAULTS.reportEvery,
    checkpointAt: p.checkpointAt ?? CONTEXT_DEFAULTS.checkpointAt,
    action: p.action ?? CONTEXT_DEFAULTS.action,
    compactFocus: p.compactFocus ?? CONTEXT_DEFAULTS.compactFocus,
    handoffTimeoutMs: parseDuration(p.handoffTimeout ?? CONTEXT_DEFAULTS.handoffTimeout),
    maxActionsPerRun: p.maxActionsPerRun ?? CONTEXT_DEFAULTS.maxActionsPerRun,
  };
}

/** The Event reason of each action (most are their own name). */
const EVENT_REASON: Record<ContextActionType, EventReason> = {
  HandoffRequested: ContextReason.ContextCheckpoint,
  HandoffWritten: ContextReason.HandoffWritten,
  HandoffTimedOut: ContextReason.HandoffTimedOut,
  CompactSent: ContextReason.CompactSent,
  Compacted: ContextReason.Compacted,
  CompactFailed: ContextReason.CompactFailed,
  ClearSent: ContextReason.ClearSent,
  Cleared: ContextReason.Cleared,
  RehydrateDelivered: ContextReason.Rehydrated,
  AutoCompacted: ContextReason.AutoCompacted,
  RestartedWithRehydrate: ContextReason.RestartedWithRehydrate,
};
const WARNING = new Set<ContextActionType>(['HandoffTimedOut', 'CompactFailed', 'RestartedWithRehydrate']);

class Pass {
  readonly fx: ContextEffect[] = [];
  constructor(
    readonly i: ContextInput,
    readonly ctx: ContextStatus,
  ) {}
  record(type: ContextActionType, message: string): void {
    const a: ContextAction = { type, at: iso(this.i.now), percent: this.ctx.percent, message };
    this.ctx.actions = [...(this.ctx.actions ?? []), a].slice(-MAX_CONTEXT_ACTIONS);
    this.fx.push({ kind: 'event', warning: WARNING.has(type), reason: EVENT_REASON[type], message });
  }
  /** Hook events of this pass at or after `since` (ms). */
  hooks(name: string, since: number): Extract<AgentEvent, { type: 'hook' }>[] {
    return this.i.events.filter(
      (e): e is Extract<AgentEvent, { type: 'hook' }> =>
        e.type === 'hook' && e.hook === name && e.run === this.ctx.run && Date.parse(e.ts) >= since,
    );
  }
}

/**
 * One pass: the statusline's figure (and rate limits) into status, automatic compactions
 * recorded, then the sequence advanced. Mutates `i.status.context` (and `.agent.quota`).
 */
export function planContext(i: ContextInput): ContextOutput {
  const s = i.status;
  const run = s.run ?? 0;
  const autoCompacted = i.events.some((e) => e.type === 'hook' && e.hook === 'PreCompact' && e.run === run);
  if (s.context?.run !== run) {
    // Nothing known of this run's context yet: status.context stays as it is until something is.
    if (!i.statusline && !autoCompacted) return { effects: [] };
    s.context = { run, usedTokens: 0, windowTokens: 0, percent: 0, lastStep: 0 };
  }
  const ctx = s.context!;
  const p = new Pass(i, ctx);
  const every = i.policy?.reportEvery ?? CONTEXT_DEFAULTS.reportEvery;
  if (i.statusline) applyStatusline(p, i.statusline, every);
  fillQuotaReset(s, i.now);
  for (const e of p.hooks('PreCompact', 0))
    if (e.payload.trigger === 'auto')
      p.record('AutoCompacted', `the agent compacted its context by itself at ${ctx.percent}%`);
  if (!i.policy) {
    // No context policy (any more): a step in progress is dropped, nothing is started.
    delete ctx.step;
    return { effects: p.fx };
  }
  advance(p, contextPolicy(i.policy));
  const deadline = ctx.step?.sentAt ? at(ctx.step.deadline) : Number.NaN;
  return { effects: p.fx, ...(Number.isNaN(deadline) ? {} : { wakeAt: deadline }) };
}

/** The figure from the statusline (it wins over the transcript's for the rest of the run). */
function applyStatusline(p: Pass, sl: { stamp: string; record: StatuslineRecord }, every: number): void {
  const { ctx } = p;
  const r = sl.record;
  ctx.stamp = sl.stamp;
  if (r.rateLimits.length)
    ctx.rateLimits = r.rateLimits.map((w) => ({
      window: w.window,
      ...(w.usedPercent !== undefined ? { usedPercent: w.usedPercent } : {}),
      resetsAt: iso(w.resetsAt * 1000),
    }));
  if (r.windowTokens === undefined) return; // not a statusline payload: the transcript's figure stands
  // used_percentage is null before the first answer and right after /clear: nothing in the window.
  const percent = r.usedPercent ?? 0;
  ctx.source = 'statusline';
  ctx.windowTokens = r.windowTokens;
  ctx.usedTokens = r.usedTokens ?? Math.round((percent / 100) * r.windowTokens);
  ctx.percent = percent;
  // A compaction or a clear brings the figure down: later crossings are reported again.
  if (percent < ctx.lastStep) ctx.lastStep = Math.floor(percent / every) * every;
  const step = contextStep(ctx.usedTokens, ctx.windowTokens, ctx.lastStep, every, percent);
  if (step) {
    ctx.lastStep = step.step;
    for (const k of step.steps) {
      const msg = contextStepMessage(k, percent, ctx.usedTokens, ctx.windowTokens);
      p.fx.push({ kind: 'event', warning: k >= 80, reason: SessionReason.ContextWindow, message: msg });
    }
  }
}

/**
 * status.agent.quota.resetsAt from the statusline's rate limits: a window at 100 % is a limit
 * reached (QuotaExhausted), and a limit seen elsewhere (screen, transcript) that says no reset
 * time takes the window nearest its limit.
 */
function fillQuotaReset(s: AgentSessionStatus, now: number): void {
  const windows = (s.context?.rateLimits ?? []).filter((w) => at(w.resetsAt) > now);
  if (!windows.length || !s.agent) return;
  const worst = [...windows].sort((a, b) => (b.usedPercent ?? 0) - (a.usedPercent ?? 0))[0];
  if (!s.agent.quota && (worst.usedPercent ?? 0) >= 100)
    s.agent.quota = {
      since: iso(now),
      message: `${worst.window} rate limit reached (statusline: ${worst.usedPercent}%)`,
      resetsAt: worst.resetsAt,
    };
  else if (s.agent.quota && !s.agent.quota.resetsAt) s.agent.quota.resetsAt = worst.resetsAt;
}

type Resolved = ReturnType<typeof contextPolicy>;

function advance(p: Pass, pol: Resolved): void {
  const { ctx } = p;
  // A step that ends may start the next in the same pass (sent only if the agent is idle); a
  // sequence that ends waits for the next pass, so one pass never starts two.
  for (let n = 0; n < 4; n++) {
    const before = ctx.step;
    if (!before) {
      start(p, pol);
      return;
    }
    if (before.name === 'Handoff') handoff(p, pol, before);
    else if (before.name === 'Compact') compact(p, pol, before);
    else if (before.name === 'Clear') clear(p, before);
    else rehydrate(p, before);
    if (ctx.step === before || !ctx.step) return;
  }
}

function newStep(p: Pass, name: Step['name'], timeoutMs: number, sent: boolean): Step {
  const now = p.i.now;
  return {
    name,
    since: iso(now),
    deadline: iso(now + timeoutMs),
    ...(sent ? { sentAt: iso(now) } : {}),
    percent: p.ctx.step?.percent ?? p.ctx.percent,
  };
}

/** At checkpointAt, at idle, within maxActionsPerRun: ask for the handoff. */
function start(p: Pass, pol: Resolved): void {
  const { ctx, i } = p;
  if (ctx.percent < pol.checkpointAt || !i.ready || (ctx.actionsThisRun ?? 0) >= pol.maxActionsPerRun) return;
  const file = i.status.workspace ? `${i.status.workspace}/handoff.md` : '$ORCHCTL_WORKSPACE/handoff.md';
  ctx.actionsThisRun = (ctx.actionsThisRun ?? 0) + 1;
  ctx.step = newStep(p, 'Handoff', pol.handoffTimeoutMs, true);
  p.fx.push({ kind: 'deliver', text: handoffRequest(ctx.percent, file, afterHandoff(pol, i.commands)) });
  p.record(
    'HandoffRequested',
    `context window at ${ctx.percent}% (checkpointAt ${pol.checkpointAt}%): asked the agent for a handoff in ${file}`,
  );
}

/** What follows the handoff (as {@link next} will choose it), for the request's wording. */
export type AfterHandoff = 'compact' | 'clear' | 'new-run';

export function afterHandoff(pol: Pick<Resolved, 'action'>, cmds: ContextCommands | undefined): AfterHandoff {
  if (pol.action === 'Compact' && cmds?.compact) return 'compact';
  return cmds?.clear ? 'clear' : 'new-run';
}

const WHAT_NEXT: Record<AfterHandoff, string> = {
  compact: 'will be compacted',
  clear: 'will be cleared and the work will go on from your handoff',
  'new-run': 'cannot be compacted here: a new run will continue from your handoff',
};

/** The request says truthfully what happens next: only an agent that can compact is told "compacted". */
export function handoffRequest(percent: number, file: string, then: AfterHandoff = 'compact'): string {
  return (
    `orchctl: your context window is ${percent}% full and ${WHAT_NEXT[then]}. Before that, write a handoff ` +
    `to ${file} (Markdown): the state of the work, the next steps, and open questions. ` +
    'Write only that file, then end your turn.'
  );
}

/** When the current sequence asked for its handoff (the file must be newer). */
function handoffAskedAt(ctx: ContextStatus): number {
  const a = [...(ctx.actions ?? [])].reverse().find((x) => x.type === 'HandoffRequested');
  return a ? at(a.at) : Number.POSITIVE_INFINITY;
}

function handoff(p: Pass, pol: Resolved, step: Step): void {
  const { i } = p;
  const sent = at(step.sentAt);
  const written = !!i.handoff && i.handoff.mtimeMs >= sent;
  const agent = i.status.agent;
  // Its turn ended after the request: a Stop it reported (hook agents), or an idle screen.
  const turnDone = agent?.hooks
    ? agent.reported?.detail === 'turn-done' && at(agent.reported.since) >= sent && i.ready
    : i.ready;
  if (written && turnDone) {
    p.record('HandoffWritten', `the agent wrote its handoff (${i.handoff!.text.length} characters)`);
    next(p, pol);
  } else if (i.now >= at(step.deadline)) {
    const fallback = i.checkpointSummary
      ? "orchctl's last checkpoint summary stands in"
      : 'no checkpoint summary either';
    p.record('HandoffTimedOut', `no handoff within ${Math.round(pol.handoffTimeoutMs / 1000)}s; ${fallback}`);
    next(p, pol);
  }
}

/** After the handoff: compact, clear, or (an agent with neither command) a new run. */
function next(p: Pass, pol: Resolved): void {
  const then = afterHandoff(pol, p.i.commands);
  if (then === 'compact') p.ctx.step = newStep(p, 'Compact', COMPACT_TIMEOUT_MS, false);
  else if (then === 'clear') p.ctx.step = newStep(p, 'Clear', CLEAR_TIMEOUT_MS, false);
  else restart(p, 'the agent has no /compact or /clear');
}

function restart(p: Pass, why: string): void {
  const note =
    `The context window of the previous run was ${p.ctx.step?.percent ?? p.ctx.percent}% full and ${why}; ` +
    'this run continues from its handoff.';
  delete p.ctx.step;
  p.fx.push({ kind: 'restart', note });
  p.record('RestartedWithRehydrate', `${why}: a new run continues with the rehydrate prompt`);
}

/** Sends the step's command once the agent is idle; returns whether it is (or was) sent. */
function send(p: Pass, step: Step, timeoutMs: number, effect: ContextEffect, sentType: ContextActionType, msg: string) {
  if (step.sentAt) return true;
  if (!p.i.ready) return false;
  step.sentAt = iso(p.i.now);
  step.deadline = iso(p.i.now + timeoutMs);
  p.fx.push(effect);
  p.record(sentType, msg);
  return false;
}

function compact(p: Pass, pol: Resolved, step: Step): void {
  const { ctx, i } = p;
  const text = `${i.commands!.compact} ${pol.compactFocus}`.trim();
  if (!send(p, step, COMPACT_TIMEOUT_MS, { kind: 'command', text }, 'CompactSent', `typed ${text}`)) return;
  const sent = at(step.sentAt);
  const confirm = [...p.hooks('PostCompact', sent), ...p.hooks('SessionStart', sent)].find(
    (e) => e.hook === 'PostCompact' || e.payload.source === 'compact',
  );
  if (confirm && !step.confirmedAt) step.confirmedAt = confirm.ts;
  const failure = p.hooks('StopFailure', sent)[0];
  if (step.confirmedAt && ctx.percent < (step.percent ?? 100)) {
    p.record('Compacted', `context window ${step.percent}% → ${ctx.percent}%`);
    delete ctx.step;
  } else if (failure && !step.confirmedAt) {
    const err = String(failure.payload.last_assistant_message ?? failure.payload.error ?? 'error').slice(0, 300);
    p.record('CompactFailed', `compaction failed: ${err}`);
    afterCompactFailed(p);
  } else if (i.now >= at(step.deadline)) {
    const why = step.confirmedAt
      ? `the context window did not drop below ${step.percent}%`
      : `no PostCompact within ${COMPACT_TIMEOUT_MS / 1000}s`;
    p.record('CompactFailed', `compaction not confirmed: ${why}`);
    afterCompactFailed(p);
  }
}

function afterCompactFailed(p: Pass): void {
  if (p.i.commands?.clear) p.ctx.step = newStep(p, 'Clear', CLEAR_TIMEOUT_MS, false);
  else restart(p, 'compaction failed');
}

function clear(p: Pass, step: Step): void {
  const { ctx, i } = p;
  const text = i.commands!.clear!;
  if (!send(p, step, CLEAR_TIMEOUT_MS, { kind: 'command', text }, 'ClearSent', `typed ${text}`)) return;
  const done = p.hooks('SessionStart', at(step.sentAt)).find((e) => e.payload.source === 'clear');
  if (done) {
    p.record('Cleared', 'the agent started a new conversation (SessionStart clear)');
    ctx.step = newStep(p, 'Rehydrate', REHYDRATE_TIMEOUT_MS, false);
  } else if (i.now >= at(step.deadline)) restart(p, `${text} was not confirmed within ${CLEAR_TIMEOUT_MS / 1000}s`);
}

function rehydrate(p: Pass, step: Step): void {
  const { ctx, i } = p;
  const fresh = i.handoff && i.handoff.mtimeMs >= handoffAskedAt(ctx) ? i.handoff.text : undefined;
  const text = rehydratePrompt({
    handoff: fresh,
    checkpointSummary: i.checkpointSummary,
    lastEvaluation: i.lastEvaluation,
    reason: 'cleared',
  });
  const msg = `delivering the rehydrate prompt (${fresh ? 'the handoff' : 'no handoff'}${
    i.checkpointSummary ? ', the last checkpoint summary' : ''
  }${i.lastEvaluation ? ', the last evaluation' : ''})`;
  if (!step.sentAt) {
    if (!i.ready) return;
    step.sentAt = iso(i.now);
    step.deadline = iso(i.now + REHYDRATE_TIMEOUT_MS);
    p.fx.push({ kind: 'deliver', text });
    return;
  }
  const sent = at(step.sentAt);
  const arrived =
    p.hooks('UserPromptSubmit', sent).length > 0 ||
    i.events.some((e) => e.type === 'user_message' && e.run === ctx.run && Date.parse(e.ts) >= sent && !e.interrupt);
  if (arrived) {
    p.record('RehydrateDelivered', msg.replace('delivering', 'delivered'));
    delete ctx.step;
  } else if (i.now >= at(step.deadline))
    restart(p, `the rehydrate prompt was not confirmed within ${REHYDRATE_TIMEOUT_MS / 1000}s`);
}
