/**
 * Embedded default Store backend: one SQLite database file (WAL mode) shared safely by the CLI
 * and controller processes. Writes run in BEGIN IMMEDIATE transactions, so compare-and-swap is
 * serialised across processes by SQLite's write lock. Watches read an append-only `changes`
 * table; other processes' commits are noticed by polling `PRAGMA data_version`, which costs
 * one cheap statement per poll and no query when nothing changed.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type * as Crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ApiError } from '../api/errors.js';
import { matches } from '../api/labels.js';
import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import {
  anyKind,
  type DeleteOptions,
  type LeaseRecord,
  type ListOptions,
  type ListResult,
  type Store,
  type TxnOptions,
  type UnchangedGuard,
  type WatchEvent,
  type WatchHandle,
  type WatchOptions,
  type WriteOp,
  writeOne,
} from './store.js';
import {
  acquiredLease,
  created,
  current,
  deleted,
  guardConflict,
  isDependent,
  type Outcome,
  objectKey,
  redactForStore,
  statusUpdated,
  updated,
} from './object-rules.js';
import { fenceBroken, fencedError } from './store.js';

// require(), not import: Node 20 loads a CommonJS package imported from ESM through its ESM
// translator (a lexer pass and a second module record): ~2 ms of every cold `orchctl get` here.
const require = createRequire(import.meta.url);
const Database = require('better-sqlite3') as typeof BetterSqlite3;
/** node:crypto only when a store is written (ids); a read-only `get` does not load it. */
const randomUUID = () => (require('node:crypto') as typeof Crypto).randomUUID();
/** The addon's file, null when it is not where better-sqlite3's build puts it (see database()). */
let addonFile: string | null | undefined;

/**
 * A database, its addon named by its file where better-sqlite3's build puts it: left to itself,
 * better-sqlite3 finds it with the `bindings` package, whose search (a stack trace read, a failed
 * require() per place tried) took ~5 ms of every cold `orchctl get`. Where the addon is not there
 * (another build layout), better-sqlite3's own search.
 */
function database(file: string, opts: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  if (addonFile === undefined) {
    try {
      addonFile = require.resolve('better-sqlite3/build/Release/better_sqlite3.node');
    } catch {
      addonFile = null;
    }
  }
  return new Database(file, addonFile ? { ...opts, nativeBinding: addonFile } : opts);
}

/** An object whose every property is made by its function on first read, then kept. */
function lazily<T extends Record<string, () => unknown>>(make: T): { [K in keyof T]: ReturnType<T[K]> } {
  const out = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(make))
    Object.defineProperty(out, key, {
      configurable: true,
      get() {
        const value = make[key]();
        Object.defineProperty(out, key, { value });
        return value;
      },
    });
  return out;
}

export interface SqliteStoreOptions {
  /** How often other processes' commits are looked for while someone watches. */
  pollIntervalMs?: number;
  /** How many revisions of change history are kept for watchers (older: Gone → relist). */
  retainRevisions?: number;
  /**
   * Open for reading only (get, describe, logs...): no statement that needs the write lock, so a
   * read never waits for another process's write transaction, and a missing or empty file reads
   * as an empty store without anything being created.
   */
  readonly?: boolean;
}

/** How long a statement waits for another process's lock before it fails with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Commits between this process's checkpoints (SQLite's own auto-checkpoint is off for writers: a
 * checkpoint first checks that the file is still the one opened, see checkFile()).
 */
export const CHECKPOINT_EVERY_COMMITS = 500;

/** The database file a writer opened, to tell when another file, or nothing, has taken its place. */
interface OpenedFile {
  dev: number;
  ino: number;
}

interface Watcher {
  opts: WatchOptions;
  last: number;
  onEvent: (ev: WatchEvent) => void;
  onError?: (err: Error) => void;
}

