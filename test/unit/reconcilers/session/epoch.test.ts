/**
 * Runs and epochs on the node side (reconcilers/session/epoch.ts): which runs are stale, and what a
 * node that takes over a session whose run was on a lost node plans — Pending with the run count
 * kept, the lost run's timers and pane gone, a note that names the lost node, an Event and an
 * audit line — and that the plan then launches run N+1 at once with that note and the new epoch.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus } from '../../../../controller/api/session.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import { boundTo, staleEpoch, takeOver } from '../../../../controller/reconcilers/session/epoch.js';
import { plan } from '../../../../controller/reconcilers/session/plan.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const MB = 1048576;
const HOST: HostSnapshot = {
  cpu: 4,
  loadAverage: [1, 1, 1],
  memoryTotalBytes: 16384 * MB,
  memoryAvailableBytes: 8192 * MB,
  diskTotalBytes: 100_000 * MB,
  diskFreeBytes: 50_000 * MB,
  uptimeSeconds: 1000,
};
const binding = (nodeName: string, epoch: number) => ({ nodeName, epoch, boundAt: '2026-03-01T09:59:00Z' });

function session(status: AgentSessionStatus): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', uid: 'u-1', generation: 1 },
    spec: { agentRef: 'a', prompt: 'fix it', restartPolicy: 'OnFailure' },
    status,
  };
}

const lostOnA: AgentSessionStatus = {
  phase: 'Running',
  run: 3,
  restarts: 1,
  tmuxSession: 'orchctl-default-s',
  workspace: '/home-a/runs/default/s/3',
  deadlineTime: '2026-03-01T11:00:00Z',
  lifecycle: { runGeneration: 1, epoch: 1, nodeName: 'a' },
  binding: binding('b', 2),
  conditions: [
    {
      type: 'NodeLost',
      status: 'True',
      reason: 'NodeLost',
      message: 'node a lost (last seen 2026-03-01T09:58:00Z): unbound, to be placed on another node',
      lastTransitionTime: '2026-03-01T09:58:40Z',
    },
  ],
};

describe('staleEpoch', () => {
  it.each([
    ['an active run under an older epoch', lostOnA, 1],
    ['a run under the binding epoch', { ...lostOnA, lifecycle: { epoch: 2 } }, undefined],
    ['a run that predates bindings (no epoch)', { ...lostOnA, lifecycle: {} }, undefined],
    ['an ended run of an older epoch (nothing to take over)', { ...lostOnA, phase: 'Failed' }, undefined],
    ['Backoff under an older epoch (no run alive)', { ...lostOnA, phase: 'Backoff' }, undefined],
    ['Stopping under an older epoch', { ...lostOnA, phase: 'Stopping' }, 1],
    ['no binding', { ...lostOnA, binding: undefined }, undefined],
    [
      'a run node lifecycle ended when it unbound the session (Pending, NodeLost): taken over',
      { ...lostOnA, phase: 'Pending', reason: 'NodeLost' },
      1,
    ],
    [
      'the same, once taken over (NodeLost: RunMoved)',
      {
        ...lostOnA,
        phase: 'Pending',
        reason: 'NodeLost',
        conditions: [{ type: 'NodeLost', status: 'False', reason: 'RunMoved', lastTransitionTime: '' }],
      },
      undefined,
    ],
    [
      'Pending for another reason under an older epoch',
      { ...lostOnA, phase: 'Pending', reason: 'Admission' },
      undefined,
    ],
  ] as [string, AgentSessionStatus, number | undefined][])('%s', (_what, status, want) => {
    expect(staleEpoch(status)).toBe(want);
  });

  it('boundTo is the binding naming the node', () => {
    expect(boundTo(session(lostOnA), 'b')).toBe(true);
    expect(boundTo(session(lostOnA), 'a')).toBe(false);
    expect(boundTo(session({}), 'b')).toBe(false);
  });
});

describe('takeOver', () => {
  it('ends the lost run in status only and says where it was', () => {
    const m = takeOver(session(lostOnA), 'b', NOW)!;
    expect(m.status).toMatchObject({ phase: 'Pending', run: 3, restarts: 1, reason: 'NodeLost' });
    expect(m.status.message).toBe('run 3 was on node a, which was lost; starting run 4 on node b');
    for (const gone of ['tmuxSession', 'deadlineTime', 'stopRequestTime', 'nextRestartTime'] as const)
      expect(m.status[gone]).toBeUndefined();
    expect(m.status.conditions?.find((c) => c.type === 'NodeLost')).toMatchObject({
      status: 'False',
      reason: 'RunMoved',
    });
    expect(m.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'NodeLost' });
    expect(m.note).toContain('run 3) was on node a');
    expect(m.note).toContain('on node b');
    // No tmux effect: the lost run's pane is on another host.
    expect(m.effects.map((e) => e.type)).toEqual(['RecordEvent', 'Audit', 'Log']);
    expect(m.effects[0]).toMatchObject({ eventType: 'Warning', reason: 'RunMoved' });
  });

  it('names the epoch when the run did not record its node', () => {
    const m = takeOver(session({ ...lostOnA, lifecycle: { epoch: 1 } }), 'b', NOW)!;
    expect(m.status.message).toBe('run 3 was on the node of epoch 1, which was lost; starting run 4 on node b');
  });

  it('takes nothing over when the run is current', () => {
    expect(takeOver(session({ ...lostOnA, lifecycle: { epoch: 2 } }), 'b', NOW)).toBeUndefined();
  });

  it('then launches run N+1 at once with the note and records the new epoch', () => {
    const obj = session(lostOnA);
    const m = takeOver(obj, 'b', NOW)!;
    const agent = { command: ['sh'], promptDelivery: 'argument' as const };
    const out = plan({
      key: 'default/s',
      obj,
      status: m.status,
      observed: {
        pane: { kind: 'missing' },
        hasPanes: false,
        retag: [],
        moved: { note: m.note },
        admission: { activeUnderPolicy: 0, host: HOST, nodeUnschedulable: false },
      },
      resolved: { agent, workdir: '/repo', effective: effective(obj.spec ?? {}, undefined) },
      now: NOW,
    });
    const prepare = out.effects.find((e) => e.type === 'PrepareRun');
    expect(prepare).toMatchObject({ type: 'PrepareRun', run: 4, note: m.note });
    expect(out.status.phase).toBe('Starting');
    expect(out.status.restarts).toBe(1); // a move is not a restart
    expect(out.status.lifecycle).toMatchObject({ epoch: 2, nodeName: 'b' });
  });
});
