/**
 * The store conformance suite against the embedded SQLite backend on a real database file, plus
 * what is particular to a file: owner-only permissions and persistence across reopen.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import Database from 'better-sqlite3';
import type { Resource } from '../../../controller/api/types.js';
import {
  CHECKPOINT_EVERY_COMMITS,
  DEPENDENTS_SQL,
  GUARD_SQL,
  OWNER_REFS,
  RV_INDEX,
  SqliteStore,
} from '../../../controller/store/sqlite.js';
import { describeStoreConformance, keyOf, session } from '../../support/store-conformance.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-store-'));
let n = 0;
const freshFile = () => path.join(root, `s${++n}`, 'state.db');

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describeStoreConformance(
  'SqliteStore',
  async (opts) => new SqliteStore(freshFile(), { pollIntervalMs: 10, retainRevisions: opts?.retainRevisions }),
);

const mode = (p: string) => fs.statSync(p).mode & 0o777;

describe('SqliteStore on disk', () => {
  it('creates the state directory 0700 and the database and its WAL files 0600', async () => {
    const dir = path.join(root, 'perm', 'nested', 'home');
    const file = path.join(dir, 'state.db');
    const old = process.umask(0o022); // a permissive umask must not leak into state files
    let store: SqliteStore;
    try {
      store = new SqliteStore(file);
      await store.create(session('a')); // a write makes sure the WAL exists
    } finally {
      process.umask(old);
    }
    expect(mode(dir)).toBe(0o700);
    expect(mode(path.join(root, 'perm', 'nested'))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    for (const f of [`${file}-wal`, `${file}-shm`]) if (fs.existsSync(f)) expect(mode(f)).toBe(0o600);
    await store.close();
  });

  it('tightens an existing database file that was readable by others', async () => {
    const file = freshFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '');
    fs.chmodSync(file, 0o644);
    const store = new SqliteStore(file);
    expect(mode(file)).toBe(0o600);
    await store.close();
  });

  it('keeps objects, revision and leases across close and reopen', async () => {
    const file = freshFile();
    const s1 = new SqliteStore(file);
    const a = await s1.create(session('a'));
    await s1.tryAcquireLease('ctl', 'me', 60);
    const rev = await s1.revision();
    await s1.close();
    const s2 = new SqliteStore(file);
    expect(await s2.get(keyOf(a))).toEqual(a);
    expect(await s2.revision()).toBe(rev);
    expect((await s2.getLease('ctl'))!.holderIdentity).toBe('me');
    const b = await s2.create(session('b'));
    expect(Number(b.metadata.resourceVersion)).toBe(rev + 1);
    await s2.close();
  });

  it('plans unchanged guards on the (kind, namespace, rv) index, which an older store gets on open', async () => {
    const file = freshFile();
    const s1 = new SqliteStore(file);
    const a = await s1.create(session('a'));
    await s1.close();
    // The store as an older orchctl left it: no guard index.
    const raw = new Database(file);
    raw.exec(`DROP INDEX ${RV_INDEX}`);
    raw.close();
    const s2 = new SqliteStore(file);
    const since = await s2.revision();
    await s2.txn([{ op: 'unchanged', kind: 'AgentSession', namespace: 'default', since }]);
    await s2.update({ ...a, spec: { prompt: 'changed' } });
    await expect(s2.txn([{ op: 'unchanged', kind: 'AgentSession', namespace: 'default', since }])).rejects.toThrow(
      /changed since revision/,
    );
    await s2.close();
    const check = new Database(file, { readonly: true });
    const indexes = check.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").pluck().all();
    expect(indexes).toContain(RV_INDEX);
    // One seek for the namespace's newest (SQLite's min/max optimisation), no table rows for any.
    const plan = (sql: string, ...args: string[]) =>
      (check.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join('; ');
    expect(plan(GUARD_SQL.namespace, 'AgentSession', 'default')).toMatch(
      new RegExp(`SEARCH objects USING COVERING INDEX ${RV_INDEX}`),
    );
    expect(plan(GUARD_SQL.any, 'AgentSession')).toMatch(new RegExp(`USING COVERING INDEX ${RV_INDEX}`));
    check.close();
  });

  it('refuses writes after close with a clear error', async () => {
    const s = new SqliteStore(freshFile());
    await s.close();
    await expect(s.create(session('a'))).rejects.toThrow('store is closed');
  });

  it('never checkpoints its WAL into a file truncated under it: writes fail naming it, close writes none', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.create(session('a'));
    fs.truncateSync(file, 0);
    // Past the point where a checkpoint falls due (SQLite's own would have run long before).
    let failure: unknown;
    for (let i = 0; i < CHECKPOINT_EVERY_COMMITS + 10 && !failure; i++)
      await s.create(session(`s${i}`)).catch((e: unknown) => (failure = e));
    expect(fs.statSync(file).size).toBe(0);
    expect(String(failure)).toContain(`the store ${file} changed under this process (it was truncated to 0 bytes)`);
    await expect(s.create(session('late'))).rejects.toThrow(/truncated to 0 bytes.*orchctl store restore/);
    await expect(s.close()).rejects.toThrow(/changed under this process/);
    expect(fs.statSync(file).size).toBe(0);
    // The next opener finds an empty store, not a malformed one.
    const next = new SqliteStore(file);
    expect((await next.list('AgentSession')).items).toEqual([]);
    await next.close();
  });

  it('leaves a file overwritten under it as it is, and says so on close', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.create(session('mine'));
    fs.writeFileSync(file, 'not a database any more\n'.repeat(500)); // same inode
    await expect(s.close()).rejects.toThrow(`the store ${file} changed under this process (it was overwritten`);
    expect(fs.readFileSync(file, 'utf8')).toBe('not a database any more\n'.repeat(500));
  });

  it('stops using a file that was replaced under it (another file at the path)', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    await s.create(session('mine'));
    fs.renameSync(file, `${file}.moved`);
    fs.writeFileSync(file, '');
    await expect(s.tryAcquireLease('ctl', 'me', 15)).rejects.toThrow('another file was put in its place');
    await expect(s.close()).rejects.toThrow('another file was put in its place');
    expect(fs.statSync(file).size).toBe(0);
  });
});

describe('the owner index (cascading deletes)', () => {
  const API = 'orchctl.io/v1alpha1';
  const ref = (o: Resource) => ({ apiVersion: API, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid! });
  const event = (name: string, owners: Resource[], namespace = 'default'): Resource => ({
    apiVersion: API,
    kind: 'Event',
    metadata: { name, namespace, ownerReferences: owners.map(ref) },
    reason: 'Test',
  });
  const eventKey = (name: string, namespace = 'default') => ({ kind: 'Event', namespace, name });
  /** The index rows naming `uid` as owner, read from the file as another process would. */
  const indexed = (file: string, uid: string) => {
    const raw = new Database(file, { readonly: true });
    try {
      return raw
        .prepare(`SELECT kind || '/' || name FROM ${OWNER_REFS} WHERE owner_uid = ? ORDER BY 1`)
        .pluck()
        .all(uid);
    } finally {
      raw.close();
    }
  };

  it('a delete cascades to dependents of any kind and of several owners, not to ones an update released', async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    const a = await s.create(session('a'));
    const b = await s.create(session('b'));
    const evaluation = await s.create({
      apiVersion: API,
      kind: 'Evaluation',
      metadata: { name: 'a-run-1', namespace: 'default', ownerReferences: [ref(a)] },
      spec: { sessionRef: 'a', run: 1 },
    });
    await s.create(event('a.1', [a]));
    await s.create(event('ab.1', [a, b]));
    await s.create(event('b.1', [b]));
    await s.create(event('a.other-ns', [a], 'other')); // same uid, another namespace: not a dependent
    const released = await s.create(event('a.released', [a]));
    await s.update({ ...released, metadata: { ...released.metadata, ownerReferences: [] } });
    // A rolled-back write leaves nothing in the index (the triggers run in the write's transaction).
    await s.txn([{ op: 'create', object: event('a.dry', [a]) }], { dryRun: true });
    expect(indexed(file, a.metadata.uid!)).toEqual([
      'Evaluation/a-run-1',
      'Event/a.1',
      'Event/a.other-ns',
      'Event/ab.1',
    ]);

    await s.delete(keyOf(a));
    expect(await s.get(keyOf(evaluation))).toBeUndefined();
    expect(await s.get(eventKey('a.1'))).toBeUndefined();
    expect(await s.get(eventKey('ab.1'))).toBeUndefined();
    expect(await s.get(eventKey('a.released'))).toBeDefined();
    expect(await s.get(eventKey('a.other-ns', 'other'))).toBeDefined();
    expect(await s.get(eventKey('b.1'))).toBeDefined();
    expect(await s.get(keyOf(b))).toBeDefined();
    expect(indexed(file, a.metadata.uid!)).toEqual(['Event/a.other-ns']);
    expect(indexed(file, b.metadata.uid!)).toEqual(['Event/b.1']);
    await s.delete(keyOf(b));
    expect(await s.get(eventKey('b.1'))).toBeUndefined();
    expect(indexed(file, b.metadata.uid!)).toEqual([]);
    await s.close();
  });

  it('an older store (no owner index) gets it on open, filled from its objects, once', async () => {
    const file = freshFile();
    const s1 = new SqliteStore(file);
    const owner = await s1.create(session('owner'));
    await s1.create(event('owner.1', [owner]));
    const kept = await s1.create(session('kept'));
    await s1.close();
    // The file as an older orchctl left it, with a dependent that orchctl wrote (no index, no triggers).
    const raw = new Database(file);
    raw.exec(`DROP TABLE ${OWNER_REFS}`);
    for (const op of ['insert', 'update', 'delete']) raw.exec(`DROP TRIGGER ${OWNER_REFS}_${op}`);
    const old = { ...event('owner.2', [owner]), metadata: { ...event('owner.2', [owner]).metadata, uid: 'u2' } };
    raw
      .prepare("INSERT INTO objects (kind, namespace, name, rv, data) VALUES ('Event', 'default', 'owner.2', 99, ?)")
      .run(JSON.stringify(old));
    raw.close();

    const s2 = new SqliteStore(file);
    expect(indexed(file, owner.metadata.uid!)).toEqual(['Event/owner.1', 'Event/owner.2']);
    await s2.close();
    // Opened again: nothing to do, so nothing written (another connection sees no commit).
    const watch = new Database(file, { readonly: true });
    const version = () => watch.pragma('data_version', { simple: true });
    const before = version();
    const s3 = new SqliteStore(file);
    expect(version()).toBe(before);
    watch.close();
    await s3.delete(keyOf(owner));
    expect(await s3.get(eventKey('owner.1'))).toBeUndefined();
    expect(await s3.get(eventKey('owner.2'))).toBeUndefined();
    expect(await s3.get(keyOf(kept))).toBeDefined();
    await s3.close();
  });

  it("finds a deleted object's dependents by seeks on the owner index, never a scan of its namespace", async () => {
    const file = freshFile();
    const s = new SqliteStore(file);
    const owner = await s.create(session('owner'));
    for (let i = 0; i < 50; i++) await s.create(event(`e${i}`, [owner]));
    await s.close();
    const check = new Database(file, { readonly: true });
    const plan = (check.prepare(`EXPLAIN QUERY PLAN ${DEPENDENTS_SQL}`).all('uid', 'default') as { detail: string }[])
      .map((r) => r.detail)
      .join('; ');
    check.close();
    // The statement before the owner index planned as `SCAN objects`: every object of the namespace read.
    expect(plan).toMatch(/SEARCH r USING PRIMARY KEY \(owner_uid=\?\)/);
    expect(plan).toMatch(/SEARCH o USING PRIMARY KEY \(kind=\? AND namespace=\? AND name=\?\)/);
    expect(plan).not.toMatch(/SCAN/);
  });
});

describe('the watch poll', () => {
  it('an idle poll prepares no statement (data_version is prepared once), and a change still arrives', async () => {
    const file = freshFile();
    const store = new SqliteStore(file, { pollIntervalMs: 5 });
    const other = new SqliteStore(file, { pollIntervalMs: 5 });
    const prepares = vi.spyOn(Database.prototype, 'pragma');
    const seen: string[] = [];
    const w = store.watch({ kind: 'AgentSession', fromRevision: await store.revision() }, (ev) =>
      seen.push(ev.object.metadata.name),
    );
    try {
      await new Promise((r) => setTimeout(r, 100)); // some twenty polls with nothing changed
      expect(prepares).not.toHaveBeenCalled();
      await other.create(session('from-another-process'));
      for (let i = 0; i < 200 && !seen.length; i++) await new Promise((r) => setTimeout(r, 5));
      expect(seen).toEqual(['from-another-process']);
    } finally {
      w.close();
      prepares.mockRestore();
      await other.close();
      await store.close();
    }
  });
});
