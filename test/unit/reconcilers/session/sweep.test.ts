/**
 * The stale-run sweep's selection (reconcilers/session/sweep.ts): which runs in a node's tmux are
 * no longer its own — judged from the run's `@orchctl-epoch` tag against the session as the
 * store has it now — and that a run still its own, another store's pane and a pre-binding run
 * (no epoch in its tag) are left alone.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, BindingStatus } from '../../../../controller/api/session.js';
import { paneEpoch, staleRun } from '../../../../controller/reconcilers/session/sweep.js';

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
