/**
 * The scheduler and node lifecycle against a real SQLite store, in process: fake nodes (Node objects
 * and node leases the test writes, no node agents), the scheduler under a real Manager (its watches
 * and retries as in the controller), node lifecycle driven by the test on a fake clock, and two
 * schedulers racing on snapshot caches.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Node } from '../../controller/api/node.js';
import type { Project } from '../../controller/api/project.js';
import type { AgentSession, AgentSessionSpec } from '../../controller/api/session.js';
import { API_VERSION, type Condition, type Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { NodeLifecycleReconciler } from '../../controller/reconcilers/nodelifecycle/reconciler.js';
import { SchedulerReconciler } from '../../controller/reconcilers/scheduler/reconciler.js';
import { setup as setupScheduler } from '../../controller/reconcilers/scheduler/setup.js';
import { Informer } from '../../controller/runtime/informer.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { Manager } from '../../controller/runtime/manager.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { snapshotCache } from '../support/autopilot-store.js';

let dir: string;
let db: string;
let store: SqliteStore;
let mgr: Manager | undefined;
let running: Promise<void> | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-sched-'));
  db = path.join(dir, 'state.db');
  store = new SqliteStore(db, { pollIntervalMs: 20 });
});
afterEach(async () => {
  await mgr?.stop();
  await running;
  mgr = undefined;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const T = new Date().toISOString();
const ready = (status = 'True'): Condition => ({
  type: 'Ready',
  status: status as Condition['status'],
  reason: 'NodeAgentReady',
  message: '',
  lastTransitionTime: T,
});

async function addNode(
  name: string,
  labels: Record<string, string>,
  maxSessions: number | undefined,
  projects: string[],
) {
  const n = await store.create({
    apiVersion: API_VERSION,
    kind: 'Node',
    metadata: { name, labels },
    spec: maxSessions === undefined ? {} : { maxSessions },
  } as Node);
  await store.updateStatus({
    ...n,
    status: {
      conditions: [ready()],
      capacity: { cpu: 8, memoryBytes: 16e9 },
      free: { memoryBytes: 8e9, diskBytes: 1e11 },
      loadAverage: [0.5, 0.5, 0.5],
      heartbeatTime: T,
      projects,
    },
  });
  await store.tryAcquireLease(`orchctl-node-${name}`, `${name}_1_test`, 15);
}

async function addProject(name: string, nodeSelector?: Record<string, string>) {
  await store.create({
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name, namespace: 'default' },
    spec: { path: dir, ...(nodeSelector ? { nodeSelector } : {}) },
  } as Project);
}

const addSession = (name: string, spec: Partial<AgentSessionSpec>) =>
  store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { prompt: 'work', ...spec },
  } as AgentSession);

const sessions = async () => (await store.list('AgentSession')).items as AgentSession[];
const get = async (name: string) =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name })) as AgentSession;
const cond = (s: Resource, type: string) =>
  (s.status as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
const eventsOf = async (name: string, reason: string) =>
  (await store.list('Event', { namespace: 'default' })).items.filter(
    (e) => (e as { involvedObject?: { name: string } }).involvedObject?.name === name && e.reason === reason,
  ) as (Resource & { count?: number; message?: string })[];

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The scheduler as the controller runs it: its own store handle, a Manager, its setup's watches. */
async function startScheduler(noNodesGraceMs?: number): Promise<Manager> {
  const m = new Manager({ store: new SqliteStore(db, { pollIntervalMs: 20 }), log: silentLogger });
  mgr = m;
  let ready!: () => void;
  const leading = new Promise<void>((r) => (ready = r));
  running = m.run(() => {
    setupScheduler(m, { recorder: new EventRecorder(m.store, 'orchctl-scheduler'), noNodesGraceMs });
    ready();
  });
  await leading;
  return m;
}

