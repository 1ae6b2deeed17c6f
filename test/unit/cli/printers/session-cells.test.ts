/**
 * The `get sessions` cells computed from status: ACTIVITY (what the agent does now, frozen never
 * "stalled"), CONTEXT, COST, and the PHASE of a session its budget keeps from starting.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus } from '../../../../controller/api/session.js';
import { pausedCell } from '../../../../controller/cli/printers/paused.js';
import { activity, contextCell, costCell } from '../../../../controller/cli/printers/session-cells.js';

const T = '2026-11-26T22:00:00.000Z';
const session = (status: AgentSessionStatus): AgentSession =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's' },
    spec: {},
    status,
  }) as AgentSession;
const agent = (state: string, extra: object = {}) =>
  ({ run: 1, state, position: {}, counts: {}, hooks: true, turns: 1, ...extra }) as never;
const cond = (type: string, status: 'True' | 'False', reason = '', message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T,
});

describe('get sessions cells', () => {
  it('ACTIVITY says what a Running agent is doing now', () => {
    expect(activity(session({ phase: 'Running', run: 1, agent: agent('busy') }))).toBe('busy');
    expect(activity(session({ phase: 'Running', run: 1, agent: agent('idle') }))).toBe('idle');
    const asking = agent('waiting', { permission: { tool: 'Bash', command: 'rm -rf build', since: T } });
    expect(activity(session({ phase: 'Running', run: 1, agent: asking }))).toBe(
      'waiting: permission Bash rm -rf build',
    );
    const question = agent('waiting', {
      reported: { state: 'waiting', since: T, detail: 'Which database should I use?' },
    });
    expect(activity(session({ phase: 'Running', run: 1, agent: question }))).toBe(
      'waiting: Which database should I use?',
    );
    const stalled: AgentSessionStatus = {
      phase: 'Running',
      run: 1,
      agent: agent('busy'),
      conditions: [cond('Stalled', 'True')],
    };
    expect(activity(session(stalled))).toBe('stalled');
    const pause = { run: 1, reason: 'BudgetExceeded', since: T, message: '', holdsSlot: true } as const;
    expect(activity(session({ ...stalled, pause }))).toBe('paused: BudgetExceeded');
    // Frozen wins over everything, stalled included: it is held on purpose.
    const frozen = { since: T, run: 1, stopped: true, message: 'by orchctl freeze' };
    expect(activity(session({ ...stalled, frozen }))).toBe('frozen');
    expect(activity(session({ phase: 'Pending', frozen: { ...frozen, run: 0, stopped: false } }))).toBe('frozen');
    expect(activity(session({ phase: 'Succeeded', run: 1, agent: agent('exited') }))).toBe('<none>');
    // The agent's state of an earlier run is not this run's.
    expect(activity(session({ phase: 'Running', run: 2, agent: agent('busy') }))).toBe('<none>');
  });

  it("CONTEXT and COST are the current run's", () => {
    const context = { run: 1, usedTokens: 84_000, windowTokens: 200_000, percent: 42.4, lastStep: 40 };
    expect(contextCell(session({ run: 1, context }))).toBe('42%');
    expect(contextCell(session({ run: 2, context }))).toBe('<none>');
    const usage = { run: 1, totalTokens: 10, costUSD: 1.234, priced: true } as never;
    expect(costCell(session({ run: 1, usage }))).toBe('$1.23');
    expect(costCell(session({ run: 1 }))).toBe('<none>');
  });

  it('a Pending session its budget keeps from starting shows BudgetExceeded as its PHASE', () => {
    const held = { phase: 'Pending', conditions: [cond('Admitted', 'False', 'BudgetExceeded', 'budget exceeded')] };
    expect(pausedCell(session(held as AgentSessionStatus))).toBe('BudgetExceeded');
    const busy = { phase: 'Pending', conditions: [cond('Admitted', 'False', 'MaxConcurrentSessions')] };
    expect(pausedCell(session(busy as AgentSessionStatus))).toBeUndefined();
  });
});
