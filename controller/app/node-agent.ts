/**
 * The node agent role (kubelet-like; `orchctl node`, or embedded in `orchctl controller`): under
 * its node lease `orchctl-node-<name>` it keeps its Node current, and runs, observes and adopts the
 * runs of the sessions bound to it — the session reconciler, and the assessment and judge, which
 * read a run's event log and transcript from this node's disk. Before its first reconcile, and
 * again whenever its lease had lapsed, it kills its stale runs (reconcilers/session/sweep.ts).
 * In multi-node mode each lease renewal touches $ORCHCTL_HOME/heartbeat, and once the lease is held it
 * starts the node's one watchdog, which hangs up every run here when that file goes stale
 * (app/watchdog.ts). docs/multi-host.md tells the whole story.
 */
import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../config/paths.js';
import type { ControllerMetrics } from '../metrics/index.js';
import type { AgentFeed } from '../observers/agent-feed.js';
import type { AuditLog } from '../observers/audit.js';
import { setup as setupAssessment } from '../reconcilers/assessment/setup.js';
import { setup as setupJudge } from '../reconcilers/judge/setup.js';
import { setup as setupNode } from '../reconcilers/node/setup.js';
import { RUN_DIRS, RunDirRetention } from '../reconcilers/housekeeping/run-dirs.js';
import { SWEEP_MS } from '../reconcilers/housekeeping/setup.js';
import type { Retention } from '../api/retention.js';
import type { ControllerServices } from '../reconcilers/services.js';
import { boundTo } from '../reconcilers/session/epoch.js';
import { setup as setupSession } from '../reconcilers/session/setup.js';
import { sweepStaleRuns } from '../reconcilers/session/sweep.js';
import type { FileWatchSource } from '../runtime/file-source.js';
import { NODE_LEASE_TIMING } from '../runtime/lease.js';
import type { Manager } from '../runtime/manager.js';
import type { EventLogs } from '../store/eventlog.js';
import { PaneDeaths } from './pane-deaths.js';
import { type Fuse, fuseFiles, startWatchdog } from './watchdog.js';

/** How a node agent was started (`orchctl node --name --label --max-sessions`). */
export interface NodeAgentOptions {
  name?: string;
  labels?: Record<string, string>;
  maxSessions?: number;
  /** `--rename-node`: take over the runs of the name this home ran under before (app/node-home.ts). */
  rename?: boolean;
}

/** The fuse trips this long after the heartbeat's last touch beyond the lease: well before the 40 s grace. */
export const FUSE_MARGIN_SECONDS = 5;

/** The fuse for this home, when runs may be started elsewhere after this node is lost. */
export const fuseFor = (home: string): Fuse => ({
  ...fuseFiles(home),
  seconds: NODE_LEASE_TIMING.seconds + FUSE_MARGIN_SECONDS,
});

/** The controllers whose keys are sessions: a node reconciles only those bound to it. */
const SESSION_KEYED = new Set(['agentsession', 'judge', 'assessment']);

/** The manager's `accepts`: a session-keyed controller acts only on sessions bound to `node` (or gone). */
export function acceptsFor(mgr: () => Manager, node: string) {
  return (controller: string, key: string): boolean => {
    if (!SESSION_KEYED.has(controller)) return true;
    const slash = key.indexOf('/');
    const s = mgr()
      .informer('AgentSession')
      .get(key.slice(0, slash), key.slice(slash + 1));
    return !s || boundTo(s, node);
  };
}

export interface NodeAgentDeps extends ControllerServices {
  name: string;
  options: NodeAgentOptions;
  fuse?: Fuse;
  versions: { node: string; tmux: string; git: string; orchctl: string };
  startTime: string;
  gcOrphans: boolean;
  workers: number;
  resyncMs: number;
  observeEveryMs: number;
  audit: AuditLog;
  logs: EventLogs;
  feed: AgentFeed;
  feedFiles: FileWatchSource;
  metrics: ControllerMetrics;
  /** Retention of run directories on this node's disk (api/retention.ts). */
  retention?: Partial<Retention>;
}

