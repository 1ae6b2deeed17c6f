/** Run directories on disk (reconcilers/housekeeping/run-dirs.ts) over a real SQLite store and a temp home. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { API_VERSION } from '../../../../controller/api/types.js';
import { RUN_DIRS, RunDirRetention } from '../../../../controller/reconcilers/housekeeping/run-dirs.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

let home: string;
let store: SqliteStore;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-run-dirs-'));
  store = new SqliteStore(path.join(home, 'state.db'));
});

afterEach(async () => {
  await store.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const sessionDir = (name: string) => path.join(home, 'sessions', 'default', name);

/** A session's directory with runs 1..n (each with an output.log) and its event log. */
function runs(name: string, n: number): void {
  for (let r = 1; r <= n; r++) {
    fs.mkdirSync(path.join(sessionDir(name), String(r)), { recursive: true });
    fs.writeFileSync(path.join(sessionDir(name), String(r), 'output.log'), `run ${r}\n`);
  }
  fs.writeFileSync(path.join(sessionDir(name), 'events.jsonl'), '');
}

async function session(name: string, run?: number): Promise<void> {
  const o = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { agent: { command: ['true'] }, workdir: home },
  });
  if (run !== undefined) await store.updateStatus({ ...o, status: { run, phase: 'Running' } });
}

const left = (name: string) =>
  fs.existsSync(sessionDir(name))
    ? fs
        .readdirSync(sessionDir(name))
        .filter((f) => /^\d+$/.test(f))
        .map(Number)
        .sort((a, b) => a - b)
    : undefined;

it("keeps a live session's newest run directories, its current run and any later one, and its event log", async () => {
  runs('a', 12);
  fs.mkdirSync(path.join(sessionDir('a'), '13')); // being prepared: not yet in status
  await session('a', 12);
  await new RunDirRetention({ store, home, retention: { runDirsPerSession: 3 } }).reconcile(RUN_DIRS);
  expect(left('a')).toEqual([10, 11, 12, 13]);
  expect(fs.existsSync(path.join(sessionDir('a'), 'events.jsonl'))).toBe(true);
});

it('keeps every run of a session with no run recorded yet', async () => {
  runs('fresh', 4);
  await session('fresh');
  await new RunDirRetention({ store, home, retention: { runDirsPerSession: 2 } }).reconcile(RUN_DIRS);
  expect(left('fresh')).toEqual([1, 2, 3, 4]);
});

it("removes a deleted session's directory once untouched for the TTL, not before", async () => {
  runs('gone', 2);
  const r = (now: number) =>
    new RunDirRetention({ store, home, now: () => now, retention: { deletedSessionDirTtlMs: HOUR } });
  await r(Date.now() + HOUR / 2).reconcile(RUN_DIRS);
  expect(left('gone')).toEqual([1, 2]);
  await r(Date.now() + 2 * HOUR).reconcile(RUN_DIRS);
  expect(left('gone')).toBeUndefined();
});

it('holds run directories to the bound over many runs, whatever the number of runs', async () => {
  await session('busy', 1);
  const retention = new RunDirRetention({ store, home, retention: { runDirsPerSession: 5 } });
  for (let run = 1; run <= 60; run++) {
    fs.mkdirSync(path.join(sessionDir('busy'), String(run)), { recursive: true });
    const o = (await store.get({ kind: 'AgentSession', namespace: 'default', name: 'busy' }))!;
    await store.updateStatus({ ...o, status: { run, phase: 'Running' } });
    if (run % 7 === 0) await retention.reconcile(RUN_DIRS);
    expect(left('busy')!.length).toBeLessThanOrEqual(5 + 6);
  }
  await retention.reconcile(RUN_DIRS);
  expect(left('busy')).toEqual([56, 57, 58, 59, 60]);
});

it('a pass with every session in the cache reads no store; a directory it does not explain is checked', async () => {
  await session('live', 5);
  runs('live', 5);
  let lists = 0;
  const counted = new Proxy(store, {
    get: (t, k, r) =>
      k === 'list'
        ? (...a: Parameters<SqliteStore['list']>) => {
            lists++;
            return t.list(...a);
          }
        : Reflect.get(t, k, r),
  });
  const all = async () => (await store.list('AgentSession')).items;
  let cached = await all();
  const sessions = { list: () => cached };
  const r = (now = Date.now()) =>
    new RunDirRetention({ store: counted, home, sessions, now: () => now, retention: { runDirsPerSession: 2 } });
  await r().reconcile(RUN_DIRS);
  expect(lists).toBe(0);
  expect(left('live')).toEqual([4, 5]);
  // A session the cache does not show yet, its directory untouched for longer than the TTL: the
  // store is asked, and shows it, so nothing of it goes.
  await session('new', 1);
  runs('new', 1);
  const later = Date.now() + 30 * 24 * HOUR;
  await r(later).reconcile(RUN_DIRS);
  expect(lists).toBe(1);
  expect(left('new')).toEqual([1]);
  cached = await all();
  lists = 0;
  await r(later).reconcile(RUN_DIRS);
  expect(lists).toBe(0);
});

it("a pass lists no live session's runs again until its run moves on (the minute pass listed them all)", async () => {
  const names = Array.from({ length: 20 }, (_, i) => `s-${i}`);
  for (const name of names) {
    await session(name, 3);
    runs(name, 3);
  }
  let cached = (await store.list('AgentSession')).items;
  const r = new RunDirRetention({ store, home, sessions: { list: () => cached }, retention: { runDirsPerSession: 2 } });
  const readdir = vi.spyOn(fs, 'readdirSync');
  const listed = () => readdir.mock.calls.filter(([dir]) => String(dir).startsWith(sessionDir('') + path.sep)).length;
  try {
    await r.reconcile(RUN_DIRS);
    expect(listed()).toBe(20);
    expect(left('s-0')).toEqual([2, 3]);
    readdir.mockClear();
    for (let i = 0; i < 3; i++) await r.reconcile(RUN_DIRS);
    expect(listed()).toBe(0);
    // One session's run moves on: only its runs are listed, and its old one goes.
    runs('s-7', 4);
    const s7 = (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's-7' }))!;
    await store.updateStatus({ ...s7, status: { run: 4, phase: 'Running' } });
    cached = (await store.list('AgentSession')).items;
    await r.reconcile(RUN_DIRS);
    expect(listed()).toBe(1);
    expect(left('s-7')).toEqual([3, 4]);
  } finally {
    vi.restoreAllMocks();
  }
});
