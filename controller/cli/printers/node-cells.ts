/**
 * The `get nodes` cells a CRD column cannot compute: kubectl's STATUS "Ready" or
 * "NotReady,SchedulingDisabled", load over CPUs, free over total memory, labels as k=v. Apart from
 * nodes.ts (`describe node`) so that `get`, which loads the cells of every kind, loads no describe code.
 */
import { getCondition } from '../../api/conditions.js';
import type { Node } from '../../api/node.js';
import type { Resource } from '../../api/types.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Bytes as kubectl prints quantities: 512Mi, 15.6Gi. */
export function bytes(n: number | undefined): string {
  if (n === undefined) return '<none>';
  return n >= GiB ? `${Math.round((n / GiB) * 10) / 10}Gi` : `${Math.round(n / MiB)}Mi`;
}

/** kubectl's node STATUS: Ready or NotReady (False, or Unknown when lost), and SchedulingDisabled when cordoned. */
export function nodeStatus(n: Node): string {
  const ready = getCondition(n.status?.conditions, 'Ready')?.status;
  const s = ready === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
  return n.spec?.unschedulable ? `${s},SchedulingDisabled` : s;
}

const labels = (o: Resource) =>
  Object.entries(o.metadata.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '<none>';

const CELLS: Record<string, (n: Node) => string> = {
  status: nodeStatus,
  sessions: (n) => `${n.status?.sessions ?? 0}${n.spec?.maxSessions !== undefined ? `/${n.spec.maxSessions}` : ''}`,
  cpu: (n) => {
    const load = n.status?.loadAverage?.[0];
    const cpu = n.status?.capacity?.cpu;
    return load === undefined || cpu === undefined ? '<none>' : `${load.toFixed(2)}/${cpu}`;
  },
  memory: (n) => `${bytes(n.status?.free?.memoryBytes)}/${bytes(n.status?.capacity?.memoryBytes)}`,
  labels,
};

/** The cell of a computed column of `kind`, or undefined when the column is read by its jsonPath. */
export function computedCell(kind: string, column: string): ((o: Resource) => string) | undefined {
  if (kind !== 'Node') return undefined;
  const f = CELLS[column.toLowerCase()];
  return f && ((o) => f(o));
}
