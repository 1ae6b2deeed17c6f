/** `get nodes` (narrow and wide) and `describe node` with the real CRD, to the character. */
import { describe, expect, it } from 'vitest';
import { registry } from '../../../../controller/config/crds.js';
import type { Node } from '../../../../controller/api/node.js';
import type { AgentSession } from '../../../../controller/api/session.js';
import { header, rows } from '../../../../controller/cli/printers/columns.js';
import { bytes } from '../../../../controller/cli/printers/node-cells.js';
import { describeNode } from '../../../../controller/cli/printers/nodes.js';
import { renderTable } from '../../../../controller/cli/printers/table.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace('.000Z', 'Z');
const GiB = 1024 ** 3;

function node(
  name: string,
  o: { ready?: string; unschedulable?: boolean; max?: number; labels?: Record<string, string> },
): Node {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Node',
    metadata: { name, creationTimestamp: at(7200), labels: o.labels },
    spec: {
      ...(o.unschedulable ? { unschedulable: true } : {}),
      ...(o.max !== undefined ? { maxSessions: o.max } : {}),
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: (o.ready ?? 'True') as 'True',
          reason: o.ready === 'Unknown' ? 'NodeStatusUnknown' : 'NodeAgentReady',
          message:
            o.ready === 'Unknown' ? 'the node stopped renewing its lease: not seen since 2026-03-01T11:59:00Z' : 'ok',
          lastTransitionTime: at(60),
        },
      ],
      capacity: { cpu: 8, memoryBytes: 16 * GiB, diskBytes: 500 * GiB },
      free: { memoryBytes: 3.25 * GiB, diskBytes: 120 * GiB },
      loadAverage: [1.5, 1.2, 0.9],
      heartbeatTime: at(4),
      sessions: 3,
      versions: { orchctl: '0.1.0', node: 'v20.19.0', tmux: '3.4', git: '2.43.0' },
      projects: ['default/api', 'default/web'],
    },
  } as Node;
}

const kind = () => registry().byKind.get('Node')!;
const table = (nodes: Node[], wide = false) =>
  renderTable([header(kind(), { wide }), ...rows(kind(), nodes, { wide, now: NOW })]);

describe('get nodes', () => {
  const nodes = [
    node('host-a', { max: 10, labels: { zone: 'a', gpu: 'yes' } }),
    node('host-b', { ready: 'Unknown' }),
    node('host-c', { unschedulable: true }),
  ];

  it('NAME STATUS SESSIONS CPU MEMORY AGE', () => {
    expect(table(nodes)).toBe(
      [
        'NAME     STATUS                     SESSIONS   CPU      MEMORY       AGE',
        'host-a   Ready                      3/10       1.50/8   3.3Gi/16Gi   120m',
        'host-b   NotReady                   3          1.50/8   3.3Gi/16Gi   120m',
        'host-c   Ready,SchedulingDisabled   3          1.50/8   3.3Gi/16Gi   120m',
        '',
      ].join('\n'),
    );
  });

  it('-o wide adds LABELS, VERSION and HEARTBEAT', () => {
    const lines = table(nodes, true).split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STATUS\s+SESSIONS\s+CPU\s+MEMORY\s+AGE\s+LABELS\s+VERSION\s+HEARTBEAT$/);
    expect(lines[1]).toMatch(/\s120m\s+zone=a,gpu=yes\s+0\.1\.0\s+4s$/);
    expect(lines[2]).toMatch(/\s120m\s+<none>\s+0\.1\.0\s+4s$/);
  });

  it('memory in kubectl units', () => {
    expect([bytes(512 * 1024 ** 2), bytes(15.6 * GiB), bytes(undefined)]).toEqual(['512Mi', '15.6Gi', '<none>']);
  });
});

describe('describe node', () => {
  it('conditions, capacity, projects and the sessions bound to it', () => {
    const s = (name: string, phase: string, epoch: number): AgentSession =>
      ({
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name, namespace: 'default', creationTimestamp: at(600) },
        spec: {},
        status: { phase, binding: { nodeName: 'host-b', epoch, boundAt: at(600) } },
      }) as AgentSession;
    const out = describeNode(
      kind(),
      node('host-b', { ready: 'Unknown' }),
      [s('fix', 'Running', 2), s('old', 'Succeeded', 1)],
      [],
      NOW,
    );
    expect(out).toContain('Name:         host-b\n');
    expect(out).toContain(
      '  Ready  Unknown  2026-03-01T11:59:00Z  NodeStatusUnknown  the node stopped renewing its lease: not seen since ',
    );
    expect(out).toContain('  memory:  16Gi\n');
    expect(out).toContain('Free:\n  memory:  3.3Gi\n');
    expect(out).toContain('Projects:             default/api, default/web\n');
    expect(out).toContain('Sessions:             (1 of 2 bound here not finished)\n');
    expect(out).toContain('  default    fix   Running    2      10m\n');
    expect(out).toContain('  default    old   Succeeded  1      10m\n');
    expect(out.endsWith('Events:       <none>\n')).toBe(true);
  });
});
