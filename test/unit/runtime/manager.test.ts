/**
 * The runtime manager over a real SQLite store in a temp directory: what a controller's declared
 * watches bring to its reconciler, the --once drain, the lease, and shutdown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { API_VERSION, type Resource } from '../../../controller/api/types.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { type EventSource, Informers, Manager } from '../../../controller/runtime/manager.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';

let dir: string;
let db: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-manager-'));
  db = path.join(dir, 'state.db');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const obj = (kind: string, name: string, namespace = 'default', spec: Record<string, unknown> = {}): Resource => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name, namespace },
  spec,
});
const store = () => new SqliteStore(db, { pollIntervalMs: 10 });

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A source the test fires by hand. */
class Manual implements EventSource<string> {
  private readonly handlers: ((e: string) => void)[] = [];
  subscribe(h: (e: string) => void): void {
    this.handlers.push(h);
  }
  fire(e: string): void {
    for (const h of this.handlers) h(e);
  }
}

it('--once: For, Watches and atStart keys reach the reconciler; it drains, runs the hooks, returns', async () => {
  const seed = store();
  await seed.create(obj('Thing', 'a'));
  await seed.create(obj('Thing', 'b', 'other'));
  await seed.create(obj('Owner', 'o', 'default', { thing: 'a' }));
  await seed.close();

  const trace: string[] = [];
  let background = 0;
  const mgr = new Manager({ store: store(), log: silentLogger, once: true });
  await mgr.run(() => {
    const things = mgr.informer('Thing');
    mgr.onSynced('first', async () => void trace.push('synced'));
    mgr.onDrained('last', async () => void trace.push(`drained (background ${background})`));
    mgr
      .controller('things', { workers: 2 })
      .for('Thing')
      .watches('Owner', (o) => [`${o.metadata.namespace}/${(o.spec as { thing: string }).thing}`])
      .every(60_000, () => ['/everything'], { atStart: true })
      .inFlight(() => background)
      .complete({
        async reconcile(key) {
          trace.push(key);
          if (key === '/everything') {
            // Background work --once must wait for.
            background++;
            setTimeout(() => background--, 100);
          }
          if (things.list().length !== 2) trace.push('a reconcile before the caches were filled');
        },
      });
  });
  await mgr.stop();
  expect(trace[0]).toBe('synced');
  expect(trace.at(-1)).toBe('drained (background 0)');
  expect(new Set(trace.slice(1, -1))).toEqual(new Set(['default/a', 'other/b', '/everything']));
});

it('long-running: periodic keys, sources and changes wake it; stop() ends run(), releases the lease', async () => {
  const seen: string[] = [];
  const manual = new Manual();
  const started: string[] = [];
  const mgr = new Manager({ store: store(), log: silentLogger });
  mgr.add({ start: () => void started.push('runnable'), stop: () => void started.push('stopped') });
  const running = mgr.run(() => {
    mgr
      .controller('c', { workers: 1 })
      .for('Thing')
      .watches(manual, (e) => [`from-source/${e}`])
      .every(30, () => ['tick/tock'])
      .complete({ reconcile: async (key) => void seen.push(key) });
  });
  await until('ready', () => mgr.readiness().ready);
  expect(mgr.readiness().reason).toContain('leading as');
  await until('periodic ticks', () => seen.filter((k) => k === 'tick/tock').length >= 2);
  manual.fire('x');
  await mgr.store.create(obj('Thing', 'late'));
  await until('source and watch', () => seen.includes('from-source/x') && seen.includes('default/late'));
  expect(started).toEqual(['runnable']);

  await mgr.stop();
  await running;
  expect(started).toEqual(['runnable', 'stopped']);
  expect(mgr.readiness()).toEqual({ ready: false, reason: 'shutting down' });
  const check = store();
  expect(await check.getLease('orchctl-controller')).toBeFalsy();
  await check.close();
});

