/**
 * status.pause, pure: a run that stays alive while orchctl holds it (docs/long-running.md).
 *
 *  - RateLimited: the agent reported a rate or usage limit (the QuotaExhausted condition, from its
 *    hooks, transcript or screen). The pause lasts until the limit resets (status.agent.quota
 *    .resetsAt, else the reset time read from the limit's text, else the policy's defaultWait),
 *    plus a jitter drawn from the session's uid and the pause's start (so sessions do not all
 *    resume at once, and a restarted controller draws the same), then the continue message goes
 *    in through verified delivery and the pause ends when it is confirmed.
 *  - BudgetExceeded: the SessionPolicy's budget is exceeded (policy reconciler, status.budget) and
 *    its action is Pause: the run is paused at its next idle point (never mid-turn) and resumes
 *    the same way once the window has room or the budget was raised. Action Stop is not a pause:
 *    {@link budgetStopDue} tells the plan to stop the run at its next idle point. With the budget's
 *    `enforce: Hard`, a busy agent is not waited for: its turn is interrupted (the Agent's
 *    interruptKeys) and the run paused at once (then stopped at idle for action Stop), the overshoot
 *    in the Event; an agent busy again while the budget is exceeded is interrupted again, never resumed.
 * A pause the agent ends by itself (it is busy again and reports no limit) ends at once. While
 * paused nothing else is sent to the run (the assessment's interventions and the autopilot skip
 * it), it does not fail, and nothing restarts it. The due time is in status, so the work queue's
 * requeue and a restarted controller both come back for it.
 */
import { SessionReason } from '../../api/event-reasons.js';
import { isTrue } from '../../api/conditions.js';
import { formatDuration, parseDuration } from '../../api/duration.js';
import type { AgentSessionStatus, DeliveryResult, PauseStatus, SessionPolicy } from '../../api/kinds.js';
import { currentPause, budgetExceeded, clock, RATE_LIMIT_DEFAULTS, shortCount } from '../../api/pause.js';
import type { EventType } from '../../client/events.js';
import type { ScreenReading } from './agent-state.js';
import { parseResetTime } from './reset-time.js';

/** A continue message whose outcome was lost (a controller restart) is sent again after this. */
export const RESUME_CONFIRM_MS = 2 * 60_000;
/** Waits before another try after an unconfirmed continue message: 1m, 2m, 4m … capped. */
const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 15 * 60_000;

export interface PauseInput {
  /** The status planned so far in this pass (the agent fold and its conditions applied). */
  status: AgentSessionStatus;
  uid: string;
  policy?: SessionPolicy;
  /** The pane as read in this pass (the limit's own lines may say when it resets). */
  screen?: ScreenReading;
  /** The continue message's delivery, when it finished. */
  resumed?: DeliveryResult;
  now: number;
}

export interface PauseOutput {
  /** The new status.pause (undefined: not paused). */
  pause?: PauseStatus;
  /** status.reason and .message while paused, or back to running. */
  reason?: { reason: string; message: string };
  events: { type: EventType; reason: string; message: string }[];
  /** Send this (the continue message) through verified delivery. */
  sendContinue?: string;
  /** The continue message's outcome is in status now: the actuator may forget it. */
  forgetResume?: boolean;
  /** Look again after this long. */
  dueMs?: number;
  /** A Hard budget: interrupt the busy agent's turn now (its Agent's interruptKeys). */
  interrupt?: boolean;
}

/** A Hard budget's interrupt that the agent did not act on (still busy) is sent again after this. */
export const INTERRUPT_AGAIN_MS = 60_000;

const iso = (t: number) => new Date(t).toISOString();
const clip = (s: string, n = 200) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** 0 ≤ x < 1 from a string (FNV-1a): the same pause always draws the same jitter. */
function fraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h / 2 ** 32;
}

/**
 * The statusline's rate-limit windows that are used up (status.context.rateLimits, Claude Code's
 * rate_limits.*): when the last of them resets. Exact, so it needs no limit text.
 */
function statuslineReset(s: AgentSessionStatus, now: number): number | undefined {
  type Window = { usedPercent?: number; resetsAt: string };
  const ctx = s.context as { run?: number; rateLimits?: Window[] } | undefined;
  if (ctx?.run !== s.run) return undefined;
  const resets = (ctx?.rateLimits ?? [])
    .filter((w) => (w.usedPercent ?? 0) >= 100)
    .map((w) => Date.parse(w.resetsAt))
    .filter((t) => t > now);
  return resets.length ? Math.max(...resets) : undefined;
}

