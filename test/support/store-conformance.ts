/**
 * Store conformance suite: the contract documented at the top of controller/store/store.ts,
 * written once so that every backend (SQLite today, etcd later) runs the same tests:
 *
 *   import { describeStoreConformance } from './store-conformance.js';
 *   describeStoreConformance('MyStore', async (opts) => new MyStore(..., opts), async () => cleanup());
 *
 * `makeStore` is called for every test and must return an empty store. It receives
 * `retainRevisions` for the compaction test: the backend must keep at least that many revisions
 * of watch history and may compact older ones in batches of up to 1000 revisions (etcd-style
 * compaction); a watch from a compacted revision fails with reason Gone.
 * `cleanup` runs after each test, once the stores that test made are closed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, isApiError, type ErrorReason } from '../../controller/api/errors.js';
import { parseSelector } from '../../controller/api/labels.js';
import type { ObjectKey, Resource } from '../../controller/api/types.js';
import { isFenced, type Store, type WatchEvent, type WatchOptions } from '../../controller/store/store.js';

export interface StoreFactoryOptions {
  /** Keep at least this many revisions of watch history (older ones may be compacted). */
  retainRevisions?: number;
}

export type StoreFactory = (opts?: StoreFactoryOptions) => Promise<Store>;

const API = 'orchctl.io/v1alpha1';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export function session(
  name: string,
  opts: {
    namespace?: string;
    labels?: Record<string, string>;
    spec?: Record<string, unknown>;
    finalizers?: string[];
  } = {},
): Resource {
  return {
    apiVersion: API,
    kind: 'AgentSession',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      ...(opts.labels ? { labels: opts.labels } : {}),
      ...(opts.finalizers ? { finalizers: opts.finalizers } : {}),
    },
    spec: opts.spec ?? { agentRef: 'claude-code', projectRef: 'webapp', prompt: `work on ${name}` },
  };
}

/** A cluster-scoped object (namespace '' in keys). */
export function node(name: string): Resource {
  return { apiVersion: API, kind: 'Node', metadata: { name }, spec: { unschedulable: false } };
}

export const keyOf = (o: Resource): ObjectKey => ({
  kind: o.kind,
  namespace: o.metadata.namespace ?? '',
  name: o.metadata.name,
});

