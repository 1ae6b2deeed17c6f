/**
 * The controller process (`orchctl controller`): the composition root. It builds the manager and
 * the services the reconcilers share, and each reconciler's setup() declares its own controller
 * and what wakes it (reconcilers/<name>/setup.ts). Holds the leader lease and runs until stop()
 * (or one pass with --once). Crash-only: nothing here needs a clean shutdown to be correct; a
 * restarted controller adopts what runs. A later `node` role (one host's runs) goes beside this.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeChoice } from '../api/config-location.js';
import { orchctlHome, packageRoot } from '../api/paths.js';
import { EventRecorder } from '../client/events.js';
import { ControllerMetrics } from '../metrics/index.js';
import { AgentFeed } from '../observers/agent-feed.js';
import { AuditLog } from '../observers/audit.js';
import { GitObserver } from '../observers/git.js';
import { type HostSnapshot, hostSnapshot } from '../observers/host.js';
import { PaneObserver } from '../observers/panes.js';
import { Tmux } from '../observers/tmux.js';
import { setup as setupAssessment } from '../reconcilers/assessment/setup.js';
import { setup as setupAutopilot } from '../reconcilers/autopilot/setup.js';
import { setup as setupHousekeeping } from '../reconcilers/housekeeping/setup.js';
import { setup as setupJudge } from '../reconcilers/judge/setup.js';
import { setup as setupNode } from '../reconcilers/node/setup.js';
import { setup as setupNotifier } from '../reconcilers/notifier/setup.js';
import { setup as setupPipeline } from '../reconcilers/pipeline/setup.js';
import { setup as setupPolicy } from '../reconcilers/policy/setup.js';
import { setup as setupProject } from '../reconcilers/project/setup.js';
import type { ControllerServices } from '../reconcilers/services.js';
import { setup as setupSession } from '../reconcilers/session/setup.js';
import { FileWatchSource } from '../runtime/file-source.js';
import { CONTROLLER_LEASE } from '../runtime/lease.js';
import type { Logger } from '../runtime/log.js';
import { Manager, type Readiness } from '../runtime/manager.js';
import { EventLogs } from '../store/eventlog.js';
import { storeFor } from '../store/open.js';
import { applyManifests, ManifestWatcher } from './manifests.js';
import { PaneDeaths } from './pane-deaths.js';

export interface ControllerAppOptions {
  home?: string;
  /** A context of $ORCHCTL_HOME/config naming the store (else $ORCHCTL_STORE, the current context, the default). */
  context?: string;
  once?: boolean;
  /** A directory of manifests applied at start and whenever a file in it changes. */
  manifests?: string;
  workers?: number;
  resyncMs?: number;
  observeEveryMs?: number;
  tmuxSocket?: string;
  eventTtlMs?: number;
  /** Kill tmux sessions on the socket that this store cannot account for (orphans). */
  gcOrphans?: boolean;
  /** orchctl's version, as the Node reports it. */
  version: string;
  log: Logger;
}

export class ControllerApp {
  readonly metrics: ControllerMetrics;
  private readonly mgr: Manager;
  private readonly home: string;
  private readonly tmux: Tmux;
  private readonly panes: PaneObserver;
  private readonly git = new GitObserver();
  /** Per-session event logs (written by this process only while it holds the lease). */
  private readonly logs: EventLogs;
  private readonly feedFiles = new FileWatchSource();
  private hostCache?: { at: number; snap: HostSnapshot };