function budgetMessage(policy: SessionPolicy, verb: string): string {
  const b = policy.status?.budget;
  const window = policy.spec?.budget?.window ?? '24h';
  return `${verb}: SessionPolicy "${policy.metadata.name}" budget exceeded (${b?.display ?? '?'} in ${window})`;
}

/** Budget action Stop: the run is stopped once it is idle (the plan sends STOP with reason BudgetExceeded). */
export function budgetStopDue(status: AgentSessionStatus, policy: SessionPolicy | undefined): boolean {
  return (
    status.phase === 'Running' &&
    policy?.spec?.budget?.action === 'Stop' &&
    budgetExceeded(policy) &&
    status.agent?.run === status.run &&
    status.agent?.state === 'idle'
  );
}

export function budgetStopMessage(policy: SessionPolicy | undefined): string {
  return policy ? budgetMessage(policy, 'stopped at an idle point') : 'stopped: budget exceeded';
}

export function planPause(i: PauseInput): PauseOutput {
  const s = i.status;
  const out: PauseOutput = { events: [] };
  const cur = currentPause(s);
  // Only a live run is held: a run that ended (or is stopping) takes its pause with it.
  if (s.phase !== 'Running') {
    if (i.resumed) out.forgetResume = true;
    return out;
  }
  const rl = i.policy?.spec?.rateLimit ?? {};
  const quota = isTrue(s.conditions, 'QuotaExhausted') || statuslineReset(s, i.now) !== undefined;
  const state = s.agent?.run === s.run ? s.agent?.state : undefined;
  const hard = i.policy?.spec?.budget?.enforce === 'Hard' && budgetExceeded(i.policy);
  if (!cur) {
    if (i.resumed) out.forgetResume = true;
    if (quota && rl.pause !== false) return enterRateLimited(i, out);
    // enforce Hard: a busy agent does not get to finish its turn (one turn can last hours).
    if (hard && state === 'busy') return enterBudget(i, i.policy!, out, true);
    if (
      state === 'idle' &&
      i.policy &&
      budgetExceeded(i.policy) &&
      (i.policy.spec?.budget?.action ?? 'Pause') === 'Pause'
    )
      return enterBudget(i, i.policy, out);
    return out;
  }
  out.pause = { ...cur };
  // Held by a Hard budget that is still exceeded: an agent busy again is interrupted again, never resumed.
  if (cur.reason === 'BudgetExceeded' && cur.interruptedAt && hard) {
    const again = Date.parse(cur.interruptedAt) + INTERRUPT_AGAIN_MS - i.now;
    if (state === 'busy' && again <= 0) {
      out.pause.interruptedAt = iso(i.now);
      out.interrupt = true;
      out.dueMs = INTERRUPT_AGAIN_MS;
    } else if (state === 'busy') out.dueMs = again;
    return out;
  }
  // The agent went on by itself (a person typed, or it retried): the pause is over.
  if (state === 'busy' && !quota)
    return resume(i, out, cur.continueSentAt ? 'continue message taken' : 'went on by itself');
  const held = cur.reason === 'BudgetExceeded' && budgetExceeded(i.policy) && i.policy?.spec?.budget?.action !== 'Stop';
  if (held) return out; // the policy's status changing brings the session back
  const due = cur.reason === 'RateLimited' && cur.until ? Date.parse(cur.until) : i.now;
  if (i.now < due) {
    out.dueMs = due - i.now;
    return out;
  }
  const text = rl.continueMessage ?? RATE_LIMIT_DEFAULTS.continueMessage;
  if (cur.continueSentAt && i.resumed) {
    out.forgetResume = true;
    if (i.resumed.delivered) return resume(i, out, `continue message delivered (${i.resumed.reason})`);
    const failed = (cur.failedResumes ?? 0) + 1;
    const wait = Math.min(RETRY_BASE_MS * 2 ** (failed - 1), RETRY_MAX_MS);
    out.pause = { ...cur, failedResumes: failed, until: iso(i.now + wait) };
    delete out.pause.continueSentAt;
    out.events.push({
      type: 'Warning',
      reason: SessionReason.ResumeFailed,
      message:
        `the continue message was not confirmed (${i.resumed.reason}: ${clip(i.resumed.message)}); ` +
        `trying again in ${formatDuration(wait)}`,
    });
    out.dueMs = wait;
    return out;
  }
  if (cur.continueSentAt && i.now - Date.parse(cur.continueSentAt) < RESUME_CONFIRM_MS) {
    out.dueMs = Date.parse(cur.continueSentAt) + RESUME_CONFIRM_MS - i.now; // its outcome comes back
    return out;
  }
  out.pause.continueSentAt = iso(i.now);
  out.sendContinue = text;
  out.dueMs = RESUME_CONFIRM_MS;
  return out;
}

