/**
 * The orchctl process (`orchctl controller`, `orchctl node`): the composition root. It builds the
 * store, the observers and the services the reconcilers share, and one manager per role — the
 * control plane (control-plane.ts, leader-elected on the controller lease) and the node agent
 * (node-agent.ts, under its node lease) — sharing one store handle and one informer per kind.
 * `orchctl controller` runs both (a single host works as before); `--no-node` only the control
 * plane; `orchctl node` only a node agent. Each reconciler's setup() declares its own controller
 * and what wakes it (reconcilers/<name>/setup.ts). Runs until stop() (or one pass with --once).
 * Crash-only: nothing here needs a clean shutdown to be correct; a restarted process adopts what
 * runs. docs/multi-host.md says what runs where and why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatDuration } from '../api/duration.js';
import { describeChoice } from '../config/config-location.js';
import { orchctlHome } from '../config/paths.js';
import { EventRecorder } from '../client/events.js';
import { ControllerMetrics } from '../metrics/index.js';
import { AgentFeed } from '../observers/agent-feed.js';
import { AuditLog } from '../observers/audit.js';
import { GitObserver } from '../observers/git.js';
import { type HostSnapshot, hostSnapshot } from '../observers/host.js';
import { PaneObserver } from '../observers/panes.js';
import { Tmux } from '../observers/tmux.js';
import { checkGrace, nodeLeaseName } from '../reconcilers/nodelifecycle/plan.js';
import type { ControllerServices } from '../reconcilers/services.js';
import { FileWatchSource } from '../runtime/file-source.js';
import { BurstReclaimer } from '../runtime/heap-reclaim.js';
import {
  CONTROLLER_LEASE,
  CONTROLLER_LEASE_TIMING,
  controllerLeaseTiming,
  holderIdentity,
  NODE_LEASE_TIMING,
} from '../runtime/lease.js';
import type { Logger } from '../runtime/log.js';
import { Manager, type Readiness } from '../runtime/manager.js';
import { DEFAULT_SHUTDOWN_GRACE_MS } from '../runtime/shutdown.js';
import { EventLogs } from '../store/eventlog.js';
import { storeFor, storeTarget } from '../store/open.js';
import type { Store } from '../store/store.js';
import { ValidatingStore } from '../client/validating-store.js';
import { DEFAULT_RETENTION, type Retention } from '../api/retention.js';
import { setupControlPlane } from './control-plane.js';
import { acceptsFor, fuseFor, type NodeAgentOptions, nodeLeaseHooks, setupNodeAgent } from './node-agent.js';
import { claimHome, defaultNodeName } from './node-home.js';
import { LeaderStore, NodeStore } from './role-stores.js';

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
  /** Retention of what grows with time (`--event-ttl`… flags; api/retention.ts). */
  retention?: Partial<Retention>;
  /** Signed approve/reject links in a pending Decision's notification (`--console-url`, `--link-ttl`). */
  actionLinks?: { base: URL; ttlMs: number };
  /** Kill tmux sessions on the socket that this store cannot account for (orphans). */
  gcOrphans?: boolean;
  /** The control plane (default true; `orchctl node` runs without one). */
  controlPlane?: boolean;
  /** This process's node agent (default: one, named as this home was first started); false: none (--no-node). */
  node?: NodeAgentOptions | false;
  /** From a lost node's last renewal to moving its sessions (control plane; default 40 s). */
  nodeGraceMs?: number;
  /** The controller lease, whole seconds (`--leader-lease`, checked by the CLI; default 4). */
  leaderLeaseSeconds?: number;
  /** How long a stop lets the work in flight finish (`--shutdown-grace`; runtime/shutdown.ts). */
  shutdownGraceMs?: number;
  /** orchctl's version, as the Node reports it. */
  version: string;
  log: Logger;
}

export class ControllerApp {
  readonly metrics: ControllerMetrics;
  /** The control plane's manager, when this process runs one; it owns the store and the informers. */
  private readonly cp?: Manager;
  /** The node agent's manager, when this process runs one. */
  private readonly nodeMgr?: Manager;
  private readonly nodeName?: string;
  /** The store as such (the roles write through their fenced views). */
  private readonly store: Store;
  private readonly identity: string;
  private readonly home: string;
  private readonly where: { home: string; context?: string };
  private readonly tmux: Tmux;
  private readonly panes: PaneObserver;
  private readonly git = new GitObserver();
  /** Per-session event logs (written by this process's node agent only while it holds its lease). */
  private readonly logs: EventLogs;
  private readonly feedFiles = new FileWatchSource();
  private hostCache?: { at: number; snap: HostSnapshot };
  private stopping?: Promise<void>;

  /** The session controller's loop metrics (the others' are not exported). */
  private instrument(name: string) {
    const m = this.metrics.runtime;
    return name === m.controller
      ? {
          queue: m.queueHooks,
          reconcile: m.controllerHooks,
          maxConcurrentReconciles: (n: number) => m.setMaxConcurrentReconciles(n),
        }
      : undefined;
  }