/** Registers the node agent's controllers on `mgr` (whose lease is the node lease). */
export function setupNodeAgent(mgr: Manager, d: NodeAgentDeps): void {
  // First of the synced hooks: nothing of this node acts before its stale runs are gone.
  mgr.onSynced('stale runs', async () => void (await sweep(mgr, d)));
  const node = setupNode(mgr, {
    ...d,
    versions: d.versions,
    controller: { holderIdentity: mgr.identity, pid: process.pid, startTime: d.startTime },
    gcOrphans: d.gcOrphans,
    nodeName: d.name,
    labels: d.options.labels,
    maxSessions: d.options.maxSessions,
  });
  // The heartbeat is fresh by now (the lease was just won); the watchdog an earlier agent left exits.
  if (d.fuse) {
    const pid = startWatchdog(d.fuse, d.tmux.socket);
    d.log.info(`node ${d.name}: watchdog ${pid} guards the runs on tmux socket ${d.tmux.socket}`);
  }
  const paneDeaths = new PaneDeaths(d.tmux, d.panes);
  mgr.add(paneDeaths);
  setupSession(mgr, {
    ...d,
    workers: d.workers,
    resyncMs: d.resyncMs,
    observeEveryMs: d.observeEveryMs,
    nodeUnschedulable: () => node.unschedulable(),
    hookCommand: [process.execPath, path.join(packageRoot(), 'bin', 'orchctl'), 'hook'],
    paneDeaths,
    metrics: d.metrics.runs,
    node: d.name,
  });
  setupJudge(mgr, { ...d, metrics: d.metrics.judge });
  setupAssessment(mgr, { ...d, metrics: d.metrics.assessment });
  mgr
    .controller('run-retention', { workers: 1 })
    .every(SWEEP_MS, () => [RUN_DIRS])
    .complete(
      new RunDirRetention({
        store: mgr.store,
        home: d.home,
        sessions: mgr.informer('AgentSession'),
        retention: d.retention,
      }),
    );
}

/** The node lease's hooks: the heartbeat file (multi-node mode: `fuse` says) and the sweep after a lapse. */
export function nodeLeaseHooks(
  mgr: () => Manager,
  d: Pick<NodeAgentDeps, 'name' | 'log' | 'tmux' | 'panes'> & { fuse: () => Fuse | undefined },
) {
  const hold = { held: false, busy: undefined as Promise<void> | undefined };
  return {
    onRenewed: () => {
      hold.held = false;
      const fuse = d.fuse();
      if (fuse) fs.writeFileSync(fuse.heartbeatFile, `${new Date().toISOString()}\n`);
    },
    onLapse: async () => {
      const m = mgr();
      await sweep(m, { ...d, storeUid: await m.store.uid() });
    },
    onStoreUnavailable: () => {
      if (!d.fuse() || hold.busy) return;
      hold.busy = holdFuse(mgr(), d, hold).finally(() => (hold.busy = undefined));
    },
  };
}

/**
 * The renewal failed: the fuse holds (the heartbeat is touched) while the store says that nobody at
 * all can write — every etcd member down or without a leader — since then no control plane can
 * move a session either and hanging up the runs would only kill work (issue 26 item 1). A member
 * that does not answer may be on the far side of a partition from a cluster that can still act:
 * then nothing is touched and the fuse fires as before. A stopped (SIGSTOP) agent touches nothing.
 */
async function holdFuse(
  m: Manager,
  d: { name: string; log: NodeAgentDeps['log']; fuse: () => Fuse | undefined },
  hold: { held: boolean },
): Promise<void> {
  const fuse = d.fuse();
  if (!fuse || !m.store.cannotCommit) return;
  let none = false;
  try {
    none = await m.store.cannotCommit();
  } catch {
    none = false;
  }
  if (!none) {
    if (hold.held) d.log.warn(`node ${d.name}: the store may be writable elsewhere; the fuse no longer holds`);
    hold.held = false;
    return;
  }
  fs.writeFileSync(fuse.heartbeatFile, `${new Date().toISOString()}\n`);
  if (!hold.held) d.log.warn(`node ${d.name}: no etcd member has a leader; the fuse holds (nobody can move a session)`);
  hold.held = true;
}

async function sweep(
  mgr: Manager,
  d: Pick<NodeAgentDeps, 'name' | 'tmux' | 'panes' | 'storeUid' | 'log'>,
): Promise<number> {
  const n = await sweepStaleRuns({
    store: mgr.store,
    tmux: d.tmux,
    panes: d.panes,
    node: d.name,
    storeUid: d.storeUid,
    log: d.log,
  });
  if (n) d.log.info(`node ${d.name}: killed ${n} stale run${n === 1 ? '' : 's'} before reconciling`);
  return n;
}
