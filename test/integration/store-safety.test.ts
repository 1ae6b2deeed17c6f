/**
 * The store and the agents it accounts for, with a real controller, real tmux and the real
 * database file: a lost or replaced store never gets an agent killed (its sessions are orphans,
 * reported and left running), backup and restore while a controller runs, reads that never wait
 * for another process's write lock, read-only commands that create nothing, and a clean shutdown
 * that leaves the database file complete without its WAL.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Resource } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { BIN, ROOT } from '../support/cli.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const db = () => path.join(h.home, 'state.db');

/** Reads through a fresh read-only connection (the harness's own one may be on a replaced file). */
async function readStore<T>(fn: (s: SqliteStore) => Promise<T>): Promise<T> {
  const s = new SqliteStore(db(), { readonly: true });
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const node = () =>
  readStore(
    async (s) => (await s.list('Node')).items[0] as (Resource & { status?: { orphanSessions?: string[] } }) | undefined,
  );
const nodeEvents = (reason: string) =>
  readStore(async (s) =>
    (await s.list('Event')).items.filter(
      (e) => e.reason === reason && (e.involvedObject as { kind: string }).kind === 'Node',
    ),
  );

async function startTwoAgents(): Promise<string[]> {
  await h.apply([shellSession('a', 'exec sleep 600', h.repo), shellSession('b', 'echo hi; exec sleep 600', h.repo)]);
  h.start();
  for (const n of ['a', 'b']) await h.waitFor(`${n} Running`, async () => phaseOf(await h.session(n)) === 'Running');
  const live = (await h.tmuxSessions()).filter((s) => !s.dead).map((s) => s.name);
  expect(live).toHaveLength(2);
  return live;
}

/** The controller leads again on the given store, has reported its orphans, and nothing was killed. */
async function expectOrphansKept(live: string[]): Promise<void> {
  h.start();
  const n = await h.waitFor('orphans on the Node status', async () => {
    const x = await node();
    return (x?.status?.orphanSessions?.length ?? 0) === 2 && x;
  });
  expect([...n.status!.orphanSessions!].sort()).toEqual([...live].sort());
  const events = await h.waitFor('OrphanTmuxSession events', async () => {
    const e = await nodeEvents('OrphanTmuxSession');
    return e.length === 2 && e;
  });
  expect(events.map((e) => e.message).join('\n')).toContain('left running');
  // Another full pass (resync is 3 s in the harness) must not kill them either.
  await new Promise((r) => setTimeout(r, 4000));
  expect(
    (await h.tmuxSessions())
      .filter((s) => !s.dead)
      .map((s) => s.name)
      .sort(),
  ).toEqual([...live].sort());
}

describe('a store that cannot account for the running agents', () => {
  it('a 0-byte state.db: no agent is killed, both are reported as orphans, --gc-orphans removes them', async () => {
    const live = await startTwoAgents();
    await h.stopController('SIGKILL');
    await h.store.close();
    for (const f of ['-wal', '-shm']) fs.rmSync(db() + f, { force: true });
    fs.truncateSync(db(), 0);
    await expectOrphansKept(live);
    await h.stopController();

    h.start(['--gc-orphans']);
    await h.waitFor('orphans gone', async () => (await h.tmuxSessions()).length === 0);
    // Each kill's Event is written after the kill itself: waited for, not read at once.
    const killed = await h.waitFor('an OrphanKilled Event per orphan', async () => {
      const e = await nodeEvents('OrphanKilled');
      return e.length >= 2 && e;
    });
    expect(killed).toHaveLength(2);
  }, 90_000);

  it('state.db truncated under a running controller: exits 1 naming it, never rewrites it; then orphans', async () => {
    const live = await startTwoAgents();
    await h.store.close(); // the test's own connection must not checkpoint either
    fs.truncateSync(db(), 0);
    const p = h.controller!;
    await h.stopController('SIGTERM');
    const r = await p;
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain(
      `error: the store ${db()} changed under this process (it was truncated to 0 bytes); stopped without writing`,
    );
    expect(fs.statSync(db()).size).toBe(0);
    await expectOrphansKept(live);
    expect(h.controllerLog.join('\n')).not.toContain('malformed');
  }, 90_000);

  it('a state.db replaced by a freshly created store: no agent is killed, both are orphans', async () => {
    const live = await startTwoAgents();
    await h.stopController();
    await h.store.close();
    for (const f of ['', '-wal', '-shm']) fs.rmSync(db() + f, { force: true });
    await new SqliteStore(db()).close(); // a new, empty store with its own identity
    await expectOrphansKept(live);
  }, 90_000);

  it('a session of this store whose object was removed behind the finalizer is still stopped', async () => {
    await startTwoAgents();
    await h.stopController();
    // Bypass the finalizer: remove the object row as a broken tool might.
    await h.store.close();
    const raw = new (await import('better-sqlite3')).default(db());
    raw.prepare("DELETE FROM objects WHERE kind = 'AgentSession' AND name = 'a'").run();
    raw.close();
    h.start();
    await h.waitFor('a killed, b kept', async () => {
      const live = (await h.tmuxSessions()).filter((s) => !s.dead).map((s) => s.name);
      return live.length === 1 && live[0].startsWith('default_b_');
    });
  }, 60_000);
});

describe('orchctl store backup and restore', () => {
  it('backs up while the controller runs; restore is refused while it holds the store, then adopts', async () => {
    await h.apply([shellSession('a', 'exec sleep 600', h.repo)]);
    h.start();
    await h.waitFor('a Running', async () => phaseOf(await h.session('a')) === 'Running');
    const backup = path.join(h.dir, 'backup.db');
    const b = await h.orchctl(['store', 'backup', backup]);
    expect(b.stderr).toBe('');
    expect(b.exitCode).toBe(0);
    expect(b.stdout).toContain(backup);
    expect(fs.statSync(backup).mode & 0o777).toBe(0o600);
    const inBackup = new SqliteStore(backup, { readonly: true });
    expect((await inBackup.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }))?.status?.phase).toBe(
      'Running',
    );
    await inBackup.close();

    await h.apply([shellSession('b', 'exec sleep 600', h.repo)]);
    await h.waitFor('b Running', async () => phaseOf(await h.session('b')) === 'Running');
    const refused = await h.orchctl(['store', 'restore', backup]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/holds the store .*state\.db; stop it first/);
    expect(phaseOf(await h.session('b'))).toBe('Running'); // nothing changed

    await h.stopController();
    const aBefore = await h.session('a');
    const restored = await h.orchctl(['store', 'restore', backup]);
    expect(restored.stderr).toBe('');
    expect(restored.exitCode).toBe(0);
    h.start();
    // a is adopted as it runs (same run, no restart); b's session is not in the backup: an orphan, alive.
    const n = await h.waitFor('b reported as an orphan', async () => {
      const x = await node();
      return (x?.status?.orphanSessions?.length ?? 0) === 1 && x;
    });
    expect(n.status!.orphanSessions![0]).toMatch(/^default_b_/);
    const a = await readStore((s) => s.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }));
    expect(a?.status?.phase).toBe('Running');
    expect(a?.status?.run).toBe(aBefore?.status?.run);
    expect(a?.status?.restarts).toBe(0);
    expect(await readStore((s) => s.get({ kind: 'AgentSession', namespace: 'default', name: 'b' }))).toBeUndefined();
    expect((await h.tmuxSessions()).filter((s) => !s.dead)).toHaveLength(2);
  }, 90_000);

  it('restore refuses a file that is not an orchctl store and changes nothing', async () => {
    await h.apply([shellSession('a', 'exec sleep 600', h.repo)]);
    const junk = path.join(h.dir, 'junk.db');
    fs.writeFileSync(junk, 'not a database at all, just text\n'.repeat(200));
    const r = await h.orchctl(['store', 'restore', junk]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${junk} is not a usable orchctl store`);
    expect(await h.session('a')).toBeDefined();
  });
});

describe('reads', () => {
  it('get and describe succeed while another process holds the write lock', async () => {
    await h.apply([shellSession('a', 'exec sleep 600', h.repo)]);
    // A second process opens the database and holds BEGIN IMMEDIATE (the write lock) open.
    const holder = execa(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]);
         db.exec('BEGIN IMMEDIATE'); db.exec("UPDATE meta SET value = value WHERE key = 'revision'");
         console.log('locked'); setTimeout(() => { db.exec('COMMIT'); }, 60000);`,
        db(),
      ],
      { cwd: ROOT, reject: false },
    );
    try {
      await new Promise<void>((resolve) =>
        holder.stdout!.on('data', (d: Buffer) => d.toString().includes('locked') && resolve()),
      );
      const get = await h.orchctl(['get', 'agentsessions']);
      expect(get.stderr).toBe('');
      expect(get.exitCode).toBe(0);
      expect(get.stdout).toMatch(/^a\s/m);
      const describe = await h.orchctl(['describe', 'agentsession', 'a']);
      expect(describe.exitCode).toBe(0);
      // A write in the meantime waits for the lock, and its error (if it gives up) names the file.
    } finally {
      holder.kill('SIGKILL');
      await holder;
    }
  }, 60_000);

  it('read-only commands on a home with no store find nothing and create nothing', async () => {
    const home = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-nostore-')), 'home');
    const env = { ...h.env, ORCHCTL_HOME: home };
    const run = (args: string[]) => execa(BIN, args, { env, extendEnv: false, reject: false, cwd: ROOT });
    const get = await run(['get', 'agentsessions']);
    expect(get.exitCode).toBe(0);
    expect(get.stderr).toBe('No resources found in default namespace.');
    expect((await run(['get', 'all', '-A'])).exitCode).toBe(0);
    const describe = await run(['describe', 'agentsession', 'x']);
    expect(describe.exitCode).toBe(1);
    expect(describe.stderr).toContain('agentsession "x" not found');
    expect(fs.existsSync(home)).toBe(false);
    fs.rmSync(path.dirname(home), { recursive: true, force: true });
  });

  it('every other read-only command on a home with no store creates nothing (assess, version, doctor...)', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-nostore-'));
    const home = path.join(parent, 'home');
    fs.mkdirSync(home, { mode: 0o700 });
    const env = { ...h.env, ORCHCTL_HOME: home };
    const run = (args: string[]) => execa(BIN, args, { env, extendEnv: false, reject: false, cwd: ROOT });
    const manifest = path.join(parent, 'agent.yaml');
    fs.writeFileSync(
      manifest,
      'apiVersion: orchctl.io/v1alpha1\nkind: Agent\nmetadata: {name: a}\nspec: {command: [sh]}\n',
    );
    const commands = [
      ['assess', 'status'],
      ['assess', 'history'],
      ['assess', 'history', 'x'],
      ['version'],
      ['explain', 'agentsession'],
      ['diff', '-f', manifest],
      ['apply', '-f', manifest, '--dry-run=client'],
      ['config', 'view'],
      ['config', 'get-contexts'],
      ['doctor'],
      ['logs', 'x'],
      ['digest'],
      ['completion', 'bash'],
      ['__complete', 'get', 'as', ''],
    ];
    for (const args of commands) {
      const r = await run(args);
      expect(r.stderr, args.join(' ')).not.toMatch(/cannot use the store/);
      expect(fs.readdirSync(home), args.join(' ')).toEqual([]);
    }
    fs.rmSync(parent, { recursive: true, force: true });
  });

  it('a clean controller shutdown leaves everything in state.db and an empty WAL', async () => {
    await h.apply([shellSession('a', 'exec sleep 600', h.repo)]);
    h.start();
    await h.waitFor('a Running', async () => phaseOf(await h.session('a')) === 'Running');
    await h.store.close(); // the only other connection; a clean shutdown finishes the checkpoint
    await h.stopController('SIGTERM');
    const wal = db() + '-wal';
    expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0).toBe(0);
    // The main file alone (as a copy without its WAL) holds the latest status.
    const copy = path.join(h.dir, 'copy.db');
    fs.copyFileSync(db(), copy);
    const s = new SqliteStore(copy, { readonly: true });
    expect((await s.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }))?.status?.phase).toBe('Running');
    await s.close();
  }, 60_000);
});