function enterRateLimited(i: PauseInput, out: PauseOutput): PauseOutput {
  const s = i.status;
  const rl = i.policy?.spec?.rateLimit ?? {};
  const quota = s.agent?.quota;
  const condition = s.conditions?.find((c) => c.type === 'QuotaExhausted');
  const text = i.screen?.quotaText ?? quota?.message ?? condition?.message ?? '';
  const read = quota?.resetsAt
    ? Date.parse(quota.resetsAt)
    : (statuslineReset(s, i.now) ?? parseResetTime(text, i.now));
  const resets = read !== undefined && Number.isFinite(read) && read > i.now ? read : undefined;
  const wait = resets ?? i.now + parseDuration(rl.defaultWait ?? RATE_LIMIT_DEFAULTS.defaultWait);
  const since = iso(i.now);
  const jitter = Math.floor(
    fraction(`${i.uid}/${s.run}/${since}`) * parseDuration(rl.jitter ?? RATE_LIMIT_DEFAULTS.jitter),
  );
  const until = iso(wait + jitter);
  const how = resets
    ? `when the limit resets, ${clock(iso(resets))}`
    : `no reset time given: defaultWait ${rl.defaultWait ?? RATE_LIMIT_DEFAULTS.defaultWait}`;
  const message = `until ${clock(until)} (${how}): ${clip(text.replace(/\s+/g, ' ').trim() || 'limit reported')}`;
  out.pause = {
    run: s.run ?? 0,
    reason: 'RateLimited',
    since,
    until,
    message,
    holdsSlot: rl.holdSlot ?? RATE_LIMIT_DEFAULTS.holdSlot,
  };
  out.reason = { reason: 'RateLimited', message: `paused (RateLimited) ${message}` };
  out.events.push({ type: 'Normal', reason: SessionReason.Paused, message: `RateLimited ${message}` });
  out.dueMs = Date.parse(until) - i.now;
  return out;
}

function enterBudget(i: PauseInput, policy: SessionPolicy, out: PauseOutput, interrupt = false): PauseOutput {
  const stop = policy.spec?.budget?.action === 'Stop';
  const message = interrupt
    ? `${budgetMessage(policy, `interrupted mid-turn and ${stop ? 'stopping' : 'paused'} (enforce Hard)`)}` +
      `; overshoot ${overshoot(policy)}`
    : budgetMessage(policy, 'paused at an idle point');
  // A budget pause keeps its slot: when the window has room, its run goes on before new ones start.
  out.pause = { run: i.status.run ?? 0, reason: 'BudgetExceeded', since: iso(i.now), message, holdsSlot: true };
  if (interrupt) {
    out.pause.interruptedAt = iso(i.now);
    out.interrupt = true;
    out.dueMs = INTERRUPT_AGAIN_MS;
  }
  out.reason = { reason: 'BudgetExceeded', message };
  out.events.push({ type: 'Warning', reason: SessionReason.BudgetExceeded, message });
  return out;
}

/** How far past its limits the policy's use is ("+312k tokens, +$1.94"), when the interrupt is sent. */
function overshoot(policy: SessionPolicy): string {
  const b = policy.status?.budget;
  const spec = policy.spec?.budget ?? {};
  const parts: string[] = [];
  if (b && spec.maxTokens !== undefined)
    parts.push(`+${shortCount(Math.max(0, b.usedTokens - spec.maxTokens))} tokens`);
  if (b && spec.maxCostUSD !== undefined) parts.push(`+$${Math.max(0, b.usedCostUSD - spec.maxCostUSD).toFixed(2)}`);
  return parts.join(', ') || 'unknown';
}

function resume(i: PauseInput, out: PauseOutput, how: string): PauseOutput {
  const cur = out.pause!;
  out.pause = undefined;
  const s = i.status;
  out.reason = { reason: 'Running', message: `running in tmux session ${s.tmuxSession}` };
  const held = formatDuration(Math.max(0, i.now - Date.parse(cur.since)));
  out.events.push({
    type: 'Normal',
    reason: SessionReason.Resumed,
    message: `Resumed after ${held} ${cur.reason}: ${how}`,
  });
  return out;
}
