/** Pause and budget metrics from objects as the caches hold them (metrics/pauses.ts) and the pauses counter. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { AgentSession, SessionPolicy } from '../../../controller/api/kinds.js';
import { registerPauseMetrics } from '../../../controller/metrics/pauses.js';
import { RunMetrics } from '../../../controller/metrics/runs.js';
import { parseExposition } from '../../support/prom-text.js';

const session = (name: string, status: AgentSession['status']) =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    status,
  }) as AgentSession;
const pause = { run: 2, since: '2026-11-24T10:00:00Z', message: 'm', holdsSlot: true };

describe('pause and budget metrics', () => {
  it('paused sessions by reason, the budget figures per policy, and pauses begun', async () => {
    const registry = new Registry();
    const sessions = [
      session('limited', { phase: 'Running', run: 2, pause: { ...pause, reason: 'RateLimited' } }),
      session('broke', { phase: 'Running', run: 2, pause: { ...pause, reason: 'BudgetExceeded' } }),
      session('working', { phase: 'Running', run: 1 }),
      session('stale-pause', { phase: 'Running', run: 3, pause: { ...pause, reason: 'RateLimited' } }),
      session('done', { phase: 'Succeeded', run: 1 }),
    ];
    const policies = [
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'team', namespace: 'default' },
        spec: { budget: { maxTokens: 1000 } },
        status: {
          budget: {
            windowStart: '2026-11-23T10:00:00Z',
            usedTokens: 1200,
            usedCostUSD: 0.42,
            priced: true,
            exceeded: true,
            display: '1.2k/1k',
          },
        },
      },
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'none', namespace: 'default' },
        spec: {},
      },
    ] as SessionPolicy[];
    const runs = new RunMetrics(registry);
    runs.pauses = registerPauseMetrics(
      registry,
      () => sessions,
      () => policies,
    );
    runs.onPaused(sessions[0], 'RateLimited');
    runs.onPaused(sessions[0], 'RateLimited');
    const x = parseExposition(await registry.metrics());
    const paused = (name: string, reason: string) =>
      x.value('orchctl_agentsession_paused', { namespace: 'default', agentsession: name, reason });
    expect(paused('limited', 'RateLimited')).toBe(1);
    expect(paused('limited', 'BudgetExceeded')).toBe(0);
    expect(paused('broke', 'BudgetExceeded')).toBe(1);
    expect(paused('working', 'RateLimited')).toBe(0);
    expect(paused('stale-pause', 'RateLimited')).toBe(0); // a pause of an earlier run
    expect(x.find('orchctl_agentsession_paused', { agentsession: 'done' })).toHaveLength(0);
    const team = { namespace: 'default', sessionpolicy: 'team' };
    expect(x.value('orchctl_sessionpolicy_tokens', team)).toBe(1200);
    expect(x.value('orchctl_sessionpolicy_cost_usd', team)).toBe(0.42);
    expect(x.value('orchctl_sessionpolicy_budget_exceeded', team)).toBe(1);
    expect(x.find('orchctl_sessionpolicy_tokens', { sessionpolicy: 'none' })).toHaveLength(0);
    expect(x.value('orchctl_agentsession_pauses_total', { namespace: 'default', reason: 'RateLimited' })).toBe(2);
  });
});
