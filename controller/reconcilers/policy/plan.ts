/**
 * A SessionPolicy's budget, pure: the tokens and cost of every session the policy governs, summed
 * over its window from each session's ledger (status.usage.hourly, usage.ts), into status.budget.
 *
 * The window is counted in whole hours: the hour `now - window` falls in and every later one, so
 * a 24h window sums 24 to 25 hours of ledger (the ledger keeps 25) and windowStart moves once an
 * hour, not on every pass. A session counts for the policy it resolves to (api/policy.ts), the one
 * whose limits it runs under. A deleted session's usage leaves the sum with it.
 */
import { PolicyReason } from '../../api/event-reasons.js';
import { parseDuration } from '../../api/duration.js';
import type { AgentSession, BudgetStatus, SessionPolicy } from '../../api/kinds.js';
import { BUDGET_DEFAULTS, MAX_BUDGET_WINDOW_MS, shortCount } from '../../api/pause.js';
import { resolvePolicy } from '../../api/policy.js';
import type { EventType } from '../../client/events.js';

const HOUR = 3600_000;

export interface BudgetInput {
  policy: SessionPolicy;
  /** The sessions of the policy's namespace. */
  sessions: AgentSession[];
  /** Every SessionPolicy (which one a session resolves to). */
  policies: SessionPolicy[];
  now: number;
}

export interface BudgetOutput {
  /** The new status.budget (undefined: the policy has no budget). */
  budget?: BudgetStatus;
  events: { type: EventType; reason: string; message: string }[];
  /** When the oldest counted hour leaves the window. */
  requeueAfterMs?: number;
}

export function planBudget(i: BudgetInput): BudgetOutput {
  const spec = i.policy.spec?.budget;
  if (!spec) return { events: [] };
  const windowText = spec.window ?? BUDGET_DEFAULTS.window;
  const windowMs = Math.min(parseDuration(windowText), MAX_BUDGET_WINDOW_MS);
  const start = Math.floor((i.now - windowMs) / HOUR) * HOUR;
  const name = i.policy.metadata.name;
  let tokens = 0;
  let cost = 0;
  let priced = true;
  let counted = 0;
  for (const s of i.sessions) {
    if (resolvePolicy(s, i.policies)?.metadata.name !== name) continue;
    counted++;
    for (const h of s.status?.usage?.hourly ?? []) {
      if (Date.parse(h.hour) < start) continue;
      tokens += h.tokens;
      if (h.costUSD === undefined) priced = false;
      else cost += h.costUSD;
    }
  }
  cost = Math.round(cost * 1e6) / 1e6;
  const overTokens = spec.maxTokens !== undefined && tokens >= spec.maxTokens;
  const overCost = spec.maxCostUSD !== undefined && cost >= spec.maxCostUSD;
  const exceeded = overTokens || overCost;
  const parts: string[] = [];
  if (spec.maxTokens !== undefined) parts.push(`${shortCount(tokens)}/${shortCount(spec.maxTokens)}`);
  if (spec.maxCostUSD !== undefined)
    parts.push(`$${cost.toFixed(2)}/$${spec.maxCostUSD.toFixed(2)}${priced ? '' : '+'}`);
  const prev = i.policy.status?.budget;
  const budget: BudgetStatus = {
    windowStart: new Date(start).toISOString(),
    usedTokens: tokens,
    usedCostUSD: cost,
    priced,
    exceeded,
    display: parts.join(', ') || shortCount(tokens),
    ...(exceeded ? { since: prev?.exceeded && prev.since ? prev.since : new Date(i.now).toISOString() } : {}),
  };
  const events: BudgetOutput['events'] = [];
  const action = spec.action ?? BUDGET_DEFAULTS.action;
  if (exceeded && !prev?.exceeded)
    events.push({
      type: 'Warning',
      reason: PolicyReason.BudgetExceeded,
      message:
        `${budget.display} used in ${windowText} by ${counted} session${counted === 1 ? '' : 's'}: ` +
        (spec.enforce === 'Hard'
          ? `busy ones are interrupted and ${action === 'Stop' ? 'stop' : 'pause'} now, the others at their ` +
            'next idle point, and new ones wait'
          : `${action === 'Stop' ? 'they stop' : 'they pause'} at their next idle point and new ones wait`) +
        (priced || spec.maxCostUSD === undefined ? '' : ' (some use is not priced: the cost is a lower bound)'),
    });
  else if (!exceeded && prev?.exceeded)
    events.push({
      type: 'Normal',
      reason: PolicyReason.BudgetAvailable,
      message:
        `${budget.display} used in ${windowText}: ` +
        (action === 'Stop' ? 'new sessions may start' : 'paused sessions resume'),
    });
  // The sum only falls when an hour leaves the window: look again then (and the sessions' writes wake it too).
  return { budget, events, requeueAfterMs: start + HOUR + windowMs - i.now + 1000 };
}
