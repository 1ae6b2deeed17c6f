/**
 * Run directories on this node's disk ($ORCHCTL_HOME/sessions/<ns>/<name>/<run>/, observers/workspace.ts):
 *  - of a session in the store, runs older than the newest `runDirsPerSession` below its current
 *    run (status.run) go; the current run and any later (being prepared) are never touched;
 *  - of a session no longer in the store, the whole directory (runs, event log, checkpoints) goes
 *    once nothing in it changed for `deletedSessionDirTtlMs`.
 * The node agent runs it (the disk is the node's). It looks at the sessions' cache first: a run
 * there is never newer than in the store (runs only grow), so it removes no more old runs than the
 * store would; when it would remove a whole directory, whose session the cache does not show, the
 * store is read instead, so a session created a moment ago is seen. On etcd that keeps an idle pass
 * from reading every session every minute. A pass killed half-way leaves whole directories and is
 * done again.
 */
import fs from 'node:fs';
import path from 'node:path';

import type { AgentSession } from '../../api/session.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { DEFAULT_RETENTION, type Retention } from '../../api/retention.js';

export const RUN_DIRS = 'RunDirs';

type Limits = Pick<Retention, 'runDirsPerSession' | 'deletedSessionDirTtlMs'>;

/** The directories directly under `dir` (none when it cannot be read). */
export const subdirs = (dir: string): string[] => {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
};

/** The newest mtime under `dir` (it and its direct entries): when anything in it last changed. */
function lastChange(dir: string): number {
  let newest = 0;
  for (const name of ['.', ...fs.readdirSync(dir)]) {
    try {
      newest = Math.max(newest, fs.statSync(path.join(dir, name)).mtimeMs);
    } catch {
      /* gone meanwhile */
    }
  }
  return newest;
}

/** What to remove under `<home>/sessions`, given each live session's current run (pure but for reading the disk). */
export function runDirsToRemove(
  home: string,
  runs: Map<string, number | undefined>,
  limits: Limits,
  now: number,
  /** A live session's runs already looked at for this current run (nothing older can have appeared). */
  lookedAt?: ReadonlyMap<string, number>,
): string[] {
  const root = path.join(home, 'sessions');
  const out: string[] = [];
  for (const ns of subdirs(root))
    for (const name of subdirs(path.join(root, ns))) {
      const dir = path.join(root, ns, name);
      const key = `${ns}/${name}`;
      if (!runs.has(key)) {
        if (now - lastChange(dir) > limits.deletedSessionDirTtlMs) out.push(dir);
        continue;
      }
      const current = runs.get(key);
      if (current === undefined) continue; // no run recorded yet: nothing is known to be old
      if (lookedAt?.get(key) === current) continue;
      for (const r of subdirs(dir))
        if (/^\d+$/.test(r) && Number(r) <= current - Math.max(2, limits.runDirsPerSession))
          out.push(path.join(dir, r));
    }
  return out;
}

export class RunDirRetention implements Reconciler {
  private readonly limits: Limits;
  /**
   * Each live session's run when a pass last looked at its runs and removed what was old: runs only
   * grow, so until it moves on there is nothing new to remove, and the pass skips the directory (a
   * listing of every session's directory every minute, 13 % of the idle controller's JavaScript
   * time at 1000 sessions). In memory: a restarted process looks at every one once.
   */
  private readonly lookedAt = new Map<string, number>();

  constructor(
    private readonly d: {
      store: Store;
      home: string;
      /** The sessions' cache (the node agent's informer); without it the store is read every pass. */
      sessions?: Pick<Informer<'AgentSession'>, 'list'>;
      retention?: Partial<Retention>;
      now?: () => number;
    },
  ) {
    this.limits = { ...DEFAULT_RETENTION, ...d.retention };
  }

  async reconcile(key: string): Promise<void> {
    if (key !== RUN_DIRS) return;
    const now = (this.d.now ?? Date.now)();
    const sessionsRoot = path.join(this.d.home, 'sessions');
    let runs = this.d.sessions ? runsOf(this.d.sessions.list()) : undefined;
    let remove = runs && runDirsToRemove(this.d.home, runs, this.limits, now, this.lookedAt);
    // A whole session directory (<ns>/<name>, not <ns>/<name>/<run>) goes only on the store's word.
    if (!remove || remove.some((dir) => path.relative(sessionsRoot, dir).split(path.sep).length === 2)) {
      runs = runsOf((await this.d.store.list('AgentSession')).items);
      remove = runDirsToRemove(this.d.home, runs, this.limits, now, this.lookedAt);
    }
    for (const dir of remove) fs.rmSync(dir, { recursive: true, force: true });
    // All removed: what was looked at is done (a pass that threw looks again).
    this.lookedAt.clear();
    for (const [key, run] of runs ?? []) if (run !== undefined) this.lookedAt.set(key, run);
  }
}

const runsOf = (items: AgentSession[]) =>
  new Map(items.map((s) => [`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`, s.status?.run] as const));