describe('scheduling 30 sessions across 3 nodes', () => {
  it('by selectors, repository and capacity: none on a node that does not match, each bound once', async () => {
    await addNode('n1', { zone: 'a', gpu: 'yes' }, 12, ['default/ml', 'default/web', 'default/api']);
    await addNode('n2', { zone: 'a' }, 10, ['default/web', 'default/api']);
    await addNode('n3', { zone: 'b' }, 12, ['default/api']);
    await addProject('ml', { gpu: 'yes' }); // the project's own selector
    await addProject('web'); // its repository is on n1 and n2 only
    await addProject('api');
    // Made in this order, so the pinned ones are placed before the free ones fill a node.
    for (let i = 0; i < 8; i++) await addSession(`ml-${i}`, { projectRef: 'ml' });
    for (let i = 0; i < 6; i++) await addSession(`b-${i}`, { projectRef: 'api', nodeSelector: { zone: 'b' } });
    for (let i = 0; i < 10; i++) await addSession(`web-${i}`, { projectRef: 'web' });
    for (let i = 0; i < 6; i++) await addSession(`any-${i}`, { projectRef: 'api' });
    await startScheduler();
    const all = await until('30 sessions bound', async () => {
      const s = await sessions();
      return s.filter((x) => x.status?.binding).length === 30 && s;
    });
    const on = (prefix: string) =>
      new Set(all.filter((s) => s.metadata.name.startsWith(prefix)).map((s) => s.status!.binding!.nodeName));
    expect(on('ml-')).toEqual(new Set(['n1']));
    expect(on('b-')).toEqual(new Set(['n3']));
    expect([...on('web-')].every((n) => n === 'n1' || n === 'n2')).toBe(true);
    const count = (n: string) => all.filter((s) => s.status!.binding!.nodeName === n).length;
    expect(count('n1')).toBeLessThanOrEqual(12);
    expect(count('n2')).toBeLessThanOrEqual(10);
    expect(count('n3')).toBeLessThanOrEqual(12);
    // Spread: the free sessions did not all go to one node.
    expect(on('any-').size).toBeGreaterThan(1);
    for (const s of all) {
      expect(s.status!.binding!.epoch).toBe(1);
      expect(cond(s, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Scheduled' });
    }
    // Bound once: a resync and Node changes later, nothing moved and nothing was written again.
    const versions = new Map(all.map((s) => [s.metadata.name, s.metadata.resourceVersion]));
    const n3 = await store.get({ kind: 'Node', namespace: '', name: 'n3' });
    await store.updateStatus({ ...n3!, status: { ...n3!.status, heartbeatTime: new Date().toISOString() } });
    await new Promise((r) => setTimeout(r, 300));
    for (const s of await sessions()) expect(s.metadata.resourceVersion).toBe(versions.get(s.metadata.name));
  }, 30_000);

  it("none fits: Scheduled=False in kubectl's words, one FailedScheduling Event; bound once a node fits", async () => {
    await addNode('n1', { zone: 'a' }, 10, []);
    await addNode('n2', { zone: 'a' }, 0, []);
    await addNode('n3', { zone: 'b' }, 10, []);
    await startScheduler();
    await addSession('wants-c', { nodeSelector: { zone: 'c' } });
    const s = await until('Unschedulable', async () => {
      const x = await get('wants-c');
      return cond(x, 'Scheduled')?.reason === 'Unschedulable' && x;
    });
    expect(cond(s, 'Scheduled')?.message).toBe("0/3 nodes are available: 3 node(s) didn't match node selector.");
    // Node changes retry it; the same answer writes nothing and records no second Event.
    for (const name of ['n1', 'n3']) {
      const n = await store.get({ kind: 'Node', namespace: '', name });
      await store.updateStatus({ ...n!, status: { ...n!.status, heartbeatTime: new Date().toISOString() } });
    }
    await new Promise((r) => setTimeout(r, 300));
    expect((await get('wants-c')).metadata.resourceVersion).toBe(s.metadata.resourceVersion);
    const failed = await eventsOf('wants-c', 'FailedScheduling');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: 'Warning', count: 1, message: cond(s, 'Scheduled')?.message });
    // A node that matches joins: the retry on the Node change binds it there.
    await addNode('n4', { zone: 'c' }, 10, []);
    const bound = await until('bound to n4', async () => {
      const x = await get('wants-c');
      return x.status?.binding && x;
    });
    expect(bound.status?.binding).toMatchObject({ nodeName: 'n4', epoch: 1 });
    expect(cond(bound, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Scheduled' });
  }, 30_000);

  it('no Node registered yet at the start: no FailedScheduling; bound when the first Node registers', async () => {
    await addSession('early', {});
    await startScheduler();
    await new Promise((r) => setTimeout(r, 500)); // the scheduler's first pass has seen no Node
    expect(cond(await get('early'), 'Scheduled')).toBeUndefined();
    await addNode('n1', {}, 10, []);
    const bound = await until('bound to n1', async () => {
      const x = await get('early');
      return x.status?.binding && x;
    });
    expect(bound.status?.binding?.nodeName).toBe('n1');
    expect(await eventsOf('early', 'FailedScheduling')).toEqual([]);
  }, 30_000);

  it('still no Node once its first heartbeat was due: Unschedulable, "no nodes registered"', async () => {
    await addSession('alone', {});
    await startScheduler(300);
    const s = await until('Unschedulable', async () => {
      const x = await get('alone');
      return cond(x, 'Scheduled')?.reason === 'Unschedulable' && x;
    });
    expect(cond(s, 'Scheduled')?.message).toBe('0/0 nodes are available: no nodes registered.');
    expect(await eventsOf('alone', 'FailedScheduling')).toHaveLength(1);
  }, 30_000);

  it('maxSessions full on the only matching node: Too many sessions, until one of them finishes', async () => {
    await addNode('n1', { zone: 'a' }, 1, []);
    await addNode('n2', { zone: 'b' }, 5, []);
    await startScheduler();
    await addSession('first', { nodeSelector: { zone: 'a' } });
    const first = await until('first bound', async () => (await get('first')).status?.binding && get('first'));
    await addSession('second', { nodeSelector: { zone: 'a' } });
    await until('second waits', async () => cond(await get('second'), 'Scheduled')?.reason === 'Unschedulable');
    expect(cond(await get('second'), 'Scheduled')?.message).toBe(
      "0/2 nodes are available: 1 node(s) didn't match node selector, 1 Too many sessions.",
    );
    await store.updateStatus({ ...first, status: { ...first.status, phase: 'Succeeded' } });
    // The next retry (Node heartbeat) finds the room.
    const n1 = await store.get({ kind: 'Node', namespace: '', name: 'n1' });
    await store.updateStatus({ ...n1!, status: { ...n1!.status, heartbeatTime: new Date().toISOString() } });
    await until('second bound', async () => (await get('second')).status?.binding?.nodeName === 'n1');
  }, 30_000);
});

describe('a node lost', () => {
  it('Ready=Unknown and NodeLost after its lease; after the grace moved with epoch+1, or failed', async () => {
    await addNode('n1', {}, 10, []);
    await addNode('n2', {}, 10, []);
    await addNode('n3', {}, 10, []);
    // Pinned first: all three land on n1; then the pin goes (as a person would edit it).
    const names = { always: 'Always', onfailure: 'OnFailure', never: 'Never' } as const;
    for (const [name, restartPolicy] of Object.entries(names))
      await addSession(name, { nodeName: 'n1', restartPolicy });
    const m = await startScheduler();
    for (const name of Object.keys(names))
      await until(`${name} bound`, async () => (await get(name)).status?.binding?.nodeName === 'n1');
    for (const name of Object.keys(names)) {
      const s = await get(name);
      const unpinned = await store.update({ ...s, spec: { ...s.spec, nodeName: undefined } });
      // Running there: its node recorded the run under the binding's epoch.
      await store.updateStatus({ ...unpinned, status: { ...s.status, phase: 'Running', lifecycle: { epoch: 1 } } });
    }
    let now = Date.now();
    const lc = new NodeLifecycleReconciler({
      store,
      nodes: m.informer('Node'),
      sessions: m.informer('AgentSession'),
      recorder: new EventRecorder(store, 'orchctl-node-lifecycle'),
      now: () => now,
    });
    await until('cache has the runs', async () =>
      (m.informer('AgentSession').list() as AgentSession[]).every((s) => s.status?.phase === 'Running'),
    );
    expect(await lc.reconcile('/n1')).toEqual({ requeueAfterMs: 15_000 });
    now += 16_000; // n1 stops renewing
    await lc.reconcile('/n1');
    const node = (await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node;
    expect(cond(node, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    for (const name of Object.keys(names)) {
      const s = await get(name);
      expect(cond(s, 'NodeLost')).toMatchObject({ status: 'True', reason: 'NodeLost' });
      expect(s.status?.binding?.nodeName).toBe('n1'); // still: the grace is not over
      expect(await eventsOf(name, 'NodeLost')).toHaveLength(1);
    }
    await until('cache sees NodeLost', async () =>
      (m.informer('AgentSession').list() as AgentSession[]).every((s) => cond(s, 'NodeLost')),
    );
    now += 25_000; // 41 s since the last renewal seen
    await lc.reconcile('/n1');
    for (const name of ['always', 'onfailure']) {
      const s = await until(`${name} rebound`, async () => {
        const x = await get(name);
        return !!x.status?.binding && x.status.binding.nodeName !== 'n1' && x;
      });
      expect(s.status?.binding?.epoch).toBe(2);
      // Its run ended with the node, in the unbinding write: not Running with no pane meanwhile.
      expect(s.status).toMatchObject({ phase: 'Pending', reason: 'NodeLost', lifecycle: { epoch: 1 } });
      expect(s.status?.completionTime).toBeDefined();
      expect(cond(s, 'NodeLost')).toMatchObject({ status: 'False', reason: 'Rescheduled' });
      expect((await eventsOf(name, 'Rescheduled')).length).toBe(1);
    }
    const never = await get('never');
    expect(never.status).toMatchObject({ phase: 'Failed', reason: 'NodeLost' });
    expect(never.status?.binding).toBeUndefined();
    await new Promise((r) => setTimeout(r, 300));
    expect((await get('never')).status?.binding).toBeUndefined(); // finished and not asked to run: stays unbound
    // n1 comes back: seen renewing, Ready=True again.
    await new Promise((r) => setTimeout(r, 5));
    await store.tryAcquireLease('orchctl-node-n1', 'n1_1_test', 15);
    now += 1000;
    await lc.reconcile('/n1');
    const back = (await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node;
    expect(cond(back, 'Ready')).toMatchObject({ status: 'True', reason: 'NodeLeaseRenewed' });
  }, 30_000);
});

describe("node lifecycle's cost", () => {
  it('a pass over a live, Ready node looks at none of its sessions; a lost node at all of them', async () => {
    await addNode('n1', {}, 100, []);
    for (let i = 0; i < 20; i++) {
      const s = await addSession(`s${i}`, { restartPolicy: 'Always' });
      await store.updateStatus({ ...s, status: { phase: 'Running', binding: { nodeName: 'n1', epoch: 1 } } });
    }
    const nodes = new Informer(store, 'Node');
    const cache = new Informer(store, 'AgentSession');
    await Promise.all([nodes.start(), cache.start()]);
    // Every session the reconciler is handed by the cache, whichever way it asks.
    let looked = 0;
    const counted = <T>(r: T[]) => {
      looked += r.length;
      return r;
    };
    let now = Date.now();
    const lc = new NodeLifecycleReconciler({
      store,
      nodes,
      sessions: {
        addIndex: (n, fn) => cache.addIndex(n, fn),
        byIndex: (n, v) => counted(cache.byIndex(n, v)),
        list: (ns?: string) => counted(cache.list(ns)),
      } as ConstructorParameters<typeof NodeLifecycleReconciler>[0]['sessions'],
      recorder: new EventRecorder(store, 'orchctl-node-lifecycle'),
      now: () => now,
    });
    try {
      for (let i = 0; i < 3; i++) {
        expect(await lc.reconcile('/n1')).toEqual({ requeueAfterMs: 15_000 - i * 2000 });
        now += 2000;
      }
      expect(looked).toBe(0);
      now += 16_000; // n1 stops renewing: every session bound there is marked
      await lc.reconcile('/n1');
      expect(looked).toBe(20);
      expect((await sessions()).filter((s) => cond(s, 'NodeLost')?.status === 'True')).toHaveLength(20);
    } finally {
      nodes.stop();
      cache.stop();
    }
  });
});

describe('a store outage is not a node lost', () => {
  it('no node judged lost for time the control plane could not write: its lease counts from the return', async () => {
    await addNode('n1', {}, 10, []);
    await addNode('n2', {}, 10, []);
    await addSession('kept', { nodeName: 'n1', restartPolicy: 'Always' });
    const m = await startScheduler();
    await until('kept bound', async () => (await get('kept')).status?.binding?.nodeName === 'n1');
    const s = await get('kept');
    await store.updateStatus({ ...s, status: { ...s.status, phase: 'Running', lifecycle: { epoch: 1 } } });
    let now = Date.now();
    let back: number | undefined;
    const lc = new NodeLifecycleReconciler({
      store,
      nodes: m.informer('Node'),
      sessions: m.informer('AgentSession'),
      recorder: new EventRecorder(store, 'orchctl-node-lifecycle'),
      now: () => now,
      storeReturnedAt: () => back,
    });
    await until('cache has the run', async () =>
      (m.informer('AgentSession').list() as AgentSession[]).every((x) => x.status?.phase === 'Running'),
    );
    await lc.reconcile('/n1');
    // 60 s without quorum: nobody renewed anything, this control plane included. The store is back now.
    now += 60_000;
    back = now;
    await lc.reconcile('/n1');
    const node = (await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node;
    expect(cond(node, 'Ready')).toMatchObject({ status: 'True' });
    expect(await eventsOf('kept', 'NodeLost')).toHaveLength(0);
    // Still silent a full lease after the return: lost then, as any node.
    now += 16_000;
    await lc.reconcile('/n1');
    const lost = (await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node;
    expect(cond(lost, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    expect((await get('kept')).status?.binding?.nodeName).toBe('n1'); // the grace counts from the return too
  }, 30_000);
});

describe('a lost node counts what is bound there now', () => {
  it("its SESSIONS counts the sessions still bound, not the lost node's last count (11, then 2, then 0)", async () => {
    await addNode('n1', {}, 24, []);
    await addNode('n2', {}, 24, []);
    for (const name of ['a', 'b']) await addSession(name, { nodeName: 'n1', restartPolicy: 'Always' });
    const m = await startScheduler();
    for (const name of ['a', 'b'])
      await until(`${name} bound`, async () => (await get(name)).status?.binding?.nodeName === 'n1');
    for (const name of ['a', 'b']) {
      const s = await get(name);
      const unpinned = await store.update({ ...s, spec: { ...s.spec, nodeName: undefined } });
      await store.updateStatus({ ...unpinned, status: { ...s.status, phase: 'Running', lifecycle: { epoch: 1 } } });
    }
    // What n1 wrote last before it was lost: a count from another time.
    const n1 = (await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node;
    await store.updateStatus({ ...n1, status: { ...n1.status, sessions: 11 } });
    let now = Date.now();
    const lc = new NodeLifecycleReconciler({
      store,
      nodes: m.informer('Node'),
      sessions: m.informer('AgentSession'),
      recorder: new EventRecorder(store, 'orchctl-node-lifecycle'),
      now: () => now,
    });
    const count = async () => ((await store.get({ kind: 'Node', namespace: '', name: 'n1' })) as Node).status?.sessions;
    await until('cache has the runs and the count', async () => {
      const node = m.informer('Node').get('', 'n1') as Node | undefined;
      const runs = (m.informer('AgentSession').list() as AgentSession[]).every((s) => s.status?.phase === 'Running');
      return runs && node?.status?.sessions === 11;
    });
    await lc.reconcile('/n1');
    expect(await count()).toBe(11); // Ready: the node's own count stands
    now += 16_000; // n1 stops renewing
    await lc.reconcile('/n1');
    expect(await count()).toBe(2);
    await until('cache sees NodeLost', async () =>
      (m.informer('AgentSession').list() as AgentSession[]).every((s) => cond(s, 'NodeLost')),
    );
    now += 25_000; // past the grace: both moved
    await lc.reconcile('/n1');
    expect(await count()).toBe(0);
  }, 30_000);
});

describe('binding races', () => {
  async function world() {
    await addNode('n1', {}, 10, []);
    await addNode('n2', {}, 10, []);
    await addSession('s', {});
  }
  const scheduler = async () => {
    const cache = await snapshotCache(store, ['AgentSession', 'Node', 'Project', 'SessionPolicy']);
    return new SchedulerReconciler({
      store,
      sessions: cache('AgentSession'),
      nodes: cache('Node'),
      projects: cache('Project'),
      policies: cache('SessionPolicy'),
      recorder: new EventRecorder(store),
    });
  };

  it('two schedulers place the same session at once: one binding, epoch 1', async () => {
    for (let round = 0; round < 5; round++) {
      await store.delete({ kind: 'AgentSession', namespace: 'default', name: 's' }).catch(() => undefined);
      if (round === 0) await world();
      else await addSession('s', {});
      const [a, b] = [await scheduler(), await scheduler()];
      const writes: number[] = [];
      const from = await store.revision();
      const h = store.watch({ kind: 'AgentSession', fromRevision: from }, (e) => writes.push(e.revision));
      await Promise.all([a.reconcile('default/s'), b.reconcile('default/s')]);
      await new Promise((r) => setTimeout(r, 100));
      h.close();
      const s = await get('s');
      expect(s.status?.binding?.epoch).toBe(1);
      expect(writes).toHaveLength(1);
    }
  });

  it("a person's edit between the read and the bind: planned again from a fresh read, the edit kept", async () => {
    await world();
    const r = await scheduler(); // read before the edit
    const s = await get('s');
    await store.update({ ...s, spec: { ...s.spec, nodeName: 'n2' } });
    // The scheduler's cache still has the session unpinned (it would pick n1): its bind conflicts,
    // it reads the session again and places it as edited.
    await r.reconcile('default/s');
    const after = await get('s');
    expect(after.spec?.nodeName).toBe('n2');
    expect(after.status?.binding).toMatchObject({ nodeName: 'n2', epoch: 1 });
  });
});

describe('scheduling cost', () => {
  it('one Node without maxSessions: sessions bound there without a pass over the session list', async () => {
    await addNode('n1', {}, undefined, []);
    for (let i = 0; i < 5; i++) await addSession(`s${i}`, {});
    const cache = await snapshotCache(store, ['AgentSession', 'Node', 'Project', 'SessionPolicy']);
    const all = cache('AgentSession');
    let lists = 0;
    const sessionsCache = {
      get: all.get.bind(all),
      list: (ns?: string) => {
        lists++;
        return all.list(ns);
      },
    };
    const r = new SchedulerReconciler({
      store,
      sessions: sessionsCache,
      nodes: cache('Node'),
      projects: cache('Project'),
      policies: cache('SessionPolicy'),
      recorder: new EventRecorder(store),
    });
    for (let i = 0; i < 5; i++) await r.reconcile(`default/s${i}`);
    expect((await sessions()).map((s) => s.status?.binding?.nodeName)).toEqual(['n1', 'n1', 'n1', 'n1', 'n1']);
    // Counting the sessions bound to each Node is a pass over all of them: O(N²) for a burst of N.
    expect(lists).toBe(0);
  });
});
