/**
 * The read-modify-write behind approve, reject and restart, on a real SQLite store: another writer
 * between the read and the write makes the store refuse it, the object is read again and the
 * change made on what is there now (nothing of the other write lost); a conflict that never ends
 * is given up after CAS_ATTEMPTS. And which objects a verb acts on: names, -l, --all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registry } from '../../../controller/config/crds.js';
import type { Resource } from '../../../controller/api/types.js';
import type { Context } from '../../../controller/cli/context.js';
import { CAS_ATTEMPTS, resolveTargets, updateWithRetry } from '../../../controller/cli/targets.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';

let store: SqliteStore;
let ctx: Context;
beforeEach(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-targets-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  ctx = { reg: registry(), store, close: () => store.close() };
});
afterEach(() => store.close());

const session = (name: string, labels: Record<string, string> = {}): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name, namespace: 'default', labels },
  spec: { prompt: 'x' },
});
const key = { kind: 'AgentSession', namespace: 'default', name: 'a' };

describe('updateWithRetry', () => {
  it('on a conflict reads again and changes what is there now', async () => {
    await store.create(session('a'));
    let calls = 0;
    const r = await updateWithRetry<Resource>(store, key, (cur) => {
      calls++;
      if (calls === 1) {
        // Someone else writes between our read and our write (SQLite writes at once: it has landed on return).
        const other = structuredClone(cur);
        other.metadata.labels = { by: 'someone-else' };
        void store.update(other);
      }
      cur.metadata.annotations = { mine: String(calls) };
      return { write: cur };
    });
    expect(calls).toBe(2);
    expect(r.outcome).toBe('written');
    const now = (await store.get(key))!;
    expect(now.metadata.labels).toEqual({ by: 'someone-else' });
    expect(now.metadata.annotations).toEqual({ mine: '2' });
  });

  it('gives up after CAS_ATTEMPTS conflicts with the store error', async () => {
    await store.create(session('a'));
    let calls = 0;
    const attempt = updateWithRetry<Resource>(store, key, (cur) => {
      calls++;
      void store.update({ ...structuredClone(cur), spec: { prompt: `other ${calls}` } });
      return { write: { ...cur, spec: { prompt: 'mine' } } };
    });
    await expect(attempt).rejects.toMatchObject({ reason: 'Conflict' });
    expect(calls).toBe(CAS_ATTEMPTS);
  });

  it('reports a missing object, a refusal and nothing to do without writing', async () => {
    expect(await updateWithRetry(store, key, () => ({ unchanged: 'x' }))).toEqual({ outcome: 'missing' });
    await store.create(session('a'));
    const rev = await store.revision();
    expect(await updateWithRetry(store, key, () => ({ refuse: 'no' }))).toEqual({ outcome: 'refused', why: 'no' });
    expect(await updateWithRetry(store, key, () => ({ unchanged: 'same' }))).toEqual({
      outcome: 'unchanged',
      why: 'same',
    });
    expect(await store.revision()).toBe(rev);
  });
});

describe('resolveTargets', () => {
  beforeEach(async () => {
    for (const [name, labels] of [
      ['c', { team: 'web' }],
      ['a', { team: 'web' }],
      ['b', { team: 'db' }],
    ] as const)
      await store.create(session(name, labels));
  });
  const resolve = (args: string[], opts: object, eligible?: (o: Resource) => boolean) =>
    resolveTargets(ctx, 'session', args, { all: false, ...opts }, 'orchctl x session', eligible);

  it('names in the order given, each once, in either form', async () => {
    expect((await resolve(['as', 'c', 'a', 'c'], {})).names).toEqual(['c', 'a']);
    expect(await resolve(['session/b', 'agentsession/a'], {})).toMatchObject({ names: ['b', 'a'], selected: false });
  });

  it('-l and --all pick what matches and is eligible, sorted by name', async () => {
    expect(await resolve(['as'], { selector: 'team=web' })).toMatchObject({ names: ['a', 'c'], selected: true });
    expect((await resolve(['as'], { all: true }, (o) => o.metadata.name !== 'c')).names).toEqual(['a', 'b']);
    expect((await resolve(['as'], { all: true, namespace: 'other' })).names).toEqual([]);
  });

  it('refuses names with a selector, no target at all, and another kind', async () => {
    await expect(resolve(['as', 'a'], { selector: 'x' })).rejects.toThrow(/names cannot be given together/);
    await expect(resolve(['as'], {})).rejects.toThrow(
      'give the agentsessions to act on: orchctl x session NAME…, -l SELECTOR or --all',
    );
    await expect(resolveTargets(ctx, 'session', ['as'], {}, 'orchctl x session')).rejects.toThrow(
      'give the agentsessions to act on: orchctl x session NAME… or -l SELECTOR',
    );
    await expect(resolve(['decision', 'a'], {})).rejects.toThrow(
      'orchctl x session works on agentsessions, not decisions',
    );
  });
});