  constructor(private readonly opts: ControllerAppOptions) {
    const badGrace = opts.nodeGraceMs === undefined ? undefined : checkGrace(opts.nodeGraceMs);
    if (badGrace) throw new Error(`--node-lost-grace: ${badGrace}`);
    this.home = opts.home ? path.resolve(opts.home) : orchctlHome();
    fs.mkdirSync(this.home, { recursive: true, mode: 0o700 });
    this.where = { home: this.home, context: opts.context };
    // The observe tick's list-panes through one control-mode client (observers/tmux-control.ts).
    const socket = opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl';
    this.tmux = new Tmux(socket, 'tmux', { controlClient: true });
    this.panes = new PaneObserver(this.tmux);
    // Every spec write of every reconciler is checked against its CRD and admission (one validating client).
    const store = new ValidatingStore(storeFor(this.where));
    this.store = store;
    const node = opts.node === false ? undefined : (opts.node ?? {});
    this.nodeName = node ? (node.name ?? defaultNodeName(this.home)) : undefined;
    const identity = holderIdentity(this.nodeName);
    this.identity = identity;
    // A control plane without a node agent touches no tmux: no socket to name.
    const describe = `store ${describeChoice(this.where)}${node ? `, tmux socket ${this.tmux.socket}` : ''}`;
    const instrument = (name: string) => this.instrument(name);
    const leading = (on: boolean) => this.metrics.runtime.setLeader(on);
    if (opts.controlPlane !== false)
      this.cp = new Manager({
        store: new LeaderStore(store, { lease: CONTROLLER_LEASE, holder: identity }),
        identity,
        lease: {
          name: CONTROLLER_LEASE,
          timing: opts.leaderLeaseSeconds ? controllerLeaseTiming(opts.leaderLeaseSeconds) : CONTROLLER_LEASE_TIMING,
          what: 'controller',
          // After a suspend the embedded node renews first: node lifecycle must not judge its own host lost.
          onLapse: async () => this.nodeMgr?.held(),
        },
        log: opts.log,
        once: opts.once,
        describe,
        onLeading: leading,
        instrument,
        alsoBusy: () => !!this.nodeMgr?.busy(),
        shutdownGraceMs: opts.shutdownGraceMs,
      });
    if (this.nodeName) {
      const name = this.nodeName;
      const hooks = nodeLeaseHooks(() => this.nodeMgr!, {
        name,
        fuse: () => this.fuse(),
        log: opts.log,
        tmux: this.tmux,
        panes: this.panes,
      });
      this.nodeMgr = new Manager({
        store: new NodeStore(store, name),
        identity,
        log: opts.log,
        once: opts.once,
        describe: this.cp ? undefined : describe,
        lease: { name: nodeLeaseName(name), timing: NODE_LEASE_TIMING, what: `node agent ${name}`, ...hooks },
        informers: this.cp?.sharedInformers,
        accepts: acceptsFor(() => this.nodeMgr!, name),
        ...(this.cp ? {} : { onLeading: leading }),
        instrument,
        alsoBusy: () => !!this.cp?.busy(),
        shutdownGraceMs: opts.shutdownGraceMs,
      });
    }
    const any = (this.cp ?? this.nodeMgr)!;
    // Built before a lease is won: a standby serves /metrics too.
    this.metrics = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: this.cp ? CONTROLLER_LEASE : nodeLeaseName(this.nodeName!),
      sessions: any.informer('AgentSession'),
      nodes: any.informer('Node'),
      notificationChannels: any.informer('NotificationChannel'),
      autopilots: any.informer('Autopilot'),
      decisions: any.informer('Decision'),
      projects: any.informer('Project'),
      pipelines: any.informer('Pipeline'),
      policies: any.informer('SessionPolicy'),
    });
    // The node agent's logs, each cut past --event-log-max-bytes (api/retention.ts).
    const maxBytes = opts.retention?.eventLogMaxBytes ?? DEFAULT_RETENTION.eventLogMaxBytes;
    this.logs = new EventLogs(this.home, { maxBytes });
    if (this.nodeMgr) {
      this.nodeMgr.add(this.feedFiles);
      this.nodeMgr.onShutdown(() => this.logs.closeAll());
    }
    this.releaseHeapAfterBursts();
  }

  /**
   * The heap a burst committed (1000 launches: ~130 MB for a ~45 MB live heap) is given back once the
   * work of both roles has drained, not 25–35 s later by V8 (runtime/heap-reclaim.ts). Run by the node
   * agent's manager when there is one: it does the launches, and a standby control plane runs nothing.
   */
  private releaseHeapAfterBursts(): void {
    const roles = [this.cp, this.nodeMgr].filter((m): m is Manager => !!m);
    const work = {
      reconciled: () => roles.reduce((n, m) => n + m.reconciled(), 0),
      waiting: () => roles.reduce((n, m) => n + m.waiting(), 0),
    };
    (this.nodeMgr ?? this.cp)!.add(new BurstReclaimer(work, this.opts.log));
  }

  /** /readyz: the control plane's (leading, caches filled), else the node agent's. */
  readiness(): Readiness {
    return (this.cp ?? this.nodeMgr)!.readiness();
  }

  /**
   * Waits for each role's lease, then runs until stop() (with --once: until every role's pass is
   * done). A role that stops on its own (its lease lost) stops the process.
   */
  async run(): Promise<void> {
    // Before any lease or sweep: a home whose runs belong to another node name is not taken over
    // under this one unless asked (--rename-node), since the sweep would kill them (node-home.ts).
    if (this.nodeName)
      await claimHome({
        home: this.home,
        socket: this.tmux.socket,
        name: this.nodeName,
        rename: this.opts.node ? !!this.opts.node.rename : false,
        store: this.store,
        panes: this.panes,
        identity: this.identity,
        log: this.opts.log,
      });
    // The tmux server may predate this process (and hold its starter's environment): clean it now,
    // before any launch.
    if (this.nodeMgr) await this.tmux.scrubEnvironment();
    const roles = [this.cp?.run(() => this.setupControlPlane()), this.nodeMgr?.run(() => this.setupNodeAgent())].filter(
      (r): r is Promise<void> => !!r,
    );
    try {
      await Promise.all(roles.map((r) => r.then(() => (this.opts.once ? undefined : this.stop()))));
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  /**
   * Idempotent; every caller waits for the whole shutdown (the leases released, the event logs and
   * the store closed). Bounded: both roles take no new work at once, the work in flight of both gets
   * one grace (--shutdown-grace), and past it the process goes on without it — one error line names
   * what was still running, and the exit code is 1. The next start adopts what runs and converges.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const roles = [this.nodeMgr, this.cp].filter((m): m is Manager => !!m);
      for (const m of roles) m.quiesce();
      const grace = this.opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
      const at = Date.now() + grace;
      const finished = await Promise.all(roles.map((m) => m.finishInFlight(at)));
      if (finished.includes(false)) {
        const running = roles.flatMap((m) => m.stillRunning());
        this.opts.log.error(
          `shutdown: the ${formatDuration(grace)} grace ran out; exiting without what was still running ` +
            `(the next start adopts it): ${running.join('; ') || 'nothing named'}`,
        );
        process.exitCode = 1;
      }
      // The manager that owns the store (the control plane's, when there is one) stops last.
      if (this.cp) await this.nodeMgr?.stop();
      await (this.cp ?? this.nodeMgr)!.stop();
      this.tmux.close();
    })();
    return this.stopping;
  }

  /** Multi-node mode (an `orchctl node`, or any process on etcd): the runs' self-fencing fuse is on. */
  private fuse() {
    if (this.cp && !this.multiNodeStore) return undefined;
    return fuseFor(this.home);
  }

  /** Set once the store is known: a store other than SQLite may have other nodes. */
  private multiNodeStore = false;

  private async services(mgr: Manager, component: string): Promise<ControllerServices> {
    const log = this.opts.log;
    return {
      home: this.home,
      log,
      recorder: new EventRecorder(mgr.store, component, undefined, (m) => log.warn(m)),
      tmux: this.tmux,
      panes: this.panes,
      git: this.git,
      host: () => this.host(),
      storeUid: await mgr.store.uid(),
    };
  }

  /** Once leading: the control plane's services and controllers. */
  private async setupControlPlane(): Promise<void> {
    const mgr = this.cp!;
    const o = this.opts;
    setupControlPlane(mgr, {
      ...(await this.services(mgr, 'orchctl-controller')),
      metrics: this.metrics,
      manifests: o.manifests,
      eventTtlMs: o.eventTtlMs,
      retention: o.retention,
      nodeGraceMs: o.nodeGraceMs,
      actionLinks: o.actionLinks,
    });
  }

  /** Once the node lease is held: the node agent's services and controllers. */
  private async setupNodeAgent(): Promise<void> {
    const mgr = this.nodeMgr!;
    const o = this.opts;
    this.multiNodeStore = (await storeTarget(this.where)).location.backend !== 'sqlite';
    const [tmuxVersion, gitVersion] = await Promise.all([
      this.tmux.version().catch(() => 'not found'),
      this.git.version().catch(() => 'not found'),
    ]);
    const fuse = this.fuse();
    // The heartbeat the fuse watches exists before the first run is launched under it.
    if (fuse) mgr.lease.onRenewed?.();
    setupNodeAgent(mgr, {
      ...(await this.services(mgr, 'orchctl-node')),
      name: this.nodeName!,
      options: (o.node || {}) as NodeAgentOptions,
      fuse,
      versions: { node: process.version, tmux: tmuxVersion, git: gitVersion, orchctl: o.version },
      startTime: new Date().toISOString(),
      gcOrphans: !!o.gcOrphans,
      workers: o.workers ?? 16,
      resyncMs: o.resyncMs ?? 30_000,
      observeEveryMs: o.observeEveryMs ?? 5000,
      audit: new AuditLog(this.home),
      logs: this.logs,
      feed: new AgentFeed(),
      feedFiles: this.feedFiles,
      metrics: this.metrics,
      retention: o.retention,
    });
  }

  private host(): HostSnapshot {
    if (!this.hostCache || Date.now() - this.hostCache.at > 2000)
      this.hostCache = { at: Date.now(), snap: hostSnapshot(this.home) };
    return this.hostCache.snap;
  }
}
