/**
 * The stale-run sweep's selection (reconcilers/session/sweep.ts): which runs in a node's tmux are
 * no longer its own — judged from the run's `@orchctl-epoch` tag against the session as the
 * store has it now — and that a run still its own, another store's pane and a pre-binding run
 * (no epoch in its tag) are left alone.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, BindingStatus } from '../../../../controller/api/session.js';
import { paneEpoch, runsOfOtherNodes, staleRun } from '../../../../controller/reconcilers/session/sweep.js';

const STORE = 'store-1';
const pane = (epoch: string, over: { uid?: string; store?: string } = {}) => ({
  uid: 'u-1',
  store: STORE,
  epoch,
  ...over,
});
const bound = (b?: BindingStatus): AgentSession => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name: 's', namespace: 'default', uid: 'u-1' },
  spec: {},
  status: { phase: 'Running', run: 2, ...(b ? { binding: b } : {}) },
});
const at = (nodeName: string, epoch: number): BindingStatus => ({ nodeName, epoch, boundAt: '2026-03-01T10:00:00Z' });

describe('run tags', () => {
  it('carry the epoch when there is one; an older run has none', () => {
    expect(paneEpoch({ epoch: '5' })).toBe(5);
    expect(paneEpoch({ epoch: '' })).toBeUndefined();
    expect(paneEpoch({ epoch: 'x' })).toBeUndefined();
  });
});

describe('staleRun', () => {
  it.each([
    ['bound here at the run epoch: kept', pane('3'), bound(at('n1', 3)), undefined],
    ['bound elsewhere: killed', pane('3'), bound(at('n2', 4)), 'the session is bound to node n2 (epoch 4)'],
    ["bound elsewhere at the run's own epoch (a renamed node's run): kept", pane('3'), bound(at('n2', 3)), undefined],
    ['bound here at a newer epoch: killed', pane('3'), bound(at('n1', 4)), "the run's epoch 3 is not the binding's 4"],
    [
      'unbound (its node declared lost): killed',
      pane('3'),
      bound(),
      'the session was unbound from this node (run epoch 3)',
    ],
    ['no epoch in the tag, bound here: adopted', pane(''), bound(at('n1', 7)), undefined],
    ['no epoch in the tag, unbound (an upgrade): kept', pane(''), bound(), undefined],
    [
      'no epoch in the tag, bound elsewhere: killed',
      pane(''),
      bound(at('n2', 1)),
      'the session is bound to node n2 (epoch 1)',
    ],
    ['object gone, this store: killed', pane('3'), undefined, 'its AgentSession no longer exists'],
    ['object gone, another store: an orphan, not ours to kill', pane('3', { store: 'other' }), undefined, undefined],
    ['not started by orchctl', pane('', { uid: '' }), undefined, undefined],
  ] as [string, ReturnType<typeof pane>, AgentSession | undefined, string | undefined][])('%s', (_w, p, s, want) => {
    expect(staleRun(p, s, 'n1', STORE)).toBe(want);
  });
});

describe('runsOfOtherNodes', () => {
  const session = (uid: string, b?: BindingStatus): AgentSession => ({
    ...bound(b),
    metadata: { name: uid, namespace: 'default', uid },
  });
  const on = (session: string, uid: string, epoch: string, store = STORE) => ({ session, uid, epoch, store });

  it("counts the runs started under another node's current binding, one per tmux session", () => {
    const a = session('a', at('vm', 2));
    const b = session('b', at('vm', 5));
    const held = runsOfOtherNodes(
      [on('ta', 'a', '2'), on('ta', 'a', '2'), on('tb', 'b', '5')],
      [a, b],
      'renamed',
      STORE,
    );
    expect([...held]).toEqual([['vm', [a, b]]]);
  });

  it("leaves out what is not another node's run: ours, stale, unbound, gone, another store, untagged", () => {
    const sessions = [
      session('mine', at('renamed', 1)),
      session('moved', at('n2', 4)),
      session('unbound'),
      session('other-store', at('vm', 1)),
    ];
    const panes = [
      on('t1', 'mine', '1'),
      on('t2', 'moved', '3'),
      on('t3', 'unbound', '1'),
      on('t4', 'gone', '1'),
      on('t5', 'other-store', '1', 'store-2'),
      on('t6', '', ''),
    ];
    expect(runsOfOtherNodes(panes, sessions, 'renamed', STORE).size).toBe(0);
  });

  it('a run without an epoch counts only when its session is bound to the name this home ran under', () => {
    const s = session('old', at('vm', 1));
    expect(runsOfOtherNodes([on('t', 'old', '')], [s], 'renamed', STORE, 'vm').get('vm')).toEqual([s]);
    expect(runsOfOtherNodes([on('t', 'old', '')], [s], 'renamed', STORE, 'other').size).toBe(0);
    expect(runsOfOtherNodes([on('t', 'old', '')], [s], 'renamed', STORE).size).toBe(0);
  });
});
