/**
 * Managers as the roles of one process (runtime/manager.ts) over a real SQLite store: two
 * managers share one informer per kind and one store handle, each under its own lease; a lease
 * that lapsed is taken back, and onLapse runs, before any controller of the role reconciles again;
 * a lease another holder took meanwhile stops the role without a reconcile; `accepts` filters keys.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { API_VERSION, type Resource } from '../../../controller/api/types.js';
import { enqueueAccepted, type Registration } from '../../../controller/runtime/builder.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { type EventSource, Manager, type RoleLease } from '../../../controller/runtime/manager.js';
import { WorkQueue } from '../../../controller/runtime/workqueue.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { until } from '../../support/until.js';

let dir: string;
let db: SqliteStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-roles-'));
  db = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const thing = (name: string): Resource => ({
  apiVersion: API_VERSION,
  kind: 'Thing',
  metadata: { name, namespace: 'default' },
  spec: {},
});

class Manual implements EventSource<string> {
  private readonly handlers: ((e: string) => void)[] = [];
  subscribe(h: (e: string) => void): void {
    this.handlers.push(h);
  }
  fire(e: string): void {
    for (const h of this.handlers) h(e);
  }
}

it('two roles share the informers and the store; each holds its own lease; the owner closes the store', async () => {
  const a = new Manager({ store: db, log: silentLogger });
  const b = new Manager({
    store: db,
    log: silentLogger,
    informers: a.sharedInformers,
    lease: { name: 'orchctl-node-n1', timing: { seconds: 15, renewMs: 5000 }, what: 'node agent n1' },
  });
  expect(b.informer('Thing')).toBe(a.informer('Thing'));
  const seen: string[] = [];
  const runs = [
    a.run(() =>
      a
        .controller('a', { workers: 1 })
        .for('Thing')
        .complete({ reconcile: async (k) => void seen.push(`a ${k}`) }),
    ),
    b.run(() =>
      b
        .controller('b', { workers: 1 })
        .for('Thing')
        .complete({ reconcile: async (k) => void seen.push(`b ${k}`) }),
    ),
  ];
  await until('both lead', () => a.readiness().ready && b.readiness().ready);
  await db.create(thing('x'));
  await until('both reconciled x', () => seen.includes('a default/x') && seen.includes('b default/x'));
  expect((await db.getLease('orchctl-controller'))?.holderIdentity).toBe(a.identity);
  expect((await db.getLease('orchctl-node-n1'))?.holderIdentity).toBe(b.identity);
  await b.stop();
  expect(await db.getLease('orchctl-node-n1')).toBeUndefined(); // released
  expect(await db.get({ kind: 'Thing', namespace: 'default', name: 'x' })).toBeDefined(); // store still open
  await a.stop();
  await Promise.all(runs);
  await expect(db.revision()).rejects.toThrow(); // closed by its owner
});

/** A role whose lease (1 s) outlives no pause: it is renewed only every 60 s, so it lapses at once. */
function lapsing(events: string[], extra: Partial<RoleLease> = {}) {
  const source = new Manual();
  const mgr = new Manager({
    store: db,
    log: silentLogger,
    lease: {
      name: 'orchctl-node-n1',
      timing: { seconds: 1, renewMs: 60_000 },
      what: 'node agent n1',
      onLapse: async () => {
        events.push('lapse: sweep starts');
        await sleep(200);
        events.push('lapse: sweep done');
      },
      ...extra,
    },
  });
  const run = mgr.run(() =>
    mgr
      .controller('c', { workers: 2 })
      .watches(source, (k: string) => [k])
      .complete({ reconcile: async (k) => void events.push(`reconcile ${k}`) }),
  );
  return { mgr, source, run };
}

it('after a lapse the lease is taken back and onLapse runs before any reconcile', async () => {
  const events: string[] = [];
  const { mgr, source, run } = lapsing(events);
  await until('leading', () => mgr.readiness().ready);
  source.fire('k1');
  await until('k1', () => events.includes('reconcile k1'));
  expect(events).toEqual(['reconcile k1']); // renewed just now: no lapse
  await sleep(1200);
  expect(mgr.lapsed()).toBe(true);
  source.fire('k2');
  source.fire('k3');
  await until('k2 and k3', () => events.includes('reconcile k2') && events.includes('reconcile k3'));
  expect(events.slice(1, 3)).toEqual(['lapse: sweep starts', 'lapse: sweep done']);
  expect(events.filter((e) => e.startsWith('lapse'))).toHaveLength(2); // once for both workers
  expect(mgr.lapsed()).toBe(false);
  await mgr.stop();
  await run;
  await db.close();
});

it('a lapsed lease another holder took meanwhile stops the role; nothing is reconciled', async () => {
  const events: string[] = [];
  const { mgr, source, run } = lapsing(events);
  await until('leading', () => mgr.readiness().ready);
  await sleep(1200);
  expect(await db.tryAcquireLease('orchctl-node-n1', 'another-agent', 15)).toBeDefined();
  source.fire('k');
  await run; // the role stopped itself
  expect(events).toEqual([]);
  expect(process.exitCode).toBe(1);
  process.exitCode = 0;
});

it('accepts filters the keys a controller reconciles', async () => {
  const seen: string[] = [];
  const source = new Manual();
  const mgr = new Manager({ store: db, log: silentLogger, accepts: (c, k) => c === 'c' && k !== 'default/no' });
  const run = mgr.run(() =>
    mgr
      .controller('c', { workers: 1 })
      .watches(source, (k: string) => [k])
      .complete({ reconcile: async (k) => void seen.push(k) }),
  );
  await until('leading', () => mgr.readiness().ready);
  source.fire('default/no');
  source.fire('default/yes');
  await until('yes', () => seen.includes('default/yes'));
  await sleep(50);
  expect(seen).toEqual(['default/yes']);
  await mgr.stop();
  await run;
});

it('keys a node does not accept never enter its queue (watch, periodic and start keys alike)', () => {
  // Cost: the observe tick lists every live session of the cluster; a node must queue only its own.
  const queue = new WorkQueue('c');
  const r: Registration = {
    name: 'c',
    queue,
    workers: 1,
    accepts: (k) => k.startsWith('default/mine-'),
    atStart: [],
    periodic: [],
    inFlight: [],
    onStop: [],
  };
  enqueueAccepted(r, ['default/mine-1', 'default/other-1', 'default/other-2', 'default/mine-2']);
  expect(queue.len()).toBe(2);
  enqueueAccepted({ ...r, accepts: undefined }, ['default/other-3']);
  expect(queue.len()).toBe(3);
  queue.shutdown();
});
