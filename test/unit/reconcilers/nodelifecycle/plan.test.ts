import { describe, expect, it } from 'vitest';
import type { Node } from '../../../../controller/api/node.js';
import type { AgentSession } from '../../../../controller/api/session.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import {
  checkGrace,
  type NodeLifecycleInput,
  planNodeLifecycle,
  type Probe,
} from '../../../../controller/reconcilers/nodelifecycle/plan.js';
import type { LeaseRecord } from '../../../../controller/store/store.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const GRACE = 40_000;

const node = (ready = 'True', heartbeat = iso(T0)): Node =>
  ({
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name: 'n1' },
    spec: {},
    status: {
      heartbeatTime: heartbeat,
      conditions: [
        {
          type: 'Ready',
          status: ready,
          reason: ready === 'Unknown' ? 'NodeStatusUnknown' : 'NodeAgentReady',
          message: '',
          lastTransitionTime: iso(T0),
        },
      ],
    },
  }) as Node;

const lease = (renew: number): LeaseRecord => ({
  name: 'orchctl-node-n1',
  holderIdentity: 'n1_1_x',
  acquireTime: iso(T0),
  renewTime: iso(renew),
  leaseDurationSeconds: 15,
  leaderTransitions: 0,
});

function session(name: string, phase: string, restartPolicy?: string, lost = false): AgentSession {
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { prompt: 'x', ...(restartPolicy ? { restartPolicy } : {}) },
    status: {
      phase,
      binding: { nodeName: 'n1', epoch: 1, boundAt: iso(T0) },
      ...(lost
        ? {
            conditions: [
              { type: 'NodeLost', status: 'True', reason: 'NodeLost', message: '', lastTransitionTime: iso(T0) },
            ],
          }
        : {}),
    },
  } as AgentSession;
}

/**
 * A fake clock: the node and lease looked at again and again (a change given stays, as in the store),
 * the probe carried over as the reconciler does.
 */
function monitor(base: Omit<NodeLifecycleInput, 'now' | 'prev' | 'graceMs'>) {
  let prev: Probe | undefined;
  let world = base;
  return (now: number, change: Partial<NodeLifecycleInput> = {}) => {
    world = { ...world, ...change };
    const r = planNodeLifecycle({ ...world, now, prev, graceMs: GRACE });
    prev = r.probe;
    return r;
  };
}

const types = (r: ReturnType<typeof planNodeLifecycle>) =>
  r.sessions.map((a) => `${a.session.metadata.name}:${a.type}`);

describe('node lifecycle', () => {
  const sessions = [
    session('always', 'Running', 'Always'),
    session('onfailure', 'Running', 'OnFailure'),
    session('never', 'Running'),
    session('pending', 'Pending'),
    session('backoff', 'Backoff', 'Never'),
    session('done', 'Succeeded'),
  ];

  it('a node renewing its lease stays Ready; one that stops is Unknown after its lease, its sessions NodeLost', () => {
    const look = monitor({ node: node(), lease: lease(T0), sessions });
    const first = look(T0);
    expect(first).toMatchObject({ lost: false, sessions: [], requeueAfterMs: 15_000 });
    expect(first.ready).toBeUndefined();
    // Renewed at +5 s: seen then; the lease counts from there.
    expect(look(T0 + 5000, { lease: lease(T0 + 5000) })).toMatchObject({ lost: false, requeueAfterMs: 15_000 });
    expect(look(T0 + 19_999).lost).toBe(false);
    const lost = look(T0 + 20_000);
    expect(lost.lost).toBe(true);
    expect(lost.ready).toMatchObject({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' });
    expect(types(lost)).toEqual([
      'always:MarkLost',
      'onfailure:MarkLost',
      'never:MarkLost',
      'pending:MarkLost',
      'backoff:MarkLost',
    ]);
    expect(lost.sessions[0].message).toContain('moves to another node');
    expect(lost.sessions[2].message).toContain('is failed');
    // The grace counts from the last renewal seen (+5 s): 40 s later.
    expect(lost.requeueAfterMs).toBe(25_000);
  });

  it('after the grace: restartable runs and run-less sessions are unbound, a Never run is failed', () => {
    const marked = sessions.map((s) => session(s.metadata.name, s.status!.phase!, s.spec?.restartPolicy, true));
    const look = monitor({ node: node('Unknown'), lease: lease(T0), sessions: marked });
    look(T0); // first seen at T0
    const during = look(T0 + 39_999);
    expect(during.sessions).toEqual([]); // NodeLost already said, grace not over
    expect(during.ready).toBeUndefined(); // already Unknown
    const after = look(T0 + GRACE);
    expect(types(after)).toEqual([
      'always:Unbind',
      'onfailure:Unbind',
      'never:Fail',
      'pending:Unbind',
      'backoff:Unbind',
    ]);
    expect(after.sessions[2].message).toContain('restartPolicy Never: not restarted');
    expect(after.requeueAfterMs).toBeUndefined();
  });

  it('a desiredState Stopped run on a lost node is ended, not moved; a deleted session moves (its finalizer)', () => {
    const stopped = {
      ...session('s', 'Running', 'Always', true),
      spec: { prompt: 'x', restartPolicy: 'Always', desiredState: 'Stopped' },
    } as AgentSession;
    const deleted = session('d', 'Running', undefined, true);
    deleted.metadata.deletionTimestamp = iso(T0);
    const look = monitor({ node: node('Unknown'), lease: lease(T0), sessions: [stopped, deleted] });
    look(T0);
    expect(types(look(T0 + GRACE))).toEqual(['s:Fail', 'd:Unbind']);
  });

  it('a node seen renewing again is Ready=True and its sessions NodeLost=False', () => {
    const marked = [session('a', 'Running', 'Always', true), session('b', 'Running')];
    const look = monitor({ node: node('Unknown'), lease: lease(T0), sessions: marked });
    look(T0);
    look(T0 + 30_000);
    const back = look(T0 + 31_000, { lease: lease(T0 + 31_000) });
    expect(back.lost).toBe(false);
    expect(back.ready).toMatchObject({ status: 'True', reason: 'NodeLeaseRenewed' });
    expect(types(back)).toEqual(['a:Found']);
  });

  it('a control plane that just started gives every node a full lease, whatever its timestamps say', () => {
    const look = monitor({ node: node('True', iso(T0 - 3_600_000)), lease: lease(T0 - 3_600_000), sessions });
    expect(look(T0).lost).toBe(false);
    expect(look(T0 + 14_000).lost).toBe(false);
    expect(look(T0 + 15_000).lost).toBe(true);
  });

  it('a node without a lease is judged by its heartbeat, over 40 s', () => {
    const look = monitor({ node: node(), sessions: [] });
    look(T0);
    expect(look(T0 + 39_000).lost).toBe(false);
    expect(look(T0 + 39_500, { node: node('True', iso(T0 + 39_000)) }).lost).toBe(false); // a heartbeat
    expect(look(T0 + 79_499).lost).toBe(false);
    expect(look(T0 + 79_500)).toMatchObject({ lost: true, ready: { message: expect.stringContaining('heartbeat') } });
  });

  it('the grace is bounded', () => {
    expect(checkGrace(40_000)).toBeUndefined();
    expect(checkGrace(10_000)).toMatch(/between 25s and 1h/);
    expect(checkGrace(7_200_000)).toMatch(/between/);
  });
});
