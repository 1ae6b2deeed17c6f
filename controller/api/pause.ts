/**
 * Rate-limit pauses and budgets (docs/long-running.md): the defaults, and how a pause and a budget
 * read, shared by the session plan, the policy reconciler, metrics and the CLI.
 */
import type { AgentSessionStatus, PauseStatus } from './session.js';
import type { SessionPolicy } from './session-policy.js';

export const RATE_LIMIT_DEFAULTS = {
  jitter: '30s',
  defaultWait: '15m',
  holdSlot: true,
  continueMessage: 'Continue where you left off.',
} as const;

export const BUDGET_DEFAULTS = { window: '24h', action: 'Pause' } as const;

/** The pause holding the current run, if any (a pause recorded for an earlier run is over). */
export const currentPause = (s: AgentSessionStatus | undefined): PauseStatus | undefined =>
  s?.pause && s.pause.run === s.run ? s.pause : undefined;

/** The budget hours are kept for (status.usage.hourly): the longest window plus the hour in progress. */
export const LEDGER_HOURS = 25;
export const MAX_BUDGET_WINDOW_MS = 24 * 3600_000;

/** HH:MM of an ISO time in this machine's zone ("until 15:04"). */
export function clock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '?';
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** "RateLimited (until 15:04)", "BudgetExceeded": a paused session's STATUS in `get`. */
export function pauseSummary(p: PauseStatus): string {
  return p.until ? `${p.reason} (until ${clock(p.until)})` : p.reason;
}

/** Whether a policy's budget holds its sessions now: exceeded, with an action that acts (Pause or Stop). */
export function budgetExceeded(policy: SessionPolicy | undefined): boolean {
  return !!policy?.spec?.budget && !!policy.status?.budget?.exceeded;
}

/** "1.2M", "950k", "12": a token count as the USED/BUDGET column shows it. */
export function shortCount(n: number): string {
  const trim = (x: number) => String(Math.round(x * 10) / 10);
  if (n >= 1e9) return `${trim(n / 1e9)}G`;
  if (n >= 1e6) return `${trim(n / 1e6)}M`;
  if (n >= 1e3) return `${trim(n / 1e3)}k`;
  return String(Math.round(n));
}
