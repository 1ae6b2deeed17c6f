/**
 * What one launch costs, counted, not timed: in store writes, from the store's change log — from
 * apply to Running a session is written four times: bound to the node (scheduler), given its
 * finalizer, its run recorded (Starting) before tmux starts it, Running — and no more; in session
 * reconciles, from the controller's /metrics — one pass, which adds the finalizer and launches,
 * and none for the echoes of its own writes (issue 29: a pass for the finalizer alone and one for
 * the echo of the Running write made it three per launch). In files: below.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { allRunning, makeHarness, shellSession, type Harness } from '../support/controller-harness.js';
import { freePort, httpGet, sessionReconciles } from '../support/metrics-helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

it('a session is written four times from apply to Running: bound, finalizer, run recorded, Running', async () => {
  h = await makeHarness();
  const harness = h;
  const names = Array.from({ length: 6 }, (_, i) => `w-${i}`);
  await harness.apply(names.map((n) => shellSession(n, 'exec sleep 300', harness.repo)));
  harness.start();
  await harness.waitFor('all Running', () => allRunning(harness, names), 60_000);
  const db = new Database(path.join(harness.home, 'state.db'), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT name, type, data FROM changes WHERE kind = 'AgentSession' ORDER BY revision")
      .all() as { name: string; type: string; data: string }[];
    for (const name of names) {
      const mine = rows.filter((r) => r.name === name);
      const upToRunning = mine.findIndex((r) => JSON.parse(r.data).status?.phase === 'Running');
      const steps = mine.slice(1, upToRunning + 1).map((r) => {
        const o = JSON.parse(r.data);
        return o.status?.phase ?? (o.metadata.finalizers?.length ? 'finalizer' : 'bound');
      });
      expect(steps, name).toEqual(['bound', 'finalizer', 'Starting', 'Running']);
    }
  } finally {
    db.close();
  }
}, 120_000);

/**
 * The files one launch creates and opens, counted in the real controller (test/support/fs-count.mjs
 * counts every open that may create, mkdir and rename), not timed. In a 1000-session burst the
 * kernel's file creation was ~6 % of the box's CPU: each session's run directory is made once, each of
 * its files opened for writing once (session.log's lines of the launch in one append, no empty
 * events.jsonl or checkpoint for a log nothing was written to), and audit.log stays open.
 */
it('a launch makes its run directory once and opens each file once; audit.log is opened once in all', async () => {
  h = await makeHarness();
  const harness = h;
  const countFile = path.join(harness.dir, 'fs-count.json');
  harness.env.NODE_OPTIONS = `--import=${path.join(ROOT, 'test/support/fs-count.mjs')}`;
  harness.env.ORCHCTL_TEST_FS_COUNT = countFile;
  const names = Array.from({ length: 4 }, (_, i) => `f-${i}`);
  await harness.apply(names.map((n) => shellSession(n, 'exec sleep 300', harness.repo)));
  harness.start();
  await harness.waitFor('all Running', () => allRunning(harness, names), 60_000);
  await harness.stopController('SIGTERM'); // a clean stop: what it writes on the way out counts too
  const counts = JSON.parse(fs.readFileSync(countFile, 'utf8')) as Record<string, number>;
  const byFile = (prefix: string) => {
    const mine: Record<string, number> = {};
    for (const [k, n] of Object.entries(counts)) {
      const [op, file] = [k.slice(0, k.indexOf(' ')), k.slice(k.indexOf(' ') + 1)];
      if (!file.startsWith(prefix)) continue;
      const rel = `${op} ${file.slice(prefix.length).replace(/\.\d+\.tmp$/, '.tmp')}`;
      mine[rel] = (mine[rel] ?? 0) + n;
    }
    return mine;
  };
  for (const name of names)
    expect(byFile(path.join(harness.home, 'sessions', 'default', name)), name).toEqual({
      'mkdir /1': 1,
      'open /1/output.log': 1,
      'open /1/prompt.md': 1,
      'open /1/session.log': 1,
      'open /1/state.json.tmp': 1,
      'rename /1/state.json': 1,
    });
  expect(byFile(path.join(harness.home, 'audit.log'))).toEqual({ 'open ': 1 });
}, 120_000);

it('a launched session costs one session reconcile to Running: the finalizer in the same pass, no echo', async () => {
  h = await makeHarness();
  const harness = h;
  const port = await freePort();
  // No resync and no observe tick within the window: only what the launches themselves bring.
  harness.start(['--observe-interval', '1h', '--resync', '1h', '--metrics-addr', `127.0.0.1:${port}`]);
  await harness.waitFor('the controller serving /metrics', async () => {
    try {
      return (await httpGet(port, '/metrics')).status === 200;
    } catch {
      return false;
    }
  });
  const r0 = await sessionReconciles(port);
  const names = Array.from({ length: 6 }, (_, i) => `r-${i}`);
  await harness.apply(names.map((n) => shellSession(n, 'exec sleep 300', harness.repo)));
  await harness.waitFor('all Running', () => allRunning(harness, names), 60_000);
  let r = await sessionReconciles(port);
  for (;;) {
    await new Promise((res) => setTimeout(res, 2000));
    const now = await sessionReconciles(port);
    if (now === r) break;
    r = now;
  }
  expect(r - r0).toBe(names.length);
}, 120_000);
