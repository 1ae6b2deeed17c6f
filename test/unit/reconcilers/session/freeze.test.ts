/**
 * The freeze pass (pure): a mark holds the session (SIGSTOP for a live run, every pass), records
 * status.frozen and one Frozen Event; without the mark a frozen session is thawed once (SIGCONT),
 * its time box moved on by the frozen time and its progress clock restarted, so neither the time
 * box nor the stall watchdog counts the time it was held.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSessionStatus } from '../../../../controller/api/session.js';
import { planFreeze } from '../../../../controller/reconcilers/session/freeze.js';

const T0 = Date.parse('2026-11-26T22:00:00Z');
const iso = (t: number) => new Date(t).toISOString();
const running: AgentSessionStatus = {
  phase: 'Running',
  run: 3,
  deadlineTime: iso(T0 + 10 * 60_000),
  agent: { run: 3, state: 'busy', lastEventAt: iso(T0 - 60_000) } as never,
};

describe('planFreeze', () => {
  it('a mark holds a live run: SIGSTOP on every pass, status.frozen and one Frozen Event', () => {
    const first = planFreeze({ status: running, mark: 'x by orchctl freeze', pane: { pid: 42 }, now: T0 });
    expect(first).toMatchObject({ hold: true, signal: 'SIGSTOP' });
    expect(first.status.frozen).toEqual({ since: iso(T0), run: 3, stopped: true, message: 'x by orchctl freeze' });
    expect(first.events).toMatchObject([{ type: 'Warning', reason: 'Frozen' }]);
    const again = planFreeze({ status: first.status, mark: 'x by orchctl freeze', pane: { pid: 42 }, now: T0 + 5000 });
    expect(again).toMatchObject({ hold: true, signal: 'SIGSTOP', events: [] });
    expect(again.status.frozen?.since).toBe(iso(T0));
  });

  it('a Pending session is held before it starts (no signal)', () => {
    const out = planFreeze({ status: { phase: 'Pending' }, mark: 'm', now: T0 });
    expect(out).toMatchObject({ hold: true, events: [{ reason: 'Frozen' }] });
    expect(out.signal).toBeUndefined();
    expect(out.status.frozen).toMatchObject({ run: 0, stopped: false });
  });

  it('thaw: SIGCONT once, the time box and the progress clock move on by the frozen time', () => {
    const frozen = planFreeze({ status: running, mark: 'm', pane: { pid: 42 }, now: T0 }).status;
    const later = T0 + 30 * 60_000; // longer than the time box left and the stall threshold
    const out = planFreeze({ status: frozen, pane: { pid: 42 }, now: later });
    expect(out).toMatchObject({ hold: false, signal: 'SIGCONT', events: [{ type: 'Normal', reason: 'Thawed' }] });
    expect(out.status.frozen).toBeUndefined();
    expect(out.status.deadlineTime).toBe(iso(T0 + 40 * 60_000));
    expect(out.status.agent?.lastEventAt).toBe(iso(later));
    expect(out.status.conditions?.find((c) => c.type === 'Frozen')).toMatchObject({ status: 'False' });
    // Never frozen: nothing to do.
    expect(planFreeze({ status: running, pane: { pid: 42 }, now: later })).toMatchObject({ hold: false, events: [] });
  });
});
