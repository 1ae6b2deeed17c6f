/**
 * The manager's bounded stop over a real SQLite store in a temp directory: a stop takes no new work
 * from any controller at once, lets the reconciles in flight finish until the grace runs out (the
 * lease still renewed meanwhile), then releases the lease and closes the store whether they finished
 * or not, and says what was still running. `--shutdown-grace` is checked against its bounds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { API_VERSION, type Resource } from '../../../controller/api/types.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { Manager } from '../../../controller/runtime/manager.js';
import { shutdownGraceMs } from '../../../controller/runtime/shutdown.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { until } from '../../support/until.js';

let dir: string;
let db: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-shutdown-'));
  db = path.join(dir, 'state.db');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const thing = (name: string): Resource => ({
  apiVersion: API_VERSION,
  kind: 'Thing',
  metadata: { name, namespace: 'default' },
});
const store = () => new SqliteStore(db, { pollIntervalMs: 10 });

it('a reconcile that never finishes: stop() returns at the grace, names it, releases the lease', async () => {
  const seed = store();
  await seed.create(thing('stuck'));
  await seed.close();
  const mgr = new Manager({ store: store(), log: silentLogger, shutdownGraceMs: 300 });
  const reconciling: string[] = [];
  const running = mgr.run(() => {
    mgr
      .controller('things', { workers: 1 })
      .for('Thing')
      .complete({
        reconcile: async (key) => {
          reconciling.push(key);
          await new Promise(() => undefined); // a call that never answers
        },
      });
  });
  await until('the stuck reconcile', () => reconciling.includes('default/stuck'));

  await mgr.stop();
  await running;
  expect(mgr.stillRunning()).toEqual(['things (default/stuck)']);
  const check = store();
  expect(await check.getLease('orchctl-controller')).toBeFalsy();
  await check.close();
  // Closed: the WAL was checkpointed into the database file.
  expect(fs.existsSync(`${db}-wal`) ? fs.statSync(`${db}-wal`).size : 0).toBe(0);
});

it('stopping takes no new work from any controller, while one of them waits for its reconcile', async () => {
  const mgr = new Manager({ store: store(), log: silentLogger, shutdownGraceMs: 60_000 });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const other: string[] = [];
  const running = mgr.run(() => {
    mgr
      .controller('slow', { workers: 1 })
      .every(60_000, () => ['held/key'], { atStart: true })
      .complete({ reconcile: () => held });
    // Registered after the slow one: it used to take work until the slow one had stopped.
    mgr
      .controller('other', { workers: 1 })
      .for('Thing')
      .complete({ reconcile: async (key) => void other.push(key) });
  });
  await until('ready', () => mgr.readiness().ready);
  await until('the held reconcile', () => mgr.busy());
  const stopping = mgr.stop();
  await mgr.store.create(thing('after-stop'));
  await sleep(200); // a watch event, if it were still taken, reaches the other controller by now
  release();
  await stopping;
  await running;
  expect(other).toEqual([]);
  expect(mgr.stillRunning()).toEqual([]);
});

it('the lease is renewed while the work in flight finishes, and released after', async () => {
  const seed = store();
  await seed.create(thing('slow'));
  await seed.close();
  // A 1 s lease renewed every 100 ms; the reconcile takes 2.5 lease durations after the stop.
  const mgr = new Manager({
    store: store(),
    log: silentLogger,
    shutdownGraceMs: 60_000,
    lease: { name: 'orchctl-controller', timing: { seconds: 1, renewMs: 100 }, what: 'controller' },
  });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let started = false;
  const running = mgr.run(() => {
    mgr
      .controller('things', { workers: 1 })
      .for('Thing')
      .complete({
        reconcile: async () => {
          started = true;
          await held;
        },
      });
  });
  await until('the reconcile', () => started);
  const stopping = mgr.stop();
  await sleep(2500);
  expect(mgr.lapsed()).toBe(false);
  release();
  await stopping;
  await running;
  const check = store();
  expect(await check.getLease('orchctl-controller')).toBeFalsy();
  await check.close();
});

it.each([
  ['0s', '--shutdown-grace 0s: must be a duration from 1s to 10m'],
  ['11m', '--shutdown-grace 11m: must be a duration from 1s to 10m'],
  ['soon', '--shutdown-grace soon: must be a duration from 1s to 10m'],
])('--shutdown-grace %s is refused, naming the flag and the bounds', (text, message) => {
  expect(() => shutdownGraceMs(text)).toThrow(message);
});

it('--shutdown-grace: the default is 30 s; a duration in bounds is taken', () => {
  expect(shutdownGraceMs(undefined)).toBe(30_000);
  expect(shutdownGraceMs('1s')).toBe(1000);
  expect(shutdownGraceMs('2m30s')).toBe(150_000);
});