interface ChangeRow {
  revision: number;
  kind: string;
  namespace: string;
  type: WatchEvent['type'];
  data: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', 0), ('compacted', 0);
CREATE TABLE IF NOT EXISTS objects (
  kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  rv INTEGER NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (kind, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (
  revision INTEGER PRIMARY KEY, kind TEXT NOT NULL, namespace TEXT NOT NULL,
  name TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, data TEXT NOT NULL);
`;

/** The newest resourceVersion per kind and namespace, for `unchanged` guards: a seek, not a scan. */
export const RV_INDEX = 'objects_kind_namespace_rv';
const INDEXES = `CREATE INDEX IF NOT EXISTS ${RV_INDEX} ON objects (kind, namespace, rv);`;

/**
 * The owner index: one row per (owner uid, dependent) from the dependents' ownerReferences, so a
 * delete finds its dependents with one seek (it scanned every object of the namespace with instr():
 * 39 % of a soak's controller CPU, issue 29). Kept by triggers on `objects`, in the writing
 * transaction itself, so no write path (nor an older orchctl writing to a migrated file) can leave
 * it behind; (kind, namespace, name) is the triggers' key to drop a dependent's rows.
 */
export const OWNER_REFS = 'owner_refs';
/** The uid of each of a row's ownerReferences (an entry that is not an object with a uid names none). */
const refUid = "json_extract(CASE WHEN r.type = 'object' THEN r.value END, '$.uid')";
const refsOf = (row: string) => `json_each(${row}.data, '$.metadata.ownerReferences') AS r`;
/**
 * Whether a row may have ownerReferences: a substring search, so a write of an object without any
 * (a Session's status) skips the JSON parse and the index entirely; a false match only costs that.
 */
const mayOwn = (row: string) => `instr(${row}.data, '"ownerReferences"') > 0`;
const insertRefs = `INSERT OR IGNORE INTO ${OWNER_REFS} (owner_uid, kind, namespace, name)
    SELECT ${refUid} AS uid, new.kind, new.namespace, new.name FROM ${refsOf('new')} WHERE uid IS NOT NULL;`;
const dropRefs = `DELETE FROM ${OWNER_REFS} WHERE kind = old.kind AND namespace = old.namespace AND name = old.name;`;
const OWNER_REFS_SCHEMA = `
CREATE TABLE IF NOT EXISTS ${OWNER_REFS} (
  owner_uid TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  PRIMARY KEY (owner_uid, kind, namespace, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${OWNER_REFS}_dependent ON ${OWNER_REFS} (kind, namespace, name);
CREATE TRIGGER IF NOT EXISTS ${OWNER_REFS}_insert AFTER INSERT ON objects
  WHEN ${mayOwn('new')} BEGIN ${insertRefs} END;
CREATE TRIGGER IF NOT EXISTS ${OWNER_REFS}_update AFTER UPDATE ON objects
  WHEN ${mayOwn('old')} OR ${mayOwn('new')} BEGIN ${dropRefs} ${insertRefs} END;
CREATE TRIGGER IF NOT EXISTS ${OWNER_REFS}_delete AFTER DELETE ON objects WHEN ${mayOwn('old')} BEGIN ${dropRefs} END;
`;
/** Fills the index from the objects already stored (a store made before it). */
const OWNER_REFS_BACKFILL = `INSERT OR IGNORE INTO ${OWNER_REFS} (owner_uid, kind, namespace, name)
  SELECT ${refUid} AS uid, o.kind, o.namespace, o.name FROM objects AS o, ${refsOf('o')} WHERE uid IS NOT NULL`;

/** A deleted object's dependents (exported so a test can check SQLite plans it as seeks, not a scan). */
export const DEPENDENTS_SQL =
  `SELECT o.data FROM ${OWNER_REFS} r ` +
  'JOIN objects o ON o.kind = r.kind AND o.namespace = r.namespace AND o.name = r.name ' +
  'WHERE r.owner_uid = ? AND r.namespace = ?';

/** The statements a guard runs (exported so a test can check SQLite plans them on the index). */
export const GUARD_SQL = {
  namespace: 'SELECT MAX(rv) AS rv FROM objects WHERE kind = ? AND namespace = ?',
  // Over every namespace: a scan of the kind's index entries, no table row read (~1.5 ms per 50 000
  // objects of the kind); in one namespace it is a single seek (~1 µs).
  any: 'SELECT MAX(rv) AS rv FROM objects WHERE kind = ?',
} as const;

export class SqliteStore implements Store {
  private readonly db: BetterSqlite3.Database;
  private readonly watchers = new Set<Watcher>();
  private poller?: NodeJS.Timeout;
  private dataVersion = -1;
  private localWrite = false;
  private readonly pollIntervalMs: number;
  private readonly retain: number;
  private closed = false;
  private readonly stmts;
  /** Writers on a file: which file was opened; checked before anything is checkpointed into it. */
  private readonly opened?: OpenedFile;
  /**
   * Writers on a file: a second, read-only connection kept open. SQLite checkpoints the WAL into
   * the file when its last connection closes; with this one open, closing the writer never does,
   * and it never checkpoints itself (read-only): close() decides whether the WAL goes into the file.
   */
  private readonly sentinel?: BetterSqlite3.Database;
  /** Set when the file turned out to be another (or none): every later write fails with it. */
  private lost?: ApiError;
  private commitsSinceCheckpoint = 0;

  readonly readonly: boolean;

  constructor(
    readonly file: string,
    opts: SqliteStoreOptions = {},
  ) {
    this.pollIntervalMs = opts.pollIntervalMs ?? 50;
    this.retain = opts.retainRevisions ?? 20_000;
    this.readonly = !!opts.readonly;
    let opening: BetterSqlite3.Database | undefined;
    try {
      this.db = opening = this.readonly ? openForReading(file) : openForWriting(file);
      if (!this.readonly && file !== ':memory:') {
        const st = fs.statSync(file);
        this.opened = { dev: st.dev, ino: st.ino };
        this.sentinel = database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
        this.sentinel.prepare("SELECT 1 FROM meta WHERE key = 'uid'").get(); // joins the WAL: holds its lock
      }
    } catch (e) {
      this.sentinel?.close();
      opening?.close();
      throw storeError(file, e);
    }
    const db = this.db;
    // Prepared on first use: a read-only `get` runs two of these twenty.
    this.stmts = lazily({
      get: () =>
        db.prepare<[string, string, string], { data: string }>(
          'SELECT data FROM objects WHERE kind = ? AND namespace = ? AND name = ?',
        ),
      listAll: () =>
        db.prepare<[string], { data: string }>('SELECT data FROM objects WHERE kind = ? ORDER BY namespace, name'),
      listNs: () =>
        db.prepare<[string, string], { data: string }>(
          'SELECT data FROM objects WHERE kind = ? AND namespace = ? ORDER BY name',
        ),
      dependents: () => db.prepare<[string, string], { data: string }>(DEPENDENTS_SQL),
      revision: () => db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'revision'"),
      compacted: () => db.prepare<[], { value: number }>("SELECT value FROM meta WHERE key = 'compacted'"),
      // Prepared once: the watch polls it every 50 ms (db.pragma() prepared a statement each time).
      dataVersion: () => db.prepare<[], number>('PRAGMA data_version').pluck(),
      bump: () =>
        db.prepare<[], { value: number }>("UPDATE meta SET value = value + 1 WHERE key = 'revision' RETURNING value"),
      setCompacted: () => db.prepare<[number]>("UPDATE meta SET value = ? WHERE key = 'compacted'"),
      compact: () => db.prepare<[number]>('DELETE FROM changes WHERE revision <= ?'),
      upsert: () =>
        db.prepare<[string, string, string, number, string]>(
          'INSERT INTO objects (kind, namespace, name, rv, data) VALUES (?, ?, ?, ?, ?) ' +
            'ON CONFLICT (kind, namespace, name) DO UPDATE SET rv = excluded.rv, data = excluded.data',
        ),
      remove: () =>
        db.prepare<[string, string, string]>('DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?'),
      change: () =>
        db.prepare<[number, string, string, string, string, string]>(
          'INSERT INTO changes (revision, kind, namespace, name, type, data) VALUES (?, ?, ?, ?, ?, ?)',
        ),
      changesSince: () =>
        db.prepare<[number], ChangeRow>(
          'SELECT revision, kind, namespace, type, data FROM changes WHERE revision > ? ORDER BY revision',
        ),
      changesSinceKind: () =>
        db.prepare<[number, string], ChangeRow>(
          'SELECT revision, kind, namespace, type, data FROM changes WHERE revision > ? AND kind = ? ORDER BY revision',
        ),
      newestNs: () => db.prepare<[string, string], { rv: number | null }>(GUARD_SQL.namespace),
      newestAny: () => db.prepare<[string], { rv: number | null }>(GUARD_SQL.any),
      leaseGet: () => db.prepare<[string], { data: string }>('SELECT data FROM leases WHERE name = ?'),
      leasePut: () =>
        db.prepare<[string, string]>(
          'INSERT INTO leases (name, data) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET data = excluded.data',
        ),
      leaseDel: () => db.prepare<[string]>('DELETE FROM leases WHERE name = ?'),
    });
  }

  // ---- reads -------------------------------------------------------------------------------

  async get<K extends string>(key: ObjectKey<K>): Promise<ObjectOf<K> | undefined> {
    return this.sql(() => this.getSync(key));
  }

  /**
   * SQLite's own errors name no file ("database disk image is malformed"): these say which, and
   * what to do. One that comes from the file having changed under this process says that.
   */
  private sql<T>(fn: () => T, what?: string): T {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof Database.SqliteError)) throw e;
      this.checkFile();
      throw storeError(this.file, e, what);
    }
  }

  /** The decode point of reads (see Store): the row stored under kind K holds an object of kind K. */
  private getSync<K extends string>(key: ObjectKey<K>): ObjectOf<K> | undefined {
    const row = this.stmts.get.get(key.kind, key.namespace, key.name);
    return row ? (JSON.parse(row.data) as ObjectOf<K>) : undefined;
  }

  async list<K extends string>(kind: K, opts: ListOptions = {}): Promise<ListResult<ObjectOf<K>>> {
    // One read transaction so the items and the revision are a consistent snapshot.
    return this.sql(
      this.db.transaction(() => {
        const rows =
          opts.namespace === undefined ? this.stmts.listAll.all(kind) : this.stmts.listNs.all(kind, opts.namespace);
        // A decode point (see Store): the rows listed under kind K hold objects of kind K.
        let items = rows.map((r) => JSON.parse(r.data) as ObjectOf<K>);
        if (opts.labelSelector?.length) items = items.filter((o) => matches(opts.labelSelector!, o.metadata.labels));
        return { items, revision: this.stmts.revision.get()!.value };
      }),
    );
  }

  async revision(): Promise<number> {
    return this.sql(() => this.stmts.revision.get()!.value);
  }

  /**
   * The store's identity, made once when the store is created (like an etcd cluster id). Every
   * tmux session a controller launches carries it, so a controller never mistakes another
   * store's sessions — or a lost store's — for its own.
   */
  async uid(): Promise<string> {
    return this.sql(() => readUid(this.db));
  }

  /**
   * A consistent copy of the whole store in `dest` (SQLite's online backup: other processes go
   * on reading and writing while it runs).
   */
  async backup(dest: string): Promise<void> {
    try {
      await this.db.backup(dest);
    } catch (e) {
      throw storeError(this.file, e, `backup to ${dest} failed`);
    }
    fs.chmodSync(dest, 0o600);
  }

  // ---- writes ------------------------------------------------------------------------------

  create<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'create', object: obj });
  }

  update<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'update', object: obj });
  }

  updateStatus<T extends Resource>(obj: T): Promise<T> {
    return writeOne(this, { op: 'updateStatus', object: obj });
  }

  delete<K extends string>(key: ObjectKey<K>, opts?: DeleteOptions): Promise<ObjectOf<K>> {
    return writeOne(this, { op: 'delete', key, options: opts });
  }

  async txn(ops: WriteOp[], opts: TxnOptions = {}): Promise<Resource[]> {
    this.assertOpen();
    const DRY_RUN = Symbol('dry-run');
    let results: Resource[] = [];
    const run = this.db.transaction(() => {
      // Guards first, as etcd evaluates a txn's compares before its ops: a guard never sees the
      // transaction's own writes, wherever it stands in the list.
      if (opts.fence) this.checkFence(opts.fence);
      const writes: Exclude<WriteOp, UnchangedGuard>[] = [];
      for (const op of ops) {
        if (op.op === 'unchanged') this.checkUnchanged(op);
        else writes.push(op);
      }
      results = writes.map((op) => this.applyOp(op));
      if (opts.dryRun) throw DRY_RUN; // rolls the transaction back
    });
    try {
      this.sql(() => run.immediate(), 'cannot write to the store');
    } catch (e) {
      if (e === DRY_RUN) return results;
      throw e;
    }
    this.localWrite = true;
    this.committed();
    setImmediate(() => this.pump());
    return results;
  }

  /** After a commit: every CHECKPOINT_EVERY_COMMITS, the WAL goes into the file (if it is still ours). */
  private committed(): void {
    if (!this.opened || ++this.commitsSinceCheckpoint < CHECKPOINT_EVERY_COMMITS) return;
    this.commitsSinceCheckpoint = 0;
    try {
      this.checkFile();
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      /* lost: the next write says so; busy: the next checkpoint does it */
    }
  }

  /**
   * Throws, and stays lost, when the file at this.file is no longer the database this store opened:
   * removed, another file in its place, truncated or overwritten. This process's WAL must then
   * never be checkpointed into it: that writes pages of the old database into what is there now,
   * which SQLite then calls malformed.
   */
  private checkFile(): void {
    if (this.lost) throw this.lost;
    if (!this.opened) return;
    const why = fileChange(this.file, this.opened);
    if (!why) return;
    this.lost = new ApiError(
      'StoreLost',
      `the store ${this.file} changed under this process (${why}); stopped without writing to it. ` +
        'Running agents are left as they are: the next controller on a new or empty store reports them ' +
        'as orphans (docs/store.md); to go back to a backup first, use `orchctl store restore FILE`',
    );
    throw this.lost;
  }

  /** TxnOptions.fence: the lease row is read inside the write transaction, so no takeover slips in between. */
  private checkFence(fence: NonNullable<TxnOptions['fence']>): void {
    const row = this.stmts.leaseGet.get(fence.lease);
    const cur = row ? (JSON.parse(row.data) as LeaseRecord) : undefined;
    const why = fenceBroken(cur, fence.holder, Date.now());
    if (why) throw fencedError(fence, why);
  }

  private checkUnchanged(g: UnchangedGuard): void {
    const newest =
      g.namespace === undefined
        ? this.stmts.newestAny.get(g.kind)?.rv
        : this.stmts.newestNs.get(g.kind, g.namespace)?.rv;
    if (newest == null || newest <= g.since) return;
    throw guardConflict(g, newest);
  }

  private applyOp(op: Exclude<WriteOp, UnchangedGuard>): Resource {
    switch (op.op) {
      case 'create':
        return this.createSync(op.object);
      case 'update':
        return this.updateSync(op.object);
      case 'updateStatus':
        return this.updateStatusSync(op.object);
      case 'delete':
        return this.deleteSync(op.key, op.options);
    }
  }

  private nextRevision(): number {
    const rev = this.stmts.bump.get()!.value;
    if (rev % 1000 === 0 && rev > this.retain) {
      this.stmts.compact.run(rev - this.retain);
      this.stmts.setCompacted.run(rev - this.retain);
    }
    return rev;
  }

  private write(obj: Resource, type: WatchEvent['type']): Resource {
    redactForStore(obj);
    const rev = this.nextRevision();
    obj.metadata.resourceVersion = String(rev);
    const ns = obj.metadata.namespace ?? '';
    const data = JSON.stringify(obj);
    if (type === 'DELETED') this.stmts.remove.run(obj.kind, ns, obj.metadata.name);
    else this.stmts.upsert.run(obj.kind, ns, obj.metadata.name, rev, data);
    this.stmts.change.run(rev, obj.kind, ns, obj.metadata.name, type, data);
    return obj;
  }

  /** The write rules are backend-neutral (object-rules.ts); this applies their outcome to the tables. */
  private apply(outcome: Outcome): Resource {
    if (outcome.kind === 'unchanged') return outcome.object;
    if (outcome.kind === 'remove') return this.removeSync(outcome.object);
    return this.write(outcome.object, 'MODIFIED');
  }

  private createSync(input: Resource): Resource {
    const existing = input.kind && input.metadata?.name ? this.getSync(objectKey(input)) : undefined;
    return this.write(created(input, existing, randomUUID()), 'ADDED');
  }

  private updateSync(input: Resource): Resource {
    return this.apply(updated(input, current(input, this.getSync(objectKey(input)))));
  }

  private updateStatusSync(input: Resource): Resource {
    return this.apply(statusUpdated(input, current(input, this.getSync(objectKey(input)))));
  }

  private deleteSync(key: ObjectKey, opts: DeleteOptions = {}): Resource {
    return this.apply(deleted(key, this.getSync(key), opts));
  }

  /** Removes an object and cascades to its dependents (ownerReferences), in the same transaction. */
  private removeSync(obj: Resource): Resource {
    const removed = this.write(obj, 'DELETED');
    const uid = obj.metadata.uid;
    if (uid) {
      for (const row of this.stmts.dependents.all(uid, obj.metadata.namespace ?? '')) {
        const dep = JSON.parse(row.data) as Resource;
        if (!isDependent(dep, obj)) continue;
        const depKey = objectKey(dep);
        if (this.getSync(depKey)) this.deleteSync(depKey);
      }
    }
    return removed;
  }

  // ---- watch -------------------------------------------------------------------------------

  watch<K extends string>(
    opts: WatchOptions<K>,
    onEvent: (ev: WatchEvent<ObjectOf<K>>) => void,
    onError?: (err: Error) => void,
  ): WatchHandle {
    this.assertOpen();
    const w: Watcher = { opts, last: opts.fromRevision, onEvent: anyKind(onEvent), onError };
    this.watchers.add(w);
    setImmediate(() => this.deliver(w));
    if (!this.poller) {
      this.poller = setInterval(() => this.pump(), this.pollIntervalMs);
      this.poller.unref?.();
    }
    return {
      close: () => {
        this.watchers.delete(w);
        if (this.watchers.size === 0 && this.poller) {
          clearInterval(this.poller);
          this.poller = undefined;
        }
      },
    };
  }

  /** Delivers new changes to every watcher when this or another process committed something. */
  private pump(): void {
    if (this.closed || this.watchers.size === 0) return;
    let dv: number;
    try {
      dv = this.sql(() => this.stmts.dataVersion.get() as number);
    } catch (e) {
      for (const w of [...this.watchers]) {
        this.watchers.delete(w);
        w.onError?.(e as Error);
      }
      return;
    }
    if (dv === this.dataVersion && !this.localWrite) return;
    this.dataVersion = dv;
    this.localWrite = false;
    for (const w of [...this.watchers]) this.deliver(w);
  }

  private deliver(w: Watcher): void {
    if (this.closed || !this.watchers.has(w)) return;
    try {
      this.sql(() => this.deliverChanges(w));
    } catch (e) {
      // The store cannot be read (a damaged file): the watcher hears it, as from a broken stream.
      this.watchers.delete(w);
      w.onError?.(e as Error);
    }
  }

  private deliverChanges(w: Watcher): void {
    if (w.last < this.stmts.compacted.get()!.value) {
      this.watchers.delete(w);
      w.onError?.(
        new ApiError('Gone', `revision ${w.last} has been compacted; list again and watch from the new revision`),
      );
      return;
    }
    // Every change up to the revision committed now is in what the query below returns (writes are
    // serialised), so the watcher moves on to it even when none was of its kind. Left behind, a watch
    // of a kind nobody writes rescanned every change since it began on each delivery — O(writes²),
    // 23 s of a 1000-session start — and was told Gone once those changes were compacted.
    const upTo = this.stmts.revision.get()!.value;
    const rows = w.opts.kind
      ? this.stmts.changesSinceKind.all(w.last, w.opts.kind)
      : this.stmts.changesSince.all(w.last);
    for (const row of rows) {
      if (!this.watchers.has(w)) return;
      w.last = row.revision;
      if (w.opts.namespace !== undefined && row.namespace !== w.opts.namespace) continue;
      try {
        w.onEvent({ type: row.type, object: JSON.parse(row.data) as Resource, revision: row.revision });
      } catch (e) {
        w.onError?.(e as Error);
      }
    }
    if (w.last < upTo) w.last = upTo;
  }

  // ---- leases ------------------------------------------------------------------------------

  async tryAcquireLease(name: string, holder: string, durationSeconds: number): Promise<LeaseRecord | undefined> {
    this.assertOpen();
    // Every renewal (a few seconds apart) looks at the file: a holder whose store was truncated or
    // replaced under it stops (runtime/manager.ts) rather than going on into a WAL of nothing.
    this.checkFile();
    const rec = this.sql(() =>
      this.db
        .transaction(() => {
          const row = this.stmts.leaseGet.get(name);
          const cur = row ? (JSON.parse(row.data) as LeaseRecord) : undefined;
          const rec = acquiredLease(cur, name, holder, durationSeconds, new Date());
          if (!rec) return undefined;
          this.stmts.leasePut.run(name, JSON.stringify(rec));
          return rec;
        })
        .immediate(),
    );
    this.committed();
    return rec;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.closed || this.lost) return;
    this.sql(() =>
      this.db
        .transaction(() => {
          const row = this.stmts.leaseGet.get(name);
          if (row && (JSON.parse(row.data) as LeaseRecord).holderIdentity === holder) this.stmts.leaseDel.run(name);
        })
        .immediate(),
    );
  }

  async getLease(name: string): Promise<LeaseRecord | undefined> {
    const row = this.sql(() => this.stmts.leaseGet.get(name));
    return row ? (JSON.parse(row.data) as LeaseRecord) : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.poller) clearInterval(this.poller);
    this.watchers.clear();
    if (this.opened) {
      try {
        this.checkFile();
      } catch (e) {
        // Not ours any more: the writer closes while the sentinel is open (no checkpoint on close),
        // then the read-only sentinel, which never checkpoints. The file is left as it was found.
        this.db.close();
        this.sentinel?.close();
        throw e;
      }
      this.sentinel?.close();
      // Move everything committed into the main file and empty the WAL, so the database file alone
      // holds the state after a clean shutdown. Another process reading or writing right now
      // makes this a partial checkpoint, which is fine: whoever closes last completes it.
      this.db.pragma('busy_timeout = 200');
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        /* busy: a later close or checkpoint does it */
      }
    }
    this.db.close();
  }

  private assertOpen(): void {
    if (this.lost) throw this.lost;
    if (this.closed) throw new ApiError('InternalError', 'store is closed');
  }
}

function openForWriting(file: string): BetterSqlite3.Database {
  if (file !== ':memory:') prepareFile(file);
  const db = database(file, { timeout: BUSY_TIMEOUT_MS });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // This process checkpoints itself, having checked the file is still the one it opened (committed()).
  if (file !== ':memory:') db.pragma('wal_autocheckpoint = 0');
  if (!hasSchema(db)) {
    db.exec(SCHEMA + INDEXES);
    db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('uid', ?)").run(randomUUID());
  } else if (!db.prepare("SELECT 1 FROM meta WHERE key = 'uid'").get()) {
    // A store made before stores had an identity gets one now.
    db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('uid', ?)").run(randomUUID());
  }
  // A store made before guards gets their index now (looked up first: no write on every open).
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(RV_INDEX)) db.exec(INDEXES);
  ensureOwnerRefs(db);
  if (file !== ':memory:') restrictSidecars(file);
  return db;
}

/** Read-only: no write statement, nothing created; no file or an empty one reads as an empty store. */
function openForReading(file: string): BetterSqlite3.Database {
  const dir = path.dirname(file);
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
  if (file !== ':memory:' && fs.existsSync(file) && fs.statSync(file).size > 0) {
    const db = database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    if (hasSchema(db)) return db;
    db.close();
  }
  const empty = database(':memory:');
  empty.exec(SCHEMA + INDEXES + OWNER_REFS_SCHEMA);
  return empty;
}

/**
 * The owner index and its triggers, on a new store or one an older orchctl made (looked up first: no
 * write on every open). Created and backfilled in one write transaction, which a second process
 * opening the file at the same time waits for and then finds done: the index is filled once.
 */
function ensureOwnerRefs(db: BetterSqlite3.Database): void {
  const names = [OWNER_REFS, ...['insert', 'update', 'delete'].map((op) => `${OWNER_REFS}_${op}`)];
  const present = db.prepare<string[], number>('SELECT count(*) FROM sqlite_master WHERE name IN (?, ?, ?, ?)').pluck();
  const complete = () => present.get(...names) === names.length;
  if (complete()) return;
  db.transaction(() => {
    if (complete()) return;
    db.exec(OWNER_REFS_SCHEMA);
    // Made again from the objects: with a trigger missing, writes may have gone by the index.
    db.exec(`DELETE FROM ${OWNER_REFS}`);
    db.exec(OWNER_REFS_BACKFILL);
  }).immediate();
}

function readUid(db: BetterSqlite3.Database): string {
  const row = db.prepare<[], { value: unknown }>("SELECT value FROM meta WHERE key = 'uid'").get();
  return typeof row?.value === 'string' ? row.value : '';
}

const SQLITE_MAGIC = 'SQLite format 3\0';

/** Why the file at `file` is no longer the database `opened` describes, or undefined (see SqliteStore.checkFile). */
function fileChange(file: string, opened: OpenedFile): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return 'it was removed';
  }
  if (st.dev !== opened.dev || st.ino !== opened.ino) return 'another file was put in its place';
  if (st.size === 0) return 'it was truncated to 0 bytes';
  const head = Buffer.alloc(SQLITE_MAGIC.length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  return head.toString('latin1') === SQLITE_MAGIC
    ? undefined
    : 'it was overwritten: it is no longer an SQLite database';
}

function hasSchema(db: BetterSqlite3.Database): boolean {
  const n = db
    .prepare<[], { n: number }>(
      'SELECT count(*) AS n FROM sqlite_master ' +
        "WHERE type = 'table' AND name IN ('meta', 'objects', 'changes', 'leases')",
    )
    .get()!.n;
  return n === 4;
}

/** Throws unless `file` is an intact orchctl store (the tables, and SQLite's integrity check). */
export function verifyStoreFile(file: string): void {
  if (!fs.existsSync(file)) throw new ApiError('BadRequest', `${file}: no such file`);
  let db: BetterSqlite3.Database | undefined;
  try {
    db = database(file, { readonly: true, fileMustExist: true });
    const ok = db.pragma('integrity_check', { simple: true });
    if (ok !== 'ok') throw new Error(`integrity check failed: ${String(ok)}`);
    if (!hasSchema(db)) throw new Error('not an orchctl store (its tables are missing)');
  } catch (e) {
    throw new ApiError('BadRequest', `${file} is not a usable orchctl store: ${(e as Error).message}`);
  } finally {
    db?.close();
  }
}

/**
 * Replaces the store in `dest` with the store in `src`, through SQLite's backup API (so the
 * WAL of `dest` is handled by SQLite, not by file copies). The result gets a new identity, as
 * `etcdctl snapshot restore` makes a new cluster id: sessions started since the backup are then
 * orphans — reported, never killed — and sessions whose objects are in the backup are adopted.
 */
export async function restoreStoreFile(src: string, dest: string): Promise<string> {
  verifyStoreFile(src);
  const from = database(src, { readonly: true, fileMustExist: true });
  try {
    prepareFile(dest);
    await from.backup(dest);
  } catch (e) {
    throw storeError(dest, e, `restore from ${src} failed:`);
  } finally {
    from.close();
  }
  const db = database(dest, { timeout: BUSY_TIMEOUT_MS });
  try {
    db.pragma('journal_mode = WAL');
    const uid = randomUUID();
    db.transaction(() => {
      db.prepare(
        "INSERT INTO meta (key, value) VALUES ('uid', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ).run(uid);
      db.prepare('DELETE FROM leases').run(); // the backup's controller lease is not anyone's now
    }).immediate();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return uid;
  } finally {
    db.close();
    restrictSidecars(dest);
  }
}

/** Every store error names the database file and says what to do about it. */
export function storeError(file: string, e: unknown, what = 'cannot use the store'): Error {
  const msg = (e as Error)?.message ?? String(e);
  const code = (e as { code?: string })?.code ?? '';
  let hint = 'check the file and its permissions, or restore it with `orchctl store restore FILE`';
  if (/BUSY|LOCKED/.test(code) || /database is locked/.test(msg))
    hint =
      `another process held its write lock for over ${BUSY_TIMEOUT_MS / 1000} s; ` +
      'retry, and look for a stuck orchctl process';
  else if (/NOTADB|CORRUPT/.test(code) || /not a database|malformed/.test(msg))
    hint =
      'the file is damaged or not an orchctl store: stop the controller and restore a backup with ' +
      '`orchctl store restore FILE`, or move the file aside to start an empty store (running agents ' +
      'are then reported as orphans, never killed)';
  else if (/CANTOPEN|READONLY|PERM/.test(code))
    hint = 'check that the directory exists and you may write to it (or set --home)';
  const err = new ApiError('InternalError', `${what} ${file}: ${msg} (${hint})`);
  return err;
}

/** State files are readable by their owner only. */
function prepareFile(file: string): void {
  const dir = path.dirname(file);
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!fs.existsSync(file)) fs.closeSync(fs.openSync(file, 'a', 0o600));
  fs.chmodSync(file, 0o600);
}

function restrictSidecars(file: string): void {
  for (const f of [`${file}-wal`, `${file}-shm`]) if (fs.existsSync(f)) fs.chmodSync(f, 0o600);
}
