/**
 * `describe node`: its conditions, capacity and the sessions bound to it (the `get nodes` cells are
 * node-cells.ts).
 */
import type { KindInfo } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import type { Node } from '../../api/node.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { AgentSession } from '../../api/session.js';
import type { EventObject } from '../../client/events.js';
import { describeEvents, describeHeader } from './describe.js';
import { bytes } from './node-cells.js';
import { renderTable } from './table.js';

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