/** Awaits `p` and returns the ApiError it rejects with (fails the test when it resolves or throws something else). */
export async function apiError(p: Promise<unknown>): Promise<ApiError> {
  let result: unknown;
  try {
    result = await p;
  } catch (e) {
    if (!(e instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(e)}`);
    return e;
  }
  throw new Error(`expected an ApiError, but the call succeeded with ${JSON.stringify(result)}`);
}

async function expectReason(p: Promise<unknown>, reason: ErrorReason): Promise<ApiError> {
  const e = await apiError(p);
  expect(e.reason).toBe(reason);
  return e;
}

/** Waits (without asserting anything about time) until `cond` holds; fails after `ms`. */
export async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Collects watch events; `settle()` proves no further event arrives after writes have been delivered. */
class Recorder {
  events: WatchEvent[] = [];
  errors: Error[] = [];
  handle: { close(): void };
  constructor(store: Store, opts: WatchOptions) {
    this.handle = store.watch(
      opts,
      (ev) => this.events.push(ev),
      (e) => this.errors.push(e),
    );
  }
  async waitFor(n: number): Promise<WatchEvent[]> {
    await until(
      () => this.events.length >= n || this.errors.length > 0,
      `${n} watch events (have ${this.events.length})`,
    );
    if (this.errors.length) throw this.errors[0];
    return this.events;
  }
  summary(): string[] {
    return this.events.map(
      (e) => `${e.type} ${e.object.kind}/${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`,
    );
  }
}

export function describeStoreConformance(name: string, makeStore: StoreFactory, cleanup?: () => Promise<void>): void {
  describe(`Store conformance: ${name}`, () => {
    const made: Store[] = [];
    let store: Store;
    const open = async (opts?: StoreFactoryOptions) => {
      const s = await makeStore(opts);
      made.push(s);
      return s;
    };

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      for (const s of made.splice(0)) await s.close();
      await cleanup?.();
    });

    describe('create', () => {
      it('sets uid, generation 1, resourceVersion and creationTimestamp', async () => {
        const before = await store.revision();
        const created = await store.create(session('a'));
        expect(created.metadata.uid).toMatch(/^[0-9a-f-]{8,}$/i);
        expect(created.metadata.generation).toBe(1);
        expect(created.metadata.creationTimestamp).toMatch(RFC3339);
        expect(Math.abs(Date.parse(created.metadata.creationTimestamp!) - Date.now())).toBeLessThan(60_000);
        expect(typeof created.metadata.resourceVersion).toBe('string');
        expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(before);
        expect(Number(created.metadata.resourceVersion)).toBe(await store.revision());
        expect(created.spec).toEqual(session('a').spec);
        expect(await store.get(keyOf(created))).toEqual(created);
      });

      it('gives every object its own uid', async () => {
        const a = await store.create(session('a'));
        const b = await store.create(session('b'));
        expect(a.metadata.uid).not.toBe(b.metadata.uid);
      });

      it('ignores status and system-owned metadata sent by the caller', async () => {
        const input = session('a');
        input.status = { phase: 'Running' };
        input.metadata = {
          ...input.metadata,
          uid: 'caller-uid',
          generation: 7,
          resourceVersion: '999',
          deletionTimestamp: '2020-01-01T00:00:00Z',
        };
        const created = await store.create(input);
        expect(created.status).toBeUndefined();
        expect(created.metadata.uid).not.toBe('caller-uid');
        expect(created.metadata.generation).toBe(1);
        expect(created.metadata.deletionTimestamp).toBeUndefined();
        const got = await store.get(keyOf(created));
        expect(got?.status).toBeUndefined();
        expect(got?.metadata.deletionTimestamp).toBeUndefined();
      });

      it('fails with AlreadyExists for the same kind, namespace and name', async () => {
        await store.create(session('a'));
        const rev = await store.revision();
        await expectReason(store.create(session('a', { spec: { prompt: 'other' } })), 'AlreadyExists');
        expect(await store.revision()).toBe(rev);
        // The same name in another namespace or of another kind is another object.
        await store.create(session('a', { namespace: 'other' }));
        await store.create({ ...node('a'), kind: 'Project', metadata: { name: 'a', namespace: 'default' } });
      });

      it('stores cluster-scoped objects without a namespace', async () => {
        const n = await store.create(node('host-1'));
        expect(n.metadata.namespace).toBeUndefined();
        expect((await store.get({ kind: 'Node', namespace: '', name: 'host-1' }))?.metadata.uid).toBe(n.metadata.uid);
      });
    });

    describe('get and list', () => {
      beforeEach(async () => {
        await store.create(session('a', { labels: { team: 'web', tier: 'fe' } }));
        await store.create(session('b', { labels: { team: 'api' } }));
        await store.create(session('c'));
        await store.create(session('d', { namespace: 'other', labels: { team: 'web' } }));
        await store.create({ ...session('a'), kind: 'Project' });
        await store.create(node('n1'));
      });

      const names = (items: Resource[]) => items.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();

      it('get returns undefined for a missing object', async () => {
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'zzz' })).toBeUndefined();
        expect(await store.get({ kind: 'AgentSession', namespace: 'nope', name: 'a' })).toBeUndefined();
        expect(await store.get({ kind: 'Evaluation', namespace: 'default', name: 'a' })).toBeUndefined();
      });

      it('lists one kind across all namespaces, with the current revision', async () => {
        const r = await store.list('AgentSession');
        expect(names(r.items)).toEqual(['default/a', 'default/b', 'default/c', 'other/d']);
        expect(r.items.every((o) => o.kind === 'AgentSession')).toBe(true);
        expect(r.revision).toBe(await store.revision());
        expect(names((await store.list('Node')).items)).toEqual(['/n1']);
        expect((await store.list('Evaluation')).items).toEqual([]);
      });

      it('lists one namespace', async () => {
        expect(names((await store.list('AgentSession', { namespace: 'default' })).items)).toEqual([
          'default/a',
          'default/b',
          'default/c',
        ]);
        expect(names((await store.list('AgentSession', { namespace: 'other' })).items)).toEqual(['other/d']);
        expect((await store.list('AgentSession', { namespace: 'empty' })).items).toEqual([]);
      });

      it('filters by label selector', async () => {
        const sel = async (s: string, namespace?: string) =>
          names((await store.list('AgentSession', { namespace, labelSelector: parseSelector(s) })).items);
        expect(await sel('team=web')).toEqual(['default/a', 'other/d']);
        expect(await sel('team=web', 'default')).toEqual(['default/a']);
        expect(await sel('team!=web')).toEqual(['default/b', 'default/c']);
        expect(await sel('team in (web,api),!tier')).toEqual(['default/b', 'other/d']);
        expect(await sel('team')).toEqual(['default/a', 'default/b', 'other/d']);
        expect(await sel('!team')).toEqual(['default/c']);
        expect(await sel('team notin (web)')).toEqual(['default/b', 'default/c']);
        expect(await sel('team=nobody')).toEqual([]);
        expect(await sel('')).toEqual(['default/a', 'default/b', 'default/c', 'other/d']);
      });

      it('returns copies: mutating a result does not change the store', async () => {
        const a = (await store.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }))!;
        a.spec!.prompt = 'mutated';
        a.metadata.labels!.team = 'mutated';
        const again = (await store.get(keyOf(a)))!;
        expect(again.spec!.prompt).toBe('work on a');
        expect(again.metadata.labels!.team).toBe('web');
      });
    });

    describe('update', () => {
      it('is compare-and-swap on resourceVersion: a stale one fails with Conflict', async () => {
        const v1 = await store.create(session('a'));
        const v2 = await store.update({ ...v1, spec: { ...v1.spec, prompt: 'second' } });
        expect(Number(v2.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
        const rev = await store.revision();
        const e = await expectReason(store.update({ ...v1, spec: { ...v1.spec, prompt: 'stale' } }), 'Conflict');
        expect(e.message).toContain('the object has been modified');
        expect(await store.revision()).toBe(rev);
        expect((await store.get(keyOf(v1)))!.spec!.prompt).toBe('second');
      });

      it('fails with Conflict when the uid precondition does not match (object was recreated)', async () => {
        const v1 = await store.create(session('a'));
        await store.delete(keyOf(v1));
        await store.create(session('a'));
        const { resourceVersion: _rv, ...meta } = v1.metadata;
        await expectReason(store.update({ ...v1, metadata: meta, spec: { prompt: 'x' } }), 'Conflict');
      });

      it('without a resourceVersion it is an unconditional write', async () => {
        const v1 = await store.create(session('a'));
        await store.update({ ...v1, spec: { ...v1.spec, prompt: 'second' } });
        const { resourceVersion: _rv, ...meta } = v1.metadata;
        const v3 = await store.update({ ...v1, metadata: meta, spec: { ...v1.spec, prompt: 'third' } });
        expect(v3.spec!.prompt).toBe('third');
      });

      it('fails with NotFound for a missing object', async () => {
        await expectReason(store.update(session('ghost')), 'NotFound');
      });

      it('without changes keeps the revision and the resourceVersion', async () => {
        const v1 = await store.create(session('a', { labels: { team: 'web' } }));
        const rev = await store.revision();
        const same = await store.update(structuredClone(v1));
        expect(same.metadata.resourceVersion).toBe(v1.metadata.resourceVersion);
        expect(same.metadata.generation).toBe(1);
        expect(await store.revision()).toBe(rev);
      });

      it('a spec change bumps generation; a metadata-only change (labels, annotations) does not', async () => {
        const v1 = await store.create(session('a'));
        const v2 = await store.update({
          ...v1,
          metadata: { ...v1.metadata, labels: { team: 'web' }, annotations: { note: 'x' } },
        });
        expect(v2.metadata.labels).toEqual({ team: 'web' });
        expect(v2.metadata.generation).toBe(1);
        expect(Number(v2.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
        const v3 = await store.update({ ...v2, spec: { ...v2.spec, prompt: 'changed' } });
        expect(v3.metadata.generation).toBe(2);
        const v4 = await store.update({ ...v3, spec: { ...v3.spec, desiredState: 'Stopped' } });
        expect(v4.metadata.generation).toBe(3);
        expect((await store.get(keyOf(v1)))!.metadata.generation).toBe(3);
      });

      it('keeps uid and creationTimestamp whatever the caller sends', async () => {
        const v1 = await store.create(session('a'));
        const v2 = await store.update({
          ...v1,
          metadata: { ...v1.metadata, creationTimestamp: '2000-01-01T00:00:00Z', generation: 42 },
          spec: { prompt: 'changed' },
        });
        expect(v2.metadata.uid).toBe(v1.metadata.uid);
        expect(v2.metadata.creationTimestamp).toBe(v1.metadata.creationTimestamp);
        expect(v2.metadata.generation).toBe(2);
      });

      it('ignores status', async () => {
        const v1 = await store.create(session('a'));
        const s1 = await store.updateStatus({ ...v1, status: { phase: 'Running' } });
        const v2 = await store.update({ ...s1, spec: { ...s1.spec, prompt: 'changed' }, status: { phase: 'Hacked' } });
        expect(v2.status).toEqual({ phase: 'Running' });
        expect((await store.get(keyOf(v1)))!.status).toEqual({ phase: 'Running' });
        // An update that changes nothing but status is a no-op.
        const rev = await store.revision();
        const v3 = await store.update({ ...v2, status: { phase: 'Other' } });
        expect(v3.metadata.resourceVersion).toBe(v2.metadata.resourceVersion);
        expect(await store.revision()).toBe(rev);
      });
    });

    describe('updateStatus', () => {
      it('changes only status and never generation', async () => {
        const v1 = await store.create(session('a', { labels: { team: 'web' } }));
        const s1 = await store.updateStatus({
          ...v1,
          metadata: { ...v1.metadata, labels: { team: 'hacked' } },
          spec: { prompt: 'hacked' },
          status: { phase: 'Running', observedGeneration: 1 },
        });
        expect(s1.status).toEqual({ phase: 'Running', observedGeneration: 1 });
        expect(s1.spec).toEqual(v1.spec);
        expect(s1.metadata.labels).toEqual({ team: 'web' });
        expect(s1.metadata.generation).toBe(1);
        expect(Number(s1.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));
        expect(await store.get(keyOf(v1))).toEqual(s1);
      });

      it('is compare-and-swap too', async () => {
        const v1 = await store.create(session('a'));
        await store.updateStatus({ ...v1, status: { phase: 'Running' } });
        await expectReason(store.updateStatus({ ...v1, status: { phase: 'Stale' } }), 'Conflict');
        expect((await store.get(keyOf(v1)))!.status).toEqual({ phase: 'Running' });
        await expectReason(store.updateStatus({ ...session('ghost'), status: { phase: 'X' } }), 'NotFound');
      });

      it('without changes keeps the revision', async () => {
        const v1 = await store.create(session('a'));
        const s1 = await store.updateStatus({ ...v1, status: { phase: 'Running' } });
        const rev = await store.revision();
        const s2 = await store.updateStatus({ ...s1, status: { phase: 'Running' } });
        expect(s2.metadata.resourceVersion).toBe(s1.metadata.resourceVersion);
        expect(await store.revision()).toBe(rev);
      });
    });

    it('has one global revision that increases with every write, whatever the kind', async () => {
      const seen: number[] = [await store.revision()];
      const rv = (o: Resource) => seen.push(Number(o.metadata.resourceVersion));
      const a = await store.create(session('a'));
      rv(a);
      rv(await store.create(node('n')));
      rv(await store.create(session('b', { namespace: 'x' })));
      const a2 = await store.update({ ...a, spec: { prompt: 'p' } });
      rv(a2);
      rv(await store.updateStatus({ ...a2, status: { phase: 'Running' } }));
      rv(await store.create({ ...session('a'), kind: 'Project' }));
      await store.delete({ kind: 'Node', namespace: '', name: 'n' });
      seen.push(await store.revision());
      for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);
    });

    describe('delete', () => {
      it('removes an object without finalizers and returns it', async () => {
        const a = await store.create(session('a'));
        const w = new Recorder(store, { kind: 'AgentSession', fromRevision: Number(a.metadata.resourceVersion) });
        const gone = await store.delete(keyOf(a));
        expect(gone.metadata.uid).toBe(a.metadata.uid);
        expect(await store.get(keyOf(a))).toBeUndefined();
        expect((await store.list('AgentSession')).items).toEqual([]);
        const [ev] = await w.waitFor(1);
        expect(ev.type).toBe('DELETED');
        expect(ev.object.metadata.name).toBe('a');
        expect(ev.revision).toBe(await store.revision());
        w.handle.close();
      });

      it('fails with NotFound for a missing object and Conflict for a stale resourceVersion', async () => {
        await expectReason(store.delete({ kind: 'AgentSession', namespace: 'default', name: 'ghost' }), 'NotFound');
        const a = await store.create(session('a'));
        await store.update({ ...a, spec: { prompt: 'changed' } });
        await expectReason(store.delete(keyOf(a), { resourceVersion: a.metadata.resourceVersion }), 'Conflict');
        expect(await store.get(keyOf(a))).toBeDefined();
        const cur = (await store.get(keyOf(a)))!;
        await store.delete(keyOf(a), { resourceVersion: cur.metadata.resourceVersion });
        expect(await store.get(keyOf(a))).toBeUndefined();
      });

      it('with finalizers only sets deletionTimestamp; the object goes with the last finalizer', async () => {
        const a = await store.create(session('a', { finalizers: ['orchctl.io/stop-tmux', 'example.com/other'] }));
        const w = new Recorder(store, { kind: 'AgentSession', fromRevision: Number(a.metadata.resourceVersion) });
        const d = await store.delete(keyOf(a));
        expect(d.metadata.deletionTimestamp).toMatch(RFC3339);
        const live = (await store.get(keyOf(a)))!;
        expect(live.metadata.deletionTimestamp).toBe(d.metadata.deletionTimestamp);
        expect(live.metadata.finalizers).toEqual(['orchctl.io/stop-tmux', 'example.com/other']);
        // Deleting again changes nothing.
        const rev = await store.revision();
        const again = await store.delete(keyOf(a));
        expect(again.metadata.deletionTimestamp).toBe(d.metadata.deletionTimestamp);
        expect(await store.revision()).toBe(rev);
        // Status can still be written while finalizers run.
        const s = await store.updateStatus({ ...live, status: { phase: 'Stopping' } });
        // Removing one finalizer keeps the object.
        const one = await store.update({ ...s, metadata: { ...s.metadata, finalizers: ['example.com/other'] } });
        expect(one.metadata.deletionTimestamp).toBe(d.metadata.deletionTimestamp);
        expect(await store.get(keyOf(a))).toBeDefined();
        // Removing the last one removes it.
        await store.update({ ...one, metadata: { ...one.metadata, finalizers: [] } });
        expect(await store.get(keyOf(a))).toBeUndefined();
        const events = await w.waitFor(4);
        expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED', 'DELETED']);
        w.handle.close();
      });

      it('does not let finalizers be added once the object is being deleted', async () => {
        const a = await store.create(session('a', { finalizers: ['orchctl.io/stop-tmux'] }));
        const d = await store.delete(keyOf(a));
        const e = await apiError(
          store.update({ ...d, metadata: { ...d.metadata, finalizers: ['orchctl.io/stop-tmux', 'example.com/new'] } }),
        );
        expect(e.reason).toBe('Invalid');
        expect((await store.get(keyOf(a)))!.metadata.finalizers).toEqual(['orchctl.io/stop-tmux']);
      });

      it('does not let deletionTimestamp be set or cleared through update', async () => {
        const a = await store.create(session('a', { finalizers: ['f.io/x'] }));
        const u = await store.update({ ...a, metadata: { ...a.metadata, deletionTimestamp: '2020-01-01T00:00:00Z' } });
        expect(u.metadata.deletionTimestamp).toBeUndefined();
        const d = await store.delete(keyOf(a));
        const { deletionTimestamp: _d, ...meta } = d.metadata;
        const u2 = await store.update<Resource>({ ...d, metadata: meta });
        expect(u2.metadata.deletionTimestamp).toBe(d.metadata.deletionTimestamp);
      });

      it('cascades to dependents through ownerReferences', async () => {
        const owner = await store.create(session('owner'));
        const other = await store.create(session('other'));
        const ref = (o: Resource) => ({ apiVersion: API, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid! });
        const child = await store.create({
          apiVersion: API,
          kind: 'Evaluation',
          metadata: { name: 'owner-run-1', namespace: 'default', ownerReferences: [ref(owner)] },
          spec: { sessionRef: 'owner', run: 1 },
        });
        await store.create({
          apiVersion: API,
          kind: 'Event',
          metadata: { name: 'owner-run-1.abc', namespace: 'default', ownerReferences: [ref(child)] },
          reason: 'Judged',
        });
        const unrelated = await store.create({
          apiVersion: API,
          kind: 'Evaluation',
          metadata: { name: 'other-run-1', namespace: 'default', ownerReferences: [ref(other)] },
          spec: { sessionRef: 'other', run: 1 },
        });
        // An object that only mentions the owner's uid somewhere else is not a dependent.
        const mentions = await store.create({ ...session('mentions'), spec: { prompt: `see ${owner.metadata.uid}` } });
        const w = new Recorder(store, { fromRevision: await store.revision() });
        await store.delete(keyOf(owner));
        expect(await store.get(keyOf(owner))).toBeUndefined();
        expect(await store.get(keyOf(child))).toBeUndefined();
        expect(await store.get({ kind: 'Event', namespace: 'default', name: 'owner-run-1.abc' })).toBeUndefined();
        expect(await store.get(keyOf(unrelated))).toBeDefined();
        expect(await store.get(keyOf(other))).toBeDefined();
        expect(await store.get(keyOf(mentions))).toBeDefined();
        await w.waitFor(3);
        expect(w.summary().sort()).toEqual(
          [
            'DELETED AgentSession/default/owner',
            'DELETED Evaluation/default/owner-run-1',
            'DELETED Event/default/owner-run-1.abc',
          ].sort(),
        );
        w.handle.close();
      });
    });

    describe('txn', () => {
      it('applies every op, in order, and returns the results', async () => {
        const a = await store.create(session('a'));
        const res = await store.txn([
          { op: 'create', object: session('b') },
          { op: 'update', object: { ...a, spec: { prompt: 'changed' } } },
          { op: 'create', object: node('n') },
        ]);
        expect(res.map((o) => o.metadata.name)).toEqual(['b', 'a', 'n']);
        expect(res[1].metadata.generation).toBe(2);
        // SQLite gives each op its own revision; etcd gives a whole transaction one: never decreasing.
        expect(Number(res[0].metadata.resourceVersion)).toBeLessThanOrEqual(Number(res[1].metadata.resourceVersion));
        expect(Number(res[2].metadata.resourceVersion)).toBe(await store.revision());
        expect(await store.get(keyOf(res[0]))).toEqual(res[0]);
      });

      it('is all-or-nothing: a failing op leaves nothing written', async () => {
        const a = await store.create(session('a'));
        await store.update({ ...a, spec: { prompt: 'changed' } });
        const x = await store.create(session('x'));
        const rev = await store.revision();
        const w = new Recorder(store, { fromRevision: rev });
        const e = await apiError(
          store.txn([
            { op: 'create', object: session('b') },
            { op: 'delete', key: keyOf(x) },
            { op: 'create', object: node('n') },
            { op: 'update', object: { ...a, spec: { prompt: 'stale' } } }, // stale resourceVersion
          ]),
        );
        expect(e.reason).toBe('Conflict');
        expect(await store.revision()).toBe(rev);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })).toBeUndefined();
        expect(await store.get({ kind: 'Node', namespace: '', name: 'n' })).toBeUndefined();
        expect(await store.get(keyOf(x))).toEqual(x);
        expect((await store.get(keyOf(a)))!.spec!.prompt).toBe('changed');
        await expectReason(
          store.txn([
            { op: 'create', object: session('c') },
            { op: 'create', object: session('c') },
          ]),
          'AlreadyExists',
        );
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'c' })).toBeUndefined();
        expect(await store.revision()).toBe(rev);
        // Nothing of the failed transactions is ever seen by a watcher.
        await store.create(session('z'));
        const events = await w.waitFor(1);
        await sleep(50);
        expect(events.map((x) => `${x.type} ${x.object.metadata.name}`)).toEqual(['ADDED z']);
        w.handle.close();
      });

      it('a status write with the Event that tells of it: both or neither; a count bump is CAS', async () => {
        // What client/status.ts writes for a transition (EventRecorder.ops): the status and its Event.
        const a = await store.create(session('a'));
        const event = (count: number): Resource => ({
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'Event',
          metadata: { name: 'a.0123456789ab', namespace: 'default' },
          involvedObject: { apiVersion: 'orchctl.io/v1alpha1', kind: 'AgentSession', name: 'a' },
          reason: 'Started',
          message: 'Started run 1',
          type: 'Normal',
          count,
        });
        const [running, ev] = await store.txn([
          { op: 'updateStatus', object: { ...a, status: { phase: 'Running' } } },
          { op: 'create', object: event(1) },
        ]);
        expect(running.status).toEqual({ phase: 'Running' });
        expect(ev).toMatchObject({ kind: 'Event', count: 1 });
        // A stale session: neither the status nor the Event's bump lands.
        const rev = await store.revision();
        const stale = store.txn([
          { op: 'updateStatus', object: { ...a, status: { phase: 'Stopping' } } },
          { op: 'update', object: { ...ev, count: 2 } },
        ]);
        await expectReason(stale, 'Conflict');
        // Another writer bumped the Event since it was read: the transition waits for a fresh read.
        await store.update({ ...ev, count: 2 });
        const raced = store.txn([
          { op: 'updateStatus', object: { ...running, status: { phase: 'Stopping' } } },
          { op: 'update', object: { ...ev, count: 2 } },
        ]);
        await expectReason(raced, 'Conflict');
        // Another writer created it first: AlreadyExists, nothing written.
        const first = store.txn([
          { op: 'updateStatus', object: { ...running, status: { phase: 'Stopping' } } },
          { op: 'create', object: event(1) },
        ]);
        await expectReason(first, 'AlreadyExists');
        expect(await store.revision()).toBe(rev + 1);
        expect((await store.get(keyOf(a)))!.status).toEqual({ phase: 'Running' });
        expect((await store.get(keyOf(ev)))!).toMatchObject({ count: 2 });
      });

      it('dryRun runs every check, returns the results and writes nothing', async () => {
        const a = await store.create(session('a'));
        const rev = await store.revision();
        const w = new Recorder(store, { fromRevision: rev });
        const res = await store.txn(
          [
            { op: 'create', object: session('b') },
            { op: 'update', object: { ...a, spec: { prompt: 'changed' } } },
          ],
          { dryRun: true },
        );
        expect(res[0].metadata.uid).toBeTruthy();
        expect(res[0].metadata.generation).toBe(1);
        expect(res[1].spec!.prompt).toBe('changed');
        expect(res[1].metadata.generation).toBe(2);
        expect(await store.revision()).toBe(rev);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })).toBeUndefined();
        expect((await store.get(keyOf(a)))!.spec!.prompt).toBe(a.spec!.prompt);
        await expectReason(store.txn([{ op: 'create', object: session('a') }], { dryRun: true }), 'AlreadyExists');
        await store.create(session('z'));
        await w.waitFor(1);
        await sleep(50);
        expect(w.summary()).toEqual(['ADDED AgentSession/default/z']);
        w.handle.close();
      });
    });

    describe('txn guard: unchanged since a revision', () => {
      const guard = (since: number, namespace = 'default', kind = 'AgentSession') =>
        ({ op: 'unchanged', kind, namespace, since }) as const;
      const anyNamespace = (since: number) => ({ op: 'unchanged', kind: 'AgentSession', since }) as const;

      it('passes when nothing of the kind changed since, and has no result of its own', async () => {
        await store.create(session('a'));
        const since = await store.revision();
        const res = await store.txn([guard(since), anyNamespace(since), { op: 'create', object: session('b') }]);
        expect(res.map((o) => o.metadata.name)).toEqual(['b']);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })).toBeDefined();
        // A guard alone writes nothing.
        const rev = await store.revision();
        expect(await store.txn([guard(rev)])).toEqual([]);
        expect(await store.revision()).toBe(rev);
      });

      it('fails with Conflict when an object of the kind was created in the namespace since', async () => {
        const since = await store.revision();
        const c = await store.create(session('c'));
        const e = await expectReason(store.txn([guard(since), { op: 'create', object: session('d') }]), 'Conflict');
        expect(e.message).toContain('agentsession');
        expect(e.message).toContain('"default"');
        expect(e.message).toContain(`revision ${c.metadata.resourceVersion}`);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'd' })).toBeUndefined();
        // From the new revision it passes.
        await store.txn([guard(await store.revision()), { op: 'create', object: session('d') }]);
      });

      it('fails when an object of the kind was updated since: spec, metadata or status', async () => {
        const a = await store.create(session('a'));
        let since = await store.revision();
        const a2 = await store.update({ ...a, spec: { ...a.spec, prompt: 'changed' } });
        await expectReason(store.txn([guard(since)]), 'Conflict');
        since = await store.revision();
        const a3 = await store.update({ ...a2, metadata: { ...a2.metadata, annotations: { 'orchctl.io/x': '1' } } });
        await expectReason(store.txn([guard(since)]), 'Conflict');
        since = await store.revision();
        const a4 = await store.updateStatus({ ...a3, status: { phase: 'Running' } });
        const e = await expectReason(store.txn([guard(since)]), 'Conflict');
        expect(e.message).toContain(`revision ${a4.metadata.resourceVersion}`);
        await store.txn([guard(await store.revision())]);
      });

      it('is not affected by other kinds or other namespaces; without a namespace it sees them all', async () => {
        await store.create(session('a'));
        const since = await store.revision();
        await store.create(session('b', { namespace: 'other' }));
        await store.create({ ...session('p'), kind: 'Project' });
        await store.create(node('n'));
        await store.txn([guard(since), guard(since, 'empty')]);
        await expectReason(store.txn([guard(since, 'other')]), 'Conflict');
        await expectReason(store.txn([anyNamespace(since)]), 'Conflict');
        await expectReason(store.txn([guard(since, 'default', 'Project')]), 'Conflict');
        // A cluster-scoped kind is guarded with namespace ''.
        await expectReason(store.txn([guard(since, '', 'Node')]), 'Conflict');
        await store.txn([guard(await store.revision(), '', 'Node')]);
      });

      it('does not see deletions (a deletion cannot make a duplicate)', async () => {
        const a = await store.create(session('a'));
        const since = await store.revision();
        await store.delete(keyOf(a));
        await store.txn([guard(since), { op: 'create', object: session('b') }]);
      });

      it('a failing guard leaves every other op of the transaction unapplied', async () => {
        const a = await store.create(session('a'));
        const x = await store.create(session('x', { namespace: 'other' }));
        const since = await store.revision();
        const intruder = await store.create(session('intruder'));
        const rev = await store.revision();
        const w = new Recorder(store, { fromRevision: rev });
        await expectReason(
          store.txn([
            { op: 'create', object: session('b') },
            { op: 'update', object: { ...a, spec: { prompt: 'changed' } } },
            { op: 'delete', key: keyOf(x) },
            guard(since),
            { op: 'create', object: node('n') },
          ]),
          'Conflict',
        );
        expect(await store.revision()).toBe(rev);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })).toBeUndefined();
        expect(await store.get(keyOf(a))).toEqual(a);
        expect(await store.get(keyOf(x))).toEqual(x);
        expect(await store.get({ kind: 'Node', namespace: '', name: 'n' })).toBeUndefined();
        expect(await store.get(keyOf(intruder))).toEqual(intruder);
        await store.create(session('z'));
        await w.waitFor(1);
        await sleep(50);
        expect(w.summary()).toEqual(['ADDED AgentSession/default/z']);
        w.handle.close();
      });

      it("is checked before the transaction's own writes, wherever it stands (as etcd's compares)", async () => {
        const since = await store.revision();
        const res = await store.txn([
          { op: 'create', object: session('first') },
          guard(since),
          { op: 'create', object: session('second') },
        ]);
        expect(res.map((o) => o.metadata.name)).toEqual(['first', 'second']);
      });

      it('dryRun checks it like any op and writes nothing', async () => {
        const since = await store.revision();
        const res = await store.txn([guard(since), { op: 'create', object: session('b') }], { dryRun: true });
        expect(res.map((o) => o.metadata.name)).toEqual(['b']);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })).toBeUndefined();
        await store.create(session('c'));
        await expectReason(
          store.txn([guard(since), { op: 'create', object: session('b') }], { dryRun: true }),
          'Conflict',
        );
      });

      it('of two writers deciding on the same view, exactly one creates', async () => {
        const since = await store.revision();
        const attempt = (name: string) =>
          store.txn([guard(since), { op: 'create', object: session(name) }]).then(
            () => 'ok',
            (e) => (isApiError(e, 'Conflict') ? 'conflict' : String(e)),
          );
        const outcomes = await Promise.all([attempt('from-person'), attempt('from-autopilot')]);
        expect(outcomes.sort()).toEqual(['conflict', 'ok']);
        expect((await store.list('AgentSession')).items).toHaveLength(1);
      });
    });

    describe('watch', () => {
      it('replays and then streams ADDED/MODIFIED/DELETED in revision order from a revision', async () => {
        const start = await store.revision();
        const a = await store.create(session('a'));
        const w = new Recorder(store, { fromRevision: start }); // a's ADDED is history, replayed
        const a2 = await store.update({ ...a, spec: { prompt: 'changed' } });
        const a3 = await store.updateStatus({ ...a2, status: { phase: 'Running' } });
        await store.create(session('b'));
        await store.delete(keyOf(a));
        const events = await w.waitFor(5);
        expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
          'ADDED a',
          'MODIFIED a',
          'MODIFIED a',
          'ADDED b',
          'DELETED a',
        ]);
        for (let i = 1; i < events.length; i++) expect(events[i].revision).toBeGreaterThan(events[i - 1].revision);
        expect(events[0].revision).toBe(Number(a.metadata.resourceVersion));
        expect(events[0].object.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
        expect(events[2].object.status).toEqual({ phase: 'Running' });
        expect(events[2].revision).toBe(Number(a3.metadata.resourceVersion));
        expect(events[4].revision).toBe(await store.revision());
        w.handle.close();
      });

      it('delivers only events after fromRevision', async () => {
        await store.create(session('a'));
        const mid = await store.revision();
        await store.create(session('b'));
        const w = new Recorder(store, { fromRevision: mid });
        await store.create(session('c'));
        await w.waitFor(2);
        await sleep(50);
        expect(w.summary()).toEqual(['ADDED AgentSession/default/b', 'ADDED AgentSession/default/c']);
        w.handle.close();
      });

      it('filters by kind and namespace', async () => {
        const from = await store.revision();
        const byKind = new Recorder(store, { kind: 'AgentSession', fromRevision: from });
        const byNs = new Recorder(store, { kind: 'AgentSession', namespace: 'other', fromRevision: from });
        const nodes = new Recorder(store, { kind: 'Node', fromRevision: from });
        const all = new Recorder(store, { fromRevision: from });
        await store.create(session('a'));
        await store.create(node('n'));
        await store.create(session('b', { namespace: 'other' }));
        await store.create({ ...session('p', { namespace: 'other' }), kind: 'Project' });
        await store.create(session('c'));
        // Every watch is waited for (each is its own stream, late under load); then a moment for any
        // event that should not have come.
        await all.waitFor(5);
        await byKind.waitFor(3);
        await byNs.waitFor(1);
        await nodes.waitFor(1);
        await sleep(50);
        expect(byKind.summary()).toEqual([
          'ADDED AgentSession/default/a',
          'ADDED AgentSession/other/b',
          'ADDED AgentSession/default/c',
        ]);
        expect(byNs.summary()).toEqual(['ADDED AgentSession/other/b']);
        expect(nodes.summary()).toEqual(['ADDED Node//n']);
        expect(all.events).toHaveLength(5);
        for (const w of [byKind, byNs, nodes, all]) w.handle.close();
      });

      it('stops delivering after close', async () => {
        const w = new Recorder(store, { fromRevision: await store.revision() });
        await store.create(session('a'));
        await w.waitFor(1);
        w.handle.close();
        await store.create(session('b'));
        await sleep(100);
        expect(w.summary()).toEqual(['ADDED AgentSession/default/a']);
      });

      it('from a compacted revision fails with reason Gone (the caller relists)', async () => {
        const s = await open({ retainRevisions: 10 });
        const first = await s.create(session('a'));
        let cur = first;
        // Enough revisions that any backend honouring retainRevisions: 10 compacts revision 1.
        for (let batch = 0; batch < 12; batch++) {
          const ops = [];
          for (let i = 0; i < 100; i++)
            ops.push({
              op: 'update' as const,
              object: {
                ...cur,
                metadata: { ...cur.metadata, resourceVersion: undefined },
                spec: { prompt: `p${batch}-${i}` },
              },
            });
          const res = await s.txn(ops);
          cur = res[res.length - 1];
        }
        const w = new Recorder(s, { fromRevision: Number(first.metadata.resourceVersion) - 1 });
        await until(() => w.errors.length > 0 || w.events.length > 0, 'a watch error');
        expect(w.events).toEqual([]);
        expect(isApiError(w.errors[0], 'Gone')).toBe(true);
        // A watch from a recent revision still works.
        const recent = new Recorder(s, { kind: 'AgentSession', fromRevision: (await s.revision()) - 3 });
        const events = await recent.waitFor(3);
        expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED', 'MODIFIED']);
        expect(events[2].object.spec!.prompt).toBe('p11-99');
        recent.handle.close();
      });
      it('a live watch of a kind nobody writes is not told Gone when changes it skipped are compacted', async () => {
        const s = await open({ retainRevisions: 10 });
        let cur = await s.create(session('a'));
        const pipelines = new Recorder(s, { kind: 'Pipeline', fromRevision: await s.revision() });
        // Live first: on etcd the watch is its own stream, opened a moment later, and one opened only
        // after its start revision was compacted is rightly told Gone (under load, that moment was
        // long enough for the writes below to compact it). Its first event says it is open.
        await s.create({ ...session('p0'), kind: 'Pipeline' });
        await pipelines.waitFor(1);
        // Past the first compaction in writes of 5 (fewer than are kept), each followed by a delivery,
        // as a live process interleaves them.
        for (let batch = 0; batch < 220; batch++) {
          const ops = [];
          for (let i = 0; i < 5; i++)
            ops.push({
              op: 'update' as const,
              object: { ...cur, metadata: { ...cur.metadata, resourceVersion: undefined }, spec: { prompt: `${i}` } },
            });
          const res = await s.txn(ops);
          cur = res[res.length - 1];
          await new Promise((r) => setImmediate(r));
        }
        await s.create({ ...session('p'), kind: 'Pipeline' });
        await pipelines.waitFor(2);
        expect(pipelines.errors).toEqual([]);
        expect(pipelines.summary()).toEqual(['ADDED Pipeline/default/p0', 'ADDED Pipeline/default/p']);
        pipelines.handle.close();
      });
    });

    describe('txn fence: only while the caller holds a lease', () => {
      const fence = (holder: string) => ({ fence: { lease: 'ctl', holder } });

      it('applies while the holder holds the lease, unexpired', async () => {
        await store.tryAcquireLease('ctl', 'leader-a', 10);
        const [a] = await store.txn([{ op: 'create', object: session('a') }], fence('leader-a'));
        expect(await store.get(keyOf(a))).toEqual(a);
        // Renewing does not break the fence.
        await store.tryAcquireLease('ctl', 'leader-a', 10);
        await store.txn([{ op: 'update', object: { ...a, spec: { prompt: 'changed' } } }], fence('leader-a'));
      });

      it('fails with a fenced Conflict naming the lease when another holds it, and writes nothing', async () => {
        await store.tryAcquireLease('ctl', 'leader-b', 10);
        const rev = await store.revision();
        const e = await expectReason(
          store.txn([{ op: 'create', object: session('a') }], fence('leader-a')),
          'Conflict',
        );
        expect(isFenced(e)).toBe(true);
        expect(e.message).toContain('"ctl"');
        expect(e.message).toContain('leader-b');
        expect(await store.revision()).toBe(rev);
        expect(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'a' })).toBeUndefined();
        // A plain Conflict (stale resourceVersion) is not a fenced one.
        const b = await store.create(session('b'));
        await store.update({ ...b, spec: { prompt: 'x' } });
        expect(isFenced(await apiError(store.update({ ...b, spec: { prompt: 'y' } })))).toBe(false);
      });

      it('fails when nobody holds the lease or it expired, and after a takeover fences the old holder', async () => {
        expect(isFenced(await apiError(store.txn([{ op: 'create', object: session('a') }], fence('leader-a'))))).toBe(
          true,
        );
        await store.tryAcquireLease('ctl', 'leader-a', 1);
        await store.txn([{ op: 'create', object: session('a') }], fence('leader-a'));
        await sleep(1300);
        const e = await apiError(store.txn([{ op: 'create', object: session('b') }], fence('leader-a')));
        expect(isFenced(e)).toBe(true);
        expect(e.message).toContain('expired');
        await store.tryAcquireLease('ctl', 'leader-b', 10);
        expect(isFenced(await apiError(store.txn([{ op: 'create', object: session('b') }], fence('leader-a'))))).toBe(
          true,
        );
        await store.txn([{ op: 'create', object: session('b') }], fence('leader-b'));
        // Released: nobody holds it.
        await store.releaseLease('ctl', 'leader-b');
        expect(isFenced(await apiError(store.txn([{ op: 'create', object: session('c') }], fence('leader-b'))))).toBe(
          true,
        );
      });

      it('is checked by a dry run and by a guards-only transaction too', async () => {
        await store.tryAcquireLease('ctl', 'leader-b', 10);
        const since = await store.revision();
        const guard = { op: 'unchanged', kind: 'AgentSession', since } as const;
        expect(isFenced(await apiError(store.txn([guard], fence('leader-a'))))).toBe(true);
        const dry = store.txn([{ op: 'create', object: session('a') }], { ...fence('leader-a'), dryRun: true });
        expect(isFenced(await apiError(dry))).toBe(true);
        expect(await store.txn([guard], fence('leader-b'))).toEqual([]);
      });

      it('of a deposed leader and the new one racing, only the holder writes', async () => {
        await store.tryAcquireLease('ctl', 'old', 1);
        await sleep(1100);
        const takeover = store.tryAcquireLease('ctl', 'new', 10);
        const write = (holder: string, name: string) =>
          store.txn([{ op: 'create', object: session(name) }], fence(holder)).then(
            () => 'ok',
            (e) => (isFenced(e) ? 'fenced' : String(e)),
          );
        const [outcomeOld] = await Promise.all([write('old', 'from-old'), takeover]);
        expect(outcomeOld).toBe('fenced');
        expect(await write('new', 'from-new')).toBe('ok');
        expect((await store.list('AgentSession')).items.map((o) => o.metadata.name)).toEqual(['from-new']);
      });
    });

    describe('leases', () => {
      it('are acquired, renewed by the holder, refused others while fresh, taken over expired, released', async () => {
        expect(await store.getLease('ctl')).toBeUndefined();
        const a1 = await store.tryAcquireLease('ctl', 'host-a', 2);
        expect(a1).toMatchObject({
          name: 'ctl',
          holderIdentity: 'host-a',
          leaseDurationSeconds: 2,
          leaderTransitions: 0,
        });
        expect(a1!.acquireTime).toBeTruthy();
        expect(await store.tryAcquireLease('ctl', 'host-b', 2)).toBeUndefined();
        // Another lease name is independent.
        expect((await store.tryAcquireLease('other', 'host-b', 2))!.holderIdentity).toBe('host-b');
        // Renewal by the holder extends the lease: 2.4 s after acquiring, 1.2 s after renewing, it is still held.
        await sleep(1200);
        const a2 = await store.tryAcquireLease('ctl', 'host-a', 2);
        expect(a2!.holderIdentity).toBe('host-a');
        expect(a2!.acquireTime).toBe(a1!.acquireTime);
        expect(a2!.leaderTransitions).toBe(0);
        await sleep(1200);
        expect(await store.tryAcquireLease('ctl', 'host-b', 2)).toBeUndefined();
        expect((await store.getLease('ctl'))!.holderIdentity).toBe('host-a');
        // Renew with a 1-second duration, then let it expire: another holder takes it over.
        expect((await store.tryAcquireLease('ctl', 'host-a', 1))!.leaseDurationSeconds).toBe(1);
        await sleep(1300);
        const b = await store.tryAcquireLease('ctl', 'host-b', 15);
        expect(b).toMatchObject({ holderIdentity: 'host-b', leaseDurationSeconds: 15, leaderTransitions: 1 });
        expect(b!.acquireTime).not.toBe(a1!.acquireTime);
        expect(await store.tryAcquireLease('ctl', 'host-a', 15)).toBeUndefined();
        // Release by someone who does not hold it does nothing; by the holder frees it.
        await store.releaseLease('ctl', 'host-a');
        expect((await store.getLease('ctl'))!.holderIdentity).toBe('host-b');
        await store.releaseLease('ctl', 'host-b');
        expect(await store.getLease('ctl')).toBeUndefined();
        expect((await store.tryAcquireLease('ctl', 'host-a', 15))!.holderIdentity).toBe('host-a');
      });

      it('do not touch the object revision', async () => {
        const rev = await store.revision();
        await store.tryAcquireLease('ctl', 'me', 10);
        await store.releaseLease('ctl', 'me');
        expect(await store.revision()).toBe(rev);
      });
    });
  });
}
