/**
 * Pauses and budgets (docs/long-running.md), kube-state-metrics style from the informer caches at
 * scrape time, plus the counter of pauses this controller began (SessionMetricsHooks.onPaused).
 *  - orchctl_agentsession_paused{namespace, agentsession, reason}: a StateSet over the pause reasons
 *    for each Running session (1 for the reason it is paused for); sum by (reason) is "sessions
 *    paused by reason";
 *  - orchctl_sessionpolicy_tokens / _cost_usd / _budget_exceeded{namespace, sessionpolicy}: what the
 *    policy's sessions used in its budget's window (status.budget), for policies with a budget.
 */
import { currentPause } from '../api/pause.js';
import { Counter, type Registry } from 'prom-client';
import type { AgentSession, PauseReason, SessionPolicy } from '../api/kinds.js';
import { ScrapeFamily } from './family.js';

const REASONS: readonly PauseReason[] = ['RateLimited', 'BudgetExceeded'];

export function registerPauseMetrics(
  registry: Registry,
  sessions: () => AgentSession[],
  policies: () => SessionPolicy[],
): Counter<'namespace' | 'reason'> {
  new ScrapeFamily(registry, {
    name: 'orchctl_agentsession_paused',
    help:
      'Whether a Running AgentSession is paused, by reason (StateSet over RateLimited and BudgetExceeded: 1 for ' +
      'the reason it is held for, all 0 when it is not paused; status.pause).',
    type: 'gauge',
    labelNames: ['namespace', 'agentsession', 'reason'],
    objects: sessions,
    id: (s) => [s.metadata.namespace ?? '', s.metadata.name],
    series: (s, emit) => {
      const st = s.status;
      if (st?.phase !== 'Running') return;
      const reason = currentPause(st)?.reason;
      for (const r of REASONS) emit([r], r === reason ? 1 : 0);
    },
  });
  const budget = (name: string, help: string, get: (b: NonNullable<SessionPolicy['status']>['budget']) => number) =>
    new ScrapeFamily(registry, {
      name,
      help,
      type: 'gauge',
      labelNames: ['namespace', 'sessionpolicy'],
      objects: policies,
      id: (p) => [p.metadata.namespace ?? '', p.metadata.name],
      series: (p, emit) => {
        const b = p.spec?.budget ? p.status?.budget : undefined;
        if (b) emit([], get(b));
      },
    });
  budget(
    'orchctl_sessionpolicy_tokens',
    "Tokens the SessionPolicy's sessions used in its budget's window (status.budget.usedTokens).",
    (b) => b?.usedTokens ?? 0,
  );
  budget(
    'orchctl_sessionpolicy_cost_usd',
    "Estimated USD the SessionPolicy's sessions spent in its budget's window, priced use only (status.budget).",
    (b) => b?.usedCostUSD ?? 0,
  );
  budget(
    'orchctl_sessionpolicy_budget_exceeded',
    "Whether the SessionPolicy's budget is reached (1) or not (0).",
    (b) => (b?.exceeded ? 1 : 0),
  );
  return new Counter({
    name: 'orchctl_agentsession_pauses_total',
    help: 'Pauses of AgentSession runs this controller began, by reason (RateLimited, BudgetExceeded).',
    labelNames: ['namespace', 'reason'],
    registers: [registry],
  });
}
