import { describe, expect, it } from 'vitest';
import type { Resource } from '../../../controller/api/types.js';
import { onSpecChange } from '../../../controller/runtime/predicates.js';

const obj = (
  generation: number,
  extra: Partial<Resource['metadata']> = {},
  status: Record<string, unknown> = {},
): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Project',
  metadata: { name: 'p', namespace: 'ns', generation, ...extra },
  spec: {},
  status,
});

describe('onSpecChange', () => {
  const map = onSpecChange(() => ['ns/a', 'ns/b']);

  it('passes the first sight of an object, then only changes of spec or metadata', () => {
    expect([...map(obj(1), 'ADDED')]).toEqual(['ns/a', 'ns/b']);
    expect([...map(obj(1, {}, { lastActivity: 'x' }), 'MODIFIED')]).toEqual([]); // a status write
    expect([...map(obj(2), 'MODIFIED')]).toEqual(['ns/a', 'ns/b']); // spec: generation moved
    expect([...map(obj(2, { annotations: { frozen: 'y' } }), 'MODIFIED')]).toHaveLength(2);
    expect([...map(obj(2, { annotations: { frozen: 'y' } }), 'MODIFIED')]).toEqual([]);
    expect([...map(obj(2, { annotations: { frozen: 'y' }, deletionTimestamp: 't' }), 'MODIFIED')]).toHaveLength(2);
    expect([...map(obj(2), 'DELETED')]).toHaveLength(2);
    expect([...map(obj(2), 'ADDED')]).toHaveLength(2); // created again
  });

  it('passes a change of the status field named as read', () => {
    const m = onSpecChange(
      () => ['ns/a'],
      (o) => (o.status as { exceeded?: boolean }).exceeded,
    );
    expect([...m(obj(1, {}, { exceeded: false, used: 1 }), 'ADDED')]).toEqual(['ns/a']);
    expect([...m(obj(1, {}, { exceeded: false, used: 2 }), 'MODIFIED')]).toEqual([]);
    expect([...m(obj(1, {}, { exceeded: true, used: 3 }), 'MODIFIED')]).toEqual(['ns/a']);
  });
});
