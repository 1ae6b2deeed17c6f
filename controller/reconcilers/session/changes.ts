/**
 * The observe tick's filter (issue 29): of the live sessions, only those whose observed facts
 * changed since the tick last queued them. Reconciling every live session on every tick cost
 * ~0.5 ms each (a store read, the workspace files, the status compare): 21 % of a core at 1000
 * idle sessions, for nothing. Time-based transitions (launch grace, time box, stop grace, backoff,
 * pause ends, idle and context deadlines) do not need the tick: the plan returns when it must look
 * again (requeueAfterMs); object changes, hook files and transcripts wake a session by their own
 * watches.
 *
 * A session's fingerprint is what its observation reads that can change without an event: its
 * panes in the shared tmux snapshot (alive, dead, exit status, current command…), its run
 * directory (the output log, which grows whenever the screen is redrawn, the exit code, the files
 * agents write: one inotify watch on the directory counts changes — a busy agent's output costs a
 * counter increment, still looked at once per tick; where no watch can be had, the files' stat
 * stamps) and its repository's git stamp (stat only, once per repository per tick). An idle tick
 * costs one `list-panes` and no file system call per session (six stats each cost more than the
 * reconciles they saved under load); a change is seen by the next tick, as before. Each session
 * is still queued at least every `fullLookMs`, whatever its fingerprint says.
 */
import fs from 'node:fs';
import path from 'node:path';
import { STATUSLINE_FILE } from '../../agents/statusline.js';
import type { AgentSession } from '../../api/kinds.js';
import { HANDOFF_FILE } from '../../observers/context-files.js';
import type { GitObserver } from '../../observers/git.js';
import type { PaneObserver, PaneSnapshot } from '../../observers/panes.js';
import type { PaneInfo } from '../../observers/tmux.js';
import { REPORT_FILE } from '../../observers/report.js';
import { queueKey } from '../../runtime/manager.js';

/** Files of a run's workspace that change in place (the directory's own stamp covers new files). */
const WORKSPACE_FILES = ['output.log', REPORT_FILE, STATUSLINE_FILE, HANDOFF_FILE];

export interface ChangeFilterDeps {
  panes: PaneObserver;
  git: Pick<GitObserver, 'stampOf'>;
  /** Every session is queued at least this often, changed or not. */
  fullLookMs: number;
}

export class ChangeFilter {
  private readonly last = new Map<string, { print: string; at: number }>();
  private readonly dirs = new RunDirWatches();

  constructor(private readonly d: ChangeFilterDeps) {}

  /** The keys of `sessions` whose fingerprint changed (or whose full look is due), remembered as queued. */
  async changed(sessions: readonly AgentSession[], now = Date.now()): Promise<string[]> {
    const snap = await this.d.panes.snapshot();
    const repos = new Map<string, string>(); // one stamp per repository per tick
    const repoStamp = (dir: string) => {
      const s = repos.get(dir) ?? this.d.git.stampOf(dir);
      repos.set(dir, s);
      return s;
    };
    const out: string[] = [];
    const seen = new Set<string>();
    for (const o of sessions) {
      const key = queueKey(o);
      seen.add(key);
      const print = fingerprint(o, snap, repoStamp, this.dirs.stamp(key, o.status?.workspace));
      const prev = this.last.get(key);
      if (prev && prev.print === print && now - prev.at < this.d.fullLookMs) continue;
      this.last.set(key, { print, at: now });
      out.push(key);
    }
    for (const k of this.last.keys()) if (!seen.has(k)) this.last.delete(k);
    this.dirs.keep(seen);
    return out;
  }

  /** Closes the directory watches. */
  close(): void {
    this.dirs.keep(new Set());
  }

  /** Fingerprints held (one per live session), for the cost tests. */
  get size(): number {
    return this.last.size;
  }
}

/** A pane's part of the fingerprint, once per pane object (tmux.ts reuses the object of an unchanged line). */
const panePrints = new WeakMap<PaneInfo, string>();
function panePrint(p: PaneInfo): string {
  let print = panePrints.get(p);
  if (print === undefined) {
    print = [
      p.key,
      p.pid,
      p.dead,
      p.exitStatus,
      p.exitSignal,
      p.deadAt,
      p.inMode,
      p.currentCommand,
      p.store,
      p.fused,
    ].join();
    panePrints.set(p, print);
  }
  return print;
}

function fingerprint(o: AgentSession, snap: PaneSnapshot, repoStamp: (dir: string) => string, runDir: string): string {
  const s = o.status ?? {};
  const parts: string[] = [String(snap.serverRunning), String(s.run ?? 0)];
  for (const p of snap.byUid(o.metadata.uid ?? '')) parts.push(panePrint(p));
  parts.push(runDir);
  if (s.workdir) parts.push(repoStamp(s.workdir));
  return parts.join('\n');
}

function stamp(file: string): string {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  return st ? `${st.size}:${st.mtimeMs}` : '-';
}

/**
 * One inotify watch per live session's run directory, counting what happens in it (a file written,
 * created, renamed); '' for no run directory. Unref'd: they never keep the process alive.
 */
class RunDirWatches {
  private readonly watches = new Map<string, Watch>();

  stamp(key: string, dir: string | undefined): string {
    if (!dir) return '';
    let w = this.watches.get(key);
    if (w?.dir !== dir) {
      w?.watcher?.close();
      w = { dir, events: 0 };
      this.watches.set(key, w);
      w.watcher = watchDir(dir, w);
    }
    // No watch (the directory is missing, or inotify's limit is reached): the files' own stamps.
    if (!w.watcher) {
      w.watcher = watchDir(dir, w);
      return [dir, ...WORKSPACE_FILES].map((f, i) => stamp(i ? path.join(dir, f) : f)).join(' ');
    }
    return `${dir}#${w.events}`;
  }

  /** Closes the watches of sessions not in `keys`. */
  keep(keys: ReadonlySet<string>): void {
    for (const [k, w] of this.watches)
      if (!keys.has(k)) {
        w.watcher?.close();
        this.watches.delete(k);
      }
  }
}

interface Watch {
  dir: string;
  watcher?: fs.FSWatcher;
  events: number;
}

function watchDir(dir: string, w: Watch): fs.FSWatcher | undefined {
  try {
    const watcher = fs.watch(dir, { persistent: false }, () => {
      w.events++;
    });
    watcher.on('error', () => {
      // Looked at once more; the next tick watches again.
      w.events++;
      watcher.close();
      if (w.watcher === watcher) w.watcher = undefined;
    });
    return watcher;
  } catch {
    return undefined;
  }
}
