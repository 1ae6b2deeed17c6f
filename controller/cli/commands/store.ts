/**
 * `orchctl store backup FILE` and `orchctl store restore FILE`, shaped like `etcdctl snapshot
 * save/restore`: a backup is a consistent copy taken while the controller runs; a restore
 * replaces the store only while no controller holds it, and gives it a new identity.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeLocation, describeSource } from '../../config/config-location.js';
import { CONTROLLER_LEASE, holderIsDead } from '../../runtime/lease.js';
import { restoreStoreFile, SqliteStore, verifyStoreFile } from '../../store/sqlite.js';
import { type GlobalOptions, resolveTarget } from '../context.js';
import { out } from '../output.js';

/** The SQLite file the global options name (--context, $ORCHCTL_STORE...); etcd has its own snapshot tool. */
async function dbPath(g: GlobalOptions, verb: 'backup' | 'restore'): Promise<string> {
  const t = await resolveTarget(g);
  if (t.location.backend === 'sqlite') return t.location.path;
  const tool = verb === 'backup' ? 'etcdctl snapshot save FILE' : 'etcdutl snapshot restore FILE (on every member)';
  throw new Error(
    `orchctl store ${verb} works on an SQLite store; ${describeSource(t)} is ${describeLocation(t.location)}: ` +
      `use ${tool} (docs/contexts.md)`,
  );
}

export async function storeBackupCommand(file: string, opts: { force?: boolean }, g: GlobalOptions): Promise<void> {
  const src = await dbPath(g, 'backup');
  if (!fs.existsSync(src)) throw new Error(`there is no store at ${src} to back up`);
  const dest = path.resolve(file);
  if (fs.existsSync(dest) && !opts.force) throw new Error(`${dest} already exists (use --force to overwrite it)`);
  const tmp = `${dest}.part-${process.pid}`;
  const store = new SqliteStore(src, { readonly: true });
  try {
    await store.backup(tmp);
    verifyStoreFile(tmp);
    fs.renameSync(tmp, dest); // a half-written backup never carries the final name
    const revision = await store.revision();
    out(`backed up ${src} (revision ${revision}) to ${dest} (${fs.statSync(dest).size} bytes)\n`);
  } finally {
    fs.rmSync(tmp, { force: true });
    await store.close();
  }
}

export async function storeRestoreCommand(file: string, _opts: unknown, g: GlobalOptions): Promise<void> {
  const dest = await dbPath(g, 'restore');
  const src = path.resolve(file);
  verifyStoreFile(src);
  if (fs.existsSync(dest)) {
    const cur = new SqliteStore(dest, { readonly: true });
    try {
      const lease = await cur.getLease(CONTROLLER_LEASE);
      const fresh = lease && Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1000 > Date.now();
      const live = fresh && !holderIsDead(lease);
      if (live)
        throw new Error(
          `a controller (${lease.holderIdentity}) holds the store ${dest}; stop it first, then restore ` +
            '(its tmux sessions keep running and are adopted when it starts again)',
        );
    } finally {
      await cur.close();
    }
  }
  const uid = await restoreStoreFile(src, dest);
  out(
    `restored ${dest} from ${src} (new store identity ${uid.slice(0, 8)}); ` +
      'sessions started since the backup are reported as orphans, not killed\n',
  );
}
