/**
 * The store conformance suite against the embedded SQLite backend on a real database file, plus
 * what is particular to a file: owner-only permissions and persistence across reopen.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { GUARD_SQL, RV_INDEX, SqliteStore } from '../../../controller/store/sqlite.js';
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
});
