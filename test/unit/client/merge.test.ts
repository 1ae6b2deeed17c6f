/** The client-side three-way merge behind `orchctl apply` (last-applied, desired, live). */
import { describe, expect, it } from 'vitest';
import { threeWayMerge } from '../../../controller/client/merge.js';

describe('threeWayMerge', () => {
  it('removes fields that were applied last time and are gone from the manifest now', () => {
    const last = { spec: { prompt: 'p', maxDuration: '45m' } };
    const desired = { spec: { prompt: 'p' } };
    const live = { spec: { prompt: 'p', maxDuration: '45m', restartPolicy: 'Never' } };
    expect(threeWayMerge(last, desired, live)).toEqual({ spec: { prompt: 'p', restartPolicy: 'Never' } });
  });

  it('keeps fields nobody applied (defaults, other writers) and sets the desired ones', () => {
    const last = { spec: { prompt: 'old' } };
    const desired = { spec: { prompt: 'new', desiredState: 'Stopped' } };
    const live = {
      metadata: { uid: 'u1' },
      spec: { prompt: 'old', restartPolicy: 'Never' },
      status: { phase: 'Running' },
    };
    expect(threeWayMerge(last, desired, live)).toEqual({
      metadata: { uid: 'u1' },
      spec: { prompt: 'new', desiredState: 'Stopped', restartPolicy: 'Never' },
      status: { phase: 'Running' },
    });
  });

  it('merges maps recursively', () => {
    const last = { metadata: { labels: { team: 'web', tier: 'fe' } } };
    const desired = { metadata: { labels: { team: 'api' } } };
    const live = { metadata: { labels: { team: 'web', tier: 'fe', added: 'by-someone' } } };
    expect(threeWayMerge(last, desired, live)).toEqual({ metadata: { labels: { team: 'api', added: 'by-someone' } } });
  });

  it('treats lists as atomic values', () => {
    const last = { spec: { command: ['claude', '--a'] } };
    const desired = { spec: { command: ['claude'] } };
    const live = { spec: { command: ['claude', '--a', '--live-only'] } };
    expect(threeWayMerge(last, desired, live)).toEqual({ spec: { command: ['claude'] } });
  });

  it('an explicit null removes a field, like a JSON merge patch', () => {
    expect(threeWayMerge(undefined, { spec: { prompt: null } }, { spec: { prompt: 'x', other: 1 } })).toEqual({
      spec: { other: 1 },
    });
  });

  it('without a last-applied manifest nothing is removed', () => {
    const live = { spec: { prompt: 'x', maxDuration: '1h' } };
    expect(threeWayMerge(undefined, { spec: { prompt: 'y' } }, live)).toEqual({
      spec: { prompt: 'y', maxDuration: '1h' },
    });
  });

  it('replaces values whose type changed', () => {
    expect(
      threeWayMerge(
        { spec: { agent: { command: ['a'] } } },
        { spec: { agent: 'x' } },
        { spec: { agent: { command: ['a'] } } },
      ),
    ).toEqual({ spec: { agent: 'x' } });
    expect(threeWayMerge({}, { spec: { a: { b: 1 } } }, { spec: { a: 'scalar' } })).toEqual({ spec: { a: { b: 1 } } });
  });

  it('does not modify its inputs or share structure with them', () => {
    const last = { spec: { a: 1, b: 2 } };
    const desired = { spec: { a: 3, list: [1, 2] } };
    const live = { spec: { a: 1, b: 2, c: { d: 4 } } };
    const snapshot = JSON.stringify([last, desired, live]);
    const out = threeWayMerge(last, desired, live) as any;
    expect(JSON.stringify([last, desired, live])).toBe(snapshot);
    out.spec.c.d = 99;
    out.spec.list.push(3);
    expect(live.spec.c.d).toBe(4);
    expect(desired.spec.list).toEqual([1, 2]);
  });
});
