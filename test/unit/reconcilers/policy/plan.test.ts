/**
 * status.budget from the sessions' ledgers (pure): the window in whole hours, only the sessions
 * the policy governs, tokens and cost against maxTokens / maxCostUSD, the display of the
 * USED/BUDGET column, and one Event when the budget is crossed either way.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, SessionPolicy, UsageHour } from '../../../../controller/api/kinds.js';
import { planBudget } from '../../../../controller/reconcilers/policy/plan.js';

const NOW = Date.parse('2026-11-24T14:30:00Z');
const hour = (h: number) => new Date(Date.UTC(2026, 10, 24, h)).toISOString();

const policy = (budget: NonNullable<SessionPolicy['spec']>['budget'], status?: SessionPolicy['status']) =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name: 'team', namespace: 'default' },
    spec: { selector: { matchLabels: { team: 'a' } }, budget },
    ...(status ? { status } : {}),
  }) as SessionPolicy;

const session = (name: string, hourly: UsageHour[], labels: Record<string, string> = { team: 'a' }) =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', labels },
    spec: {},
    status: {
      usage: {
        run: 1,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        totalTokens: 0,
        priced: true,
        byModel: [],
        hourly,
      },
    },
  }) as AgentSession;

describe('planBudget', () => {
  const sessions = [
    session('a', [
      { hour: hour(12), tokens: 400_000, costUSD: 1.5 },
      { hour: hour(14), tokens: 300_000, costUSD: 1 },
    ]),
    session('b', [
      // 2026-11-23 13:00 is before the window's first hour (14:30 - 24h → from 2026-11-23 14:00).
      { hour: new Date(Date.UTC(2026, 10, 23, 13)).toISOString(), tokens: 9_000_000, costUSD: 50 },
      { hour: new Date(Date.UTC(2026, 10, 23, 14)).toISOString(), tokens: 500_000, costUSD: 0.6 },
    ]),
    session('other-team', [{ hour: hour(14), tokens: 5_000_000, costUSD: 9 }], { team: 'b' }),
  ];

  it('sums the governed sessions inside the window, in whole hours', () => {
    const out = planBudget({ policy: policy({ maxTokens: 2_000_000 }), sessions, policies: [policy({})], now: NOW });
    expect(out.budget).toEqual({
      windowStart: '2026-11-23T14:00:00.000Z',
      usedTokens: 1_200_000,
      usedCostUSD: 3.1,
      priced: true,
      exceeded: false,
      display: '1.2M/2M',
    });
    expect(out.events).toEqual([]);
    // The oldest counted hour (23rd 14:00) leaves the window at 15:00 today (+1 s).
    expect(out.requeueAfterMs).toBe(Date.parse('2026-11-24T15:00:01Z') - NOW);
  });

  it('crossing maxTokens: exceeded with its time, one BudgetExceeded Event; again nothing new', () => {
    const p = policy({ maxTokens: 1_000_000, action: 'Pause' });
    const out = planBudget({ policy: p, sessions, policies: [p], now: NOW });
    expect(out.budget).toMatchObject({ exceeded: true, display: '1.2M/1M', since: new Date(NOW).toISOString() });
    expect(out.events).toEqual([
      {
        type: 'Warning',
        reason: 'BudgetExceeded',
        message: '1.2M/1M used in 24h by 2 sessions: they pause at their next idle point and new ones wait',
      },
    ]);
    const later = planBudget({
      policy: { ...p, status: { budget: out.budget } },
      sessions,
      policies: [p],
      now: NOW + 60_000,
    });
    expect(later.events).toEqual([]);
    expect(later.budget?.since).toBe(out.budget?.since);
    // Raised: BudgetAvailable.
    const raised = policy({ maxTokens: 5_000_000 }, { budget: out.budget });
    const back = planBudget({ policy: raised, sessions, policies: [raised], now: NOW + 120_000 });
    expect(back.budget?.exceeded).toBe(false);
    expect(back.events.map((e) => e.reason)).toEqual(['BudgetAvailable']);
  });

  it('maxCostUSD: dollars in the display; an unpriced hour makes the cost a lower bound', () => {
    const p = policy({ maxCostUSD: 3, action: 'Stop' });
    const out = planBudget({ policy: p, sessions, policies: [p], now: NOW });
    expect(out.budget).toMatchObject({ usedCostUSD: 3.1, exceeded: true, display: '$3.10/$3.00' });
    expect(out.events[0].message).toMatch(/they stop at their next idle point/);
    const unpriced = [...sessions, session('c', [{ hour: hour(13), tokens: 10 }])];
    const u = planBudget({ policy: policy({ maxCostUSD: 5 }), sessions: unpriced, policies: [p], now: NOW });
    expect(u.budget).toMatchObject({ priced: false, display: '$3.10/$5.00+' });
  });

  it('a policy without a budget has no status.budget; a session another policy wins is not counted', () => {
    expect(planBudget({ policy: policy(undefined), sessions, policies: [], now: NOW })).toEqual({ events: [] });
    const other = {
      ...policy({}),
      metadata: { name: 'urgent', namespace: 'default' },
      spec: { selector: {}, priority: 10 },
    };
    const p = policy({ maxTokens: 10 });
    expect(
      planBudget({ policy: p, sessions, policies: [p, other as SessionPolicy], now: NOW }).budget?.usedTokens,
    ).toBe(0);
  });
});
