/** `get` tables: cells from printer columns (simple paths and JSONPath) and their alignment. */
import { describe, expect, it } from 'vitest';
import type { KindInfo, PrinterColumn } from '../../../../controller/api/crds.js';
import type { Resource } from '../../../../controller/api/types.js';
import { header, row, rows } from '../../../../controller/cli/printers/columns.js';
import { renderTable, StreamingTable } from '../../../../controller/cli/printers/table.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function kindWith(columns: PrinterColumn[], kind = 'Thing'): KindInfo {
  return {
    kind,
    listKind: `${kind}List`,
    plural: 'things',
    singular: 'thing',
    shortNames: [],
    categories: [],
    namespaced: true,
    hasStatus: true,
    hideNameColumn: false,
    columns,
    schema: {},
    crd: {},
  };
}

const thing = (name: string, status: Record<string, unknown>, meta: Record<string, unknown> = {}): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Thing',
  metadata: { name, namespace: 'ns', ...meta },
  status,
});

describe('rows', () => {
  const kind = kindWith([
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Types', type: 'string', jsonPath: '.status.conditions[*].type' },
    { name: 'Ratio', type: 'number', jsonPath: '.status.ratio' },
    { name: 'First', type: 'string', jsonPath: '.status.list[0]' },
    { name: 'List', type: 'string', jsonPath: '.status.list' },
    { name: 'Obj', type: 'string', jsonPath: '.status.obj' },
    { name: 'Status', type: 'string', jsonPath: '.status.phase' },
    { name: 'Message', type: 'string', jsonPath: '.status.message' },
    { name: 'Deep', type: 'string', jsonPath: '.status.a.b', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ]);
  const full = thing(
    'a',
    {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Other', status: 'False' },
      ],
      ratio: 1.23456,
      list: [1, 'two'],
      obj: { z: 1 },
      phase: 'Run\n  ning',
      message: 'm'.repeat(100),
      a: { b: 'deep' },
    },
    { creationTimestamp: '2025-12-31T23:59:00Z', labels: { team: 'web' } },
  );
  const empty = thing('b', { a: 'not an object', ratio: null }, { creationTimestamp: 'garbage' });

  it('formats simple paths and JSONPath matches the way kubectl does', () => {
    expect(rows(kind, [full, empty], { now: NOW })).toEqual([
      ['a', 'True', 'Ready,Other', '1.23', '1', '1,two', '{"z":1}', 'Run ning', `${'m'.repeat(79)}…`, '60s'],
      ['b', '<none>', '<none>', '<none>', '<none>', '<none>', '<none>', '<none>', '<none>', '<invalid>'],
    ]);
  });

  it('adds -o wide columns, namespaces and labels, and cuts no message when wide', () => {
    const r = row(kind, full, { now: NOW, wide: true, allNamespaces: true, showLabels: true });
    expect(r.slice(0, 2)).toEqual(['ns', 'a']);
    expect(r.slice(-4)).toEqual(['m'.repeat(100), 'deep', '60s', 'team=web']);
    expect(header(kind, { wide: true, allNamespaces: true, showLabels: true })).toEqual([
      'NAMESPACE',
      'NAME',
      ...kind.columns.map((c) => c.name.toUpperCase()),
      'LABELS',
    ]);
  });

  it('shows Terminating while deleting and Pending for a session no controller has seen', () => {
    const deleting = thing('c', { phase: 'Running' }, { deletionTimestamp: '2025-12-31T00:00:00Z' });
    expect(rows(kind, [deleting], { now: NOW })[0][7]).toBe('Terminating');
    const sessions = kindWith([{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }], 'AgentSession');
    const fresh: Resource = { apiVersion: 'orchctl.io/v1alpha1', kind: 'AgentSession', metadata: { name: 's' } };
    expect(row(sessions, fresh, {})).toEqual(['s', 'Pending']);
  });

  it('a run on a node that is not Ready shows Unknown with NodeNotReady, not Running in its tmux session', () => {
    const sessions = kindWith(
      [
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Message', type: 'string', jsonPath: '.status.message' },
      ],
      'AgentSession',
    );
    const lost = (status: string, phase = 'Running'): Resource => ({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 's' },
      status: {
        phase,
        message: 'running in tmux session orchctl-default-s',
        binding: { nodeName: 'n1', epoch: 1 },
        conditions: [{ type: 'NodeLost', status, reason: 'NodeLost', message: 'node n1 stopped renewing its lease' }],
      },
    });
    expect(row(sessions, lost('True'), {})).toEqual([
      's',
      'Unknown',
      'NodeNotReady: node n1 stopped renewing its lease',
    ]);
    // Its node back (NodeLost=False), or a run already over: what the status says.
    expect(row(sessions, lost('False'), {})).toEqual(['s', 'Running', 'running in tmux session orchctl-default-s']);
    expect(row(sessions, lost('True', 'Failed'), {})).toEqual([
      's',
      'Failed',
      'running in tmux session orchctl-default-s',
    ]);
  });
});

describe('renderTable', () => {
  it('pads every column but the last to its widest cell plus 3, without trailing blanks', () => {
    expect(
      renderTable([
        ['NAME', 'PHASE', 'AGE'],
        ['session-1', 'Running', '5m'],
        ['s2', '', ''],
      ]),
    ).toBe('NAME        PHASE     AGE\nsession-1   Running   5m\ns2\n');
    expect(renderTable([])).toBe('');
  });

  it('lines streamed rows up with the primed widths', () => {
    const t = new StreamingTable();
    t.prime([
      ['NAME', 'PHASE'],
      ['session-1', 'Running'],
    ]);
    expect(t.row(['NAME', 'PHASE'])).toBe('NAME        PHASE\n');
    expect(t.row(['a-much-longer-name', 'Failed'])).toBe('a-much-longer-name   Failed\n');
  });
});
