/**
 * Node object metrics (kube_node_* style, named like node_exporter's where there is one): what
 * each Node's status says about its host. They come from the Node objects in the informer cache,
 * not from /proc at scrape time, so they are what scheduling and admission decisions were based
 * on, and every node in the store is reported by whichever controller is scraped. Beside them the
 * scheduler's counters (SchedulerMetrics), counted by the process that schedules.
 */
import { getCondition } from '../api/conditions.js';
import { Counter, type Registry } from 'prom-client';
import type { SchedulerMetricsHooks } from '../api/metrics-hooks.js';
import type { Node, NodeStatus } from '../api/node.js';
import { type Phase, TERMINAL_PHASES } from '../api/phases.js';
import type { AgentSession } from '../api/session.js';
import { ScrapeFamily, unixSeconds } from './family.js';

/** Sessions bound to each node whose run is not finished (what counts against spec.maxSessions). */
function boundPerNode(sessions: AgentSession[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const s of sessions) {
    const node = s.status?.binding?.nodeName;
    if (node && !TERMINAL_PHASES.has(s.status?.phase as Phase)) n.set(node, (n.get(node) ?? 0) + 1);
  }
  return n;
}

export function registerNodeMetrics(registry: Registry, nodes: () => Node[], sessions?: () => AgentSession[]): void {
  const value = (name: string, help: string, get: (s: NodeStatus, n: Node) => number | undefined) =>
    new ScrapeFamily(registry, {
      name,
      help,
      type: 'gauge',
      labelNames: ['node'],
      objects: nodes,
      id: (n) => [n.metadata.name],
      series: (n, emit) => {
        const v = get(n.status ?? {}, n);
        if (typeof v === 'number' && Number.isFinite(v)) emit([], v);
      },
    });
  new ScrapeFamily(registry, {
    name: 'orchctl_node_ready',
    help: 'Whether the node is Ready (1), or not Ready or lost: Ready=False or Unknown (0).',
    type: 'gauge',
    labelNames: ['node'],
    objects: nodes,
    id: (n) => [n.metadata.name],
    series: (n, emit) => emit([], getCondition(n.status?.conditions, 'Ready')?.status === 'True' ? 1 : 0),
  });
  if (sessions) {
    // Counted once per scrape (when the family lists its nodes), not once per node.
    let bound = new Map<string, number>();
    new ScrapeFamily(registry, {
      name: 'orchctl_node_sessions_bound',
      help: 'Sessions bound to the node whose run is not finished (what counts against spec.maxSessions).',
      type: 'gauge',
      labelNames: ['node'],
      objects: () => {
        bound = boundPerNode(sessions());
        return nodes();
      },
      id: (n) => [n.metadata.name],
      series: (n, emit) => emit([], bound.get(n.metadata.name) ?? 0),
    });
  }
  value(
    'orchctl_node_max_sessions',
    'spec.maxSessions of the node (absent when unlimited).',
    (_s, n) => n.spec?.maxSessions,
  );
  value('orchctl_node_heartbeat_age_seconds', "Seconds since the node's agent last refreshed its status.", (s) => {
    const t = unixSeconds(s.heartbeatTime);
    return t === undefined ? undefined : Math.max(0, Date.now() / 1000 - t);
  });
  value('orchctl_node_cpus', 'Logical CPUs of the node.', (s) => s.capacity?.cpu);
  value('orchctl_node_load1', '1-minute load average of the node.', (s) => s.loadAverage?.[0]);
  value('orchctl_node_load5', '5-minute load average of the node.', (s) => s.loadAverage?.[1]);
  value('orchctl_node_load15', '15-minute load average of the node.', (s) => s.loadAverage?.[2]);
  value(
    'orchctl_node_memory_total_bytes',
    'Total physical memory of the node in bytes.',
    (s) => s.capacity?.memoryBytes,
  );
  value(
    'orchctl_node_memory_available_bytes',
    'Memory available on the node in bytes (MemAvailable on Linux).',
    (s) => s.free?.memoryBytes,
  );
  value(
    'orchctl_node_disk_total_bytes',
    "Size in bytes of the filesystem holding orchctl's state directory.",
    (s) => s.capacity?.diskBytes,
  );
  value(
    'orchctl_node_disk_free_bytes',
    "Free bytes on the filesystem holding orchctl's state directory.",
    (s) => s.free?.diskBytes,
  );
  value(
    'orchctl_node_heartbeat_time_seconds',
    "Last time the node's controller refreshed its status, in Unix seconds.",
    (s) => unixSeconds(s.heartbeatTime),
  );
  value(
    'orchctl_node_spec_unschedulable',
    'Whether new sessions are kept off the node (spec.unschedulable).',
    (_s, n) => (n.spec?.unschedulable ? 1 : 0),
  );
}

/** What the scheduler reports: kube-scheduler's schedule_attempts_total, and why Nodes were filtered out. */
export class SchedulerMetrics implements SchedulerMetricsHooks {
  private readonly attempts: Counter<'result'>;
  private readonly reasons: Counter<'reason'>;

  constructor(registry: Registry) {
    this.attempts = new Counter({
      name: 'orchctl_scheduler_schedule_attempts_total',
      help: 'Attempts to place a session on a node, by result (scheduled, unschedulable, error).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.reasons = new Counter({
      name: 'orchctl_scheduler_unschedulable_reasons_total',
      help:
        'Unschedulable attempts by a reason that filtered out at least one node (NotReady, NodeSelector, ' +
        'ProjectPath, TooManySessions, InsufficientMemory, ...).',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const r of ['scheduled', 'unschedulable', 'error']) this.attempts.inc({ result: r }, 0);
  }

  onScheduleAttempt(result: 'scheduled' | 'unschedulable' | 'error', reasons: readonly string[] = []): void {
    this.attempts.inc({ result });
    for (const reason of reasons) this.reasons.inc({ reason });
  }
}