/** The real store, its watch events handed on 200 ms late (as over etcd's network, or in a starved process). */
function lateWatch(s: SqliteStore): SqliteStore {
  return new Proxy(s, {
    get(t, p) {
      if (p === 'watch')
        return (...[opts, on, onError]: Parameters<SqliteStore['watch']>) =>
          t.watch(opts, (ev) => setTimeout(() => on(ev), 200), onError);
      const v = Reflect.get(t, p, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

it('--once: a write of the pass whose event comes after the queues emptied is still handled', async () => {
  const seed = store();
  await seed.create(obj('Thing', 'a'));
  await seed.close();
  // The Receipt's event comes back after every queue is empty, as the scheduler's binding (the pass's
  // last work) did on a loaded machine: the pass is not over until it has been handled.
  const mgr = new Manager({ store: lateWatch(store()), log: silentLogger, once: true });
  const receipts: string[] = [];
  await mgr.run(() => {
    mgr
      .controller('things', { workers: 1 })
      .for('Thing')
      .complete({
        async reconcile(key) {
          const name = key.split('/')[1]!;
          if (!(await mgr.store.get({ kind: 'Receipt', namespace: 'default', name })))
            await mgr.store.create(obj('Receipt', name));
        },
      });
    mgr
      .controller('receipts', { workers: 1 })
      .for('Receipt')
      .complete({ reconcile: async (key) => void receipts.push(key) });
  });
  // What the pass did, before stop() (whose shutdown may let a late event in).
  const handled = [...receipts];
  await mgr.stop();
  expect(handled).toEqual(['default/a']);
});

it('a second manager stands by while the first leads; with --once it refuses instead', async () => {
  const first = new Manager({ store: store(), log: silentLogger });
  const firstRun = first.run();
  await until('first leads', () => first.readiness().ready);

  const once = new Manager({ store: store(), log: silentLogger, once: true });
  await expect(once.run()).rejects.toThrow(/--once needs the lease/);
  await once.stop();

  const second = new Manager({ store: store(), log: silentLogger });
  const secondRun = second.run();
  await sleep(100);
  expect(second.readiness()).toEqual({ ready: false, reason: 'standing by for the controller lease' });
  await first.stop();
  await firstRun;
  await until('second takes over', () => second.readiness().ready, 10_000);
  await second.stop();
  await secondRun;
});

it('stop() while the start hooks run: run() returns and starts no runnable, timer or later hook', async () => {
  const trace: string[] = [];
  const mgr = new Manager({ store: store(), log: silentLogger });
  mgr.add({ start: () => void trace.push('runnable started') });
  let stopping: Promise<void> | undefined;
  await mgr.run(() => {
    mgr.onSynced('stops', async () => {
      trace.push('first hook');
      stopping = mgr.stop();
    });
    mgr.onSynced('later', async () => void trace.push('second hook'));
    mgr
      .controller('c', { workers: 1 })
      .every(10, () => ['k'], { atStart: true })
      .complete({ reconcile: async (k) => void trace.push(k) });
  });
  await stopping;
  await sleep(50);
  expect(trace).toEqual(['first hook']);
});

it('a controller registered without a reconciler is an error, not a silent no-op', async () => {
  const mgr = new Manager({ store: store(), log: silentLogger, once: true });
  await expect(mgr.run(() => void mgr.controller('half', { workers: 1 }).for('Thing'))).rejects.toThrow(
    /half was registered without complete/,
  );
  await mgr.stop();
});

it('asking a running manager for a started informer starts nothing; a kind asked for late is filled', async () => {
  const mgr = new Manager({ store: store(), log: silentLogger });
  await mgr.store.create(obj('Later', 'x'));
  const running = mgr.run(
    () =>
      void mgr
        .controller('c', { workers: 1 })
        .for('Thing')
        .complete({ reconcile: async () => {} }),
  );
  await until('ready', () => mgr.readiness().ready);
  const starts = vi.spyOn(Informers.prototype, 'start');
  try {
    // A node's accepts asks for the session informer per key, at every resync of every session.
    for (let i = 0; i < 100; i++) mgr.informer('Thing');
    expect(starts).not.toHaveBeenCalled();
    const later = mgr.informer('Later');
    expect(starts).toHaveBeenCalledTimes(1);
    await until('the late cache filled', () => !!later.get('default', 'x'));
  } finally {
    starts.mockRestore();
    await mgr.stop();
    await running;
  }
});