  constructor(private readonly opts: ControllerAppOptions) {
    this.home = opts.home ? path.resolve(opts.home) : orchctlHome();
    fs.mkdirSync(this.home, { recursive: true, mode: 0o700 });
    const where = { home: this.home, context: opts.context };
    this.tmux = new Tmux(opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl');
    this.panes = new PaneObserver(this.tmux);
    this.mgr = new Manager({
      store: storeFor(where),
      log: opts.log,
      once: opts.once,
      describe: `store ${describeChoice(where)}, tmux socket ${this.tmux.socket}`,
      onLeading: (leading) => this.metrics.runtime.setLeader(leading),
      instrument: (name) =>
        name === this.metrics.runtime.controller
          ? {
              queue: this.metrics.runtime.queueHooks,
              reconcile: this.metrics.runtime.controllerHooks,
              maxConcurrentReconciles: (n) => this.metrics.runtime.setMaxConcurrentReconciles(n),
            }
          : undefined,
    });
    // Built before the lease is won: a standby serves /metrics too.
    this.metrics = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: CONTROLLER_LEASE,
      sessions: this.mgr.informer('AgentSession'),
      nodes: this.mgr.informer('Node'),
      notificationChannels: this.mgr.informer('NotificationChannel'),
      autopilots: this.mgr.informer('Autopilot'),
      decisions: this.mgr.informer('Decision'),
      projects: this.mgr.informer('Project'),
      pipelines: this.mgr.informer('Pipeline'),
      policies: this.mgr.informer('SessionPolicy'),
    });
    this.logs = new EventLogs(this.home);
    this.mgr.add(this.feedFiles);
    this.mgr.onShutdown(() => this.logs.closeAll());
  }

  /** /readyz: ready only while this process leads and its caches are filled. */
  readiness(): Readiness {
    return this.mgr.readiness();
  }

  /** Waits for the lease, then runs until stop() (with --once: until the pass is done). */
  run(): Promise<void> {
    return this.mgr.run(() => this.setup());
  }

  /** Idempotent; every caller waits for the whole shutdown (the store closed, its WAL checkpointed). */
  stop(): Promise<void> {
    return this.mgr.stop();
  }

  /** Once leading: the shared services, then every reconciler's controller and watches. */
  private async setup(): Promise<void> {
    const { mgr, opts } = this;
    const log = opts.log;
    const storeUid = await mgr.store.uid();
    const [tmuxVersion, gitVersion] = await Promise.all([
      this.tmux.version().catch(() => 'not found'),
      this.git.version().catch(() => 'not found'),
    ]);
    const shared: ControllerServices = {
      home: this.home,
      log,
      recorder: new EventRecorder(mgr.store, 'orchctl-controller', undefined, (m) => log.warn(m)),
      tmux: this.tmux,
      panes: this.panes,
      git: this.git,
      host: () => this.host(),
      storeUid,
    };
    const resyncMs = opts.resyncMs ?? 30_000;
    const manifests = opts.manifests;
    if (manifests) {
      // Before the node's first pass, as the caches fill: what they declare is there from the first reconcile.
      mgr.onSynced('manifests', () => applyManifests(mgr.store, manifests, log));
      mgr.add(new ManifestWatcher(mgr.store, manifests, log));
    }
    const node = setupNode(mgr, {
      ...shared,
      versions: { node: process.version, tmux: tmuxVersion, git: gitVersion, orchctl: opts.version },
      controller: { holderIdentity: mgr.identity, pid: process.pid, startTime: new Date().toISOString() },
      gcOrphans: !!opts.gcOrphans,
    });
    const paneDeaths = new PaneDeaths(this.tmux, this.panes);
    mgr.add(paneDeaths);
    setupSession(mgr, {
      ...shared,
      workers: opts.workers ?? 4,
      resyncMs,
      observeEveryMs: opts.observeEveryMs ?? 5000,
      nodeUnschedulable: () => node.unschedulable(),
      audit: new AuditLog(this.home),
      logs: this.logs,
      feed: new AgentFeed(),
      hookCommand: [process.execPath, path.join(packageRoot(), 'bin', 'orchctl'), 'hook'],
      feedFiles: this.feedFiles,
      paneDeaths,
      metrics: this.metrics.runs,
    });
    setupJudge(mgr, { ...shared, resyncMs, metrics: this.metrics.judge });
    setupAssessment(mgr, { ...shared, resyncMs, logs: this.logs, metrics: this.metrics.assessment });
    setupProject(mgr, { git: shared.git });
    setupPolicy(mgr, { recorder: shared.recorder });
    setupNotifier(mgr, { recorder: shared.recorder, log, metrics: this.metrics.notifications });
    setupHousekeeping(mgr, { eventTtlMs: opts.eventTtlMs });
    setupAutopilot(mgr, { log, metrics: this.metrics.autopilot });
    setupPipeline(mgr, shared);
  }

  private host(): HostSnapshot {
    if (!this.hostCache || Date.now() - this.hostCache.at > 2000)
      this.hostCache = { at: Date.now(), snap: hostSnapshot(this.home) };
    return this.hostCache.snap;
  }
}
