/**
 * How Nodes print: the `get nodes` cells a CRD column cannot compute (kubectl's STATUS "Ready" or
 * "NotReady,SchedulingDisabled", load over CPUs, free over total memory, labels as k=v), and
 * `describe node` with its conditions, capacity and the sessions bound to it.
 */
import { getCondition } from '../../api/conditions.js';
import type { KindInfo } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import type { Node } from '../../api/node.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { AgentSession } from '../../api/session.js';
import type { Resource } from '../../api/types.js';
import type { EventObject } from '../../client/events.js';
import { describeEvents, describeHeader } from './describe.js';
import { renderTable } from './table.js';

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

export function describeNode(
  kind: KindInfo,
  n: Node,
  sessions: AgentSession[],
  events: EventObject[],
  now = Date.now(),
): string {
  const lines = describeHeader(kind, n);
  const st = n.status ?? {};
  lines.push(`${'CreationTimestamp:'.padEnd(20)}${n.metadata.creationTimestamp ?? '<unknown>'}`);
  lines.push(`${'Unschedulable:'.padEnd(20)}${!!n.spec?.unschedulable}`);
  lines.push(`${'Max Sessions:'.padEnd(20)}${n.spec?.maxSessions ?? '<unlimited>'}`);
  const beat = st.heartbeatTime;
  lines.push(`${'Heartbeat:'.padEnd(20)}${beat ? `${beat} (${age(beat, now)} ago)` : '<none>'}`);
  const conds = st.conditions ?? [];
  lines.push('Conditions:');
  if (!conds.length) lines.push('  <none>');
  else
    lines.push(
      ...indent(
        renderTable(
          [
            ['Type', 'Status', 'LastTransitionTime', 'Reason', 'Message'],
            ['----', '------', '------------------', '------', '-------'],
            ...conds.map((c) => [c.type, c.status, c.lastTransitionTime, c.reason, c.message]),
          ],
          2,
        ),
      ),
    );
  lines.push('Capacity:');
  lines.push(`  cpu:     ${st.capacity?.cpu ?? '<none>'}`);
  lines.push(`  memory:  ${bytes(st.capacity?.memoryBytes)}`);
  lines.push(`  disk:    ${bytes(st.capacity?.diskBytes)}`);
  lines.push('Free:');
  lines.push(`  memory:  ${bytes(st.free?.memoryBytes)}`);
  lines.push(`  disk:    ${bytes(st.free?.diskBytes)}`);
  lines.push(`  load:    ${(st.loadAverage ?? []).join(' ') || '<none>'}`);
  lines.push('System Info:');
  const v = st.versions ?? {};
  lines.push(`  orchctl: ${v.orchctl ?? '<none>'}`, `  node:    ${v.node ?? '<none>'}`);
  lines.push(`  tmux:    ${v.tmux ?? '<none>'}`, `  git:     ${v.git ?? '<none>'}`);
  if (st.controller?.holderIdentity) lines.push(`  agent:   ${st.controller.holderIdentity}`);
  lines.push(`Projects:             ${(st.projects ?? []).join(', ') || '<none>'}`);
  const live = sessions.filter((s) => !TERMINAL_PHASES.has(s.status?.phase as Phase));
  lines.push(`Sessions:             (${live.length} of ${sessions.length} bound here not finished)`);
  if (sessions.length)
    lines.push(
      ...indent(
        renderTable(
          [
            ['Namespace', 'Name', 'Phase', 'Epoch', 'Age'],
            ['---------', '----', '-----', '-----', '---'],
            ...sessions.map((s) => [
              s.metadata.namespace ?? '',
              s.metadata.name,
              s.status?.phase ?? 'Pending',
              String(s.status?.binding?.epoch ?? ''),
              age(s.metadata.creationTimestamp, now),
            ]),
          ],
          2,
        ),
      ),
    );
  if (st.orphanSessions?.length) lines.push(`Orphan tmux Sessions: ${st.orphanSessions.join(', ')}`);
  lines.push(...describeEvents(events, now));
  return lines.join('\n') + '\n';
}

const indent = (table: string) =>
  table
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`);
