/** The per-node gauges added for several hosts, and the scheduler's counters, as the registry renders them. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../../controller/api/node.js';
import type { AgentSession } from '../../../controller/api/session.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { registerNodeMetrics, SchedulerMetrics } from '../../../controller/metrics/nodes.js';
import { parseExposition } from '../../support/prom-text.js';

const T = '2026-01-01T00:00:00Z';

const node = (name: string, ready: string, spec: Node['spec'] = {}): Node =>
  ({
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name },
    spec,
    status: {
      heartbeatTime: new Date(Date.now() - 30_000).toISOString(),
      conditions: [{ type: 'Ready', status: ready, reason: 'R', message: '', lastTransitionTime: T }],
    },
  }) as Node;

const session = (name: string, nodeName: string | undefined, phase: string): AgentSession =>
  ({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {},
    status: { phase, ...(nodeName ? { binding: { nodeName, epoch: 1, boundAt: T } } : {}) },
  }) as AgentSession;

describe('node metrics', () => {
  it('ready, sessions bound (unfinished only), max sessions and heartbeat age per node', async () => {
    const registry = new Registry();
    const nodes = [node('a', 'True', { maxSessions: 4 }), node('b', 'Unknown')];
    const sessions = [
      session('s1', 'a', 'Running'),
      session('s2', 'a', 'Pending'),
      session('s3', 'a', 'Succeeded'),
      session('s4', 'b', 'Backoff'),
      session('s5', undefined, 'Pending'),
    ];
    registerNodeMetrics(
      registry,
      () => nodes,
      () => sessions,
    );
    const x = parseExposition(await registry.metrics());
    expect(x.value('orchctl_node_ready', { node: 'a' })).toBe(1);
    expect(x.value('orchctl_node_ready', { node: 'b' })).toBe(0);
    expect(x.value('orchctl_node_sessions_bound', { node: 'a' })).toBe(2);
    expect(x.value('orchctl_node_sessions_bound', { node: 'b' })).toBe(1);
    expect(x.value('orchctl_node_max_sessions', { node: 'a' })).toBe(4);
    expect(x.find('orchctl_node_max_sessions', { node: 'b' })).toEqual([]);
    const age = x.value('orchctl_node_heartbeat_age_seconds', { node: 'a' }) ?? 0;
    expect(age).toBeGreaterThanOrEqual(30);
    expect(age).toBeLessThan(40);
  });

  it('scheduling attempts by result from 0, and each reason that filtered nodes out', async () => {
    const registry = new Registry();
    const m = new SchedulerMetrics(registry);
    let x = parseExposition(await registry.metrics());
    expect(x.value('orchctl_scheduler_schedule_attempts_total', { result: 'unschedulable' })).toBe(0);
    m.onScheduleAttempt('scheduled');
    m.onScheduleAttempt('unschedulable', ['InsufficientMemory', 'NodeSelector']);
    m.onScheduleAttempt('unschedulable', ['InsufficientMemory']);
    x = parseExposition(await registry.metrics());
    expect(x.value('orchctl_scheduler_schedule_attempts_total', { result: 'scheduled' })).toBe(1);
    expect(x.value('orchctl_scheduler_schedule_attempts_total', { result: 'unschedulable' })).toBe(2);
    expect(x.value('orchctl_scheduler_unschedulable_reasons_total', { reason: 'InsufficientMemory' })).toBe(2);
    expect(x.value('orchctl_scheduler_unschedulable_reasons_total', { reason: 'NodeSelector' })).toBe(1);
  });
});
