/**
 * Node object metrics (kube_node_* style, named like node_exporter's where there is one): what
 * each Node's status says about its host. They come from the Node objects in the informer cache,
 * not from /proc at scrape time, so they are what admission decisions were based on, and every
 * host in the store is reported by whichever controller is scraped.
 */
import type { Registry } from 'prom-client';
import type { Node, NodeStatus } from '../api/node.js';
import { ScrapeFamily, unixSeconds } from './family.js';

export function registerNodeMetrics(registry: Registry, nodes: () => Node[]): void {
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
