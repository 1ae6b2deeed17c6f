/** The board's rows (the `get sessions -o wide` cells) and its filters by project, phase and label. */
import { describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../controller/api/session.js';
import { boardRows, parseFilter } from '../../../controller/console/board.js';

const session = (name: string, project: string, phase: string | undefined, labels: Record<string, string> = {}) =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', labels, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { projectRef: project, agent: { command: ['true'] } },
    ...(phase ? { status: { phase, run: 1, binding: { nodeName: 'box-a' } } } : {}),
  }) as unknown as AgentSession;

const all = [
  session('a', 'web', 'Running', { team: 'web' }),
  session('b', 'web', undefined, { team: 'ops' }),
  session('c', 'api', 'Failed', { team: 'web', tier: 'ci' }),
];
const names = (q: Record<string, string>) => all.filter(parseFilter(q).match).map((s) => s.metadata.name);

describe('board', () => {
  it('has the cells of get sessions -o wide: Pending before a controller saw it, the node, the age', () => {
    const [a, b] = boardRows(all, Date.parse('2026-01-01T00:05:00Z'));
    expect(a).toMatchObject({ key: 'default/a', name: 'a', namespace: 'default' });
    expect(a.cells).toMatchObject({ PHASE: 'Running', PROJECT: 'web', NODE: 'box-a', AGE: '5m' });
    expect(b.cells.PHASE).toBe('Pending');
  });

  it('filters by project, phase (any case, Pending when unset) and label selector, all together', () => {
    expect(names({})).toEqual(['a', 'b', 'c']);
    expect(names({ project: 'web' })).toEqual(['a', 'b']);
    expect(names({ phase: 'pending' })).toEqual(['b']);
    expect(names({ label: 'team=web,tier!=ci' })).toEqual(['a']);
    expect(names({ project: 'api', label: 'team=web' })).toEqual(['c']);
    expect(names({ key: 'default/b' })).toEqual(['b']);
  });

  it('refuses a bad label selector or an overlong filter, naming the field', () => {
    expect(() => parseFilter({ label: 'team in (web' })).toThrow(/^filter label: /);
    expect(() => parseFilter({ project: 'x'.repeat(254) })).toThrow('filter project: longer than 253 characters');
  });
});
