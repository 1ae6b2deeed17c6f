/**
 * The controller process: wires the store, informers, observers and reconcilers together,
 * holds the leader lease, and runs until SIGINT/SIGTERM (or one pass with --once). Crash-only:
 * nothing here needs a clean shutdown to be correct; a restarted controller adopts what runs.
 */
import chokidar, { type FSWatcher } from 'chokidar';
import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../api/crds.js';
import { isApiError } from '../api/errors.js';
import { readManifests } from '../api/manifest.js';
import { orchctlHome, packageRoot, stateDbPath } from '../api/paths.js';
import type { Resource } from '../api/types.js';
import { applyPrepared, prepareManifests, ValidationFailed } from '../client/apply.js';
import { EventRecorder } from '../client/events.js';
import { ControllerMetrics, type Readiness } from '../metrics/index.js';
import { AgentFeed } from '../observers/agent-feed.js';
import { AuditLog } from '../observers/audit.js';
import { GitObserver } from '../observers/git.js';
import { hostSnapshot, type HostSnapshot } from '../observers/host.js';
import { PaneObserver } from '../observers/panes.js';
import { Tmux } from '../observers/tmux.js';
import { NodeReconciler } from '../reconcilers/node/reconciler.js';
import { ProjectReconciler } from '../reconcilers/project/reconciler.js';
import { ACTIVE_PHASES, type Phase } from '../api/phases.js';
import { SessionReconciler } from '../reconcilers/session/reconciler.js';
import { JudgeReconciler, policyLimiter } from '../reconcilers/judge/reconciler.js';
import { AssessmentReconciler } from '../reconcilers/assessment/reconciler.js';
import { judgeConfigOf } from '../reconcilers/judge/should-judge.js';
import { createBackend, resolveJudgeConfig } from '../llm/index.js';
import { resumeNotes } from '../reconcilers/judge/resume.js';
import type { Evaluation } from '../reconcilers/judge/types.js';
import { sendToSession } from '../reconcilers/session/send.js';
import type { DeliveryResult } from '../agents/delivery.js';
import { EventLogs } from '../store/eventlog.js';
import { Controller } from '../runtime/controller.js';
import { Informer } from '../runtime/informer.js';
import { acquireLease, CONTROLLER_LEASE, holderIdentity } from '../runtime/lease.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/workqueue.js';
import { SqliteStore } from '../store/sqlite.js';
import { ReconcileErrorReporter } from '../runtime/reconcile-errors.js';
import type { Store } from '../store/store.js';
import { orchctlVersion } from './commands/version.js';

export interface ManagerOptions {
  home?: string;
  once?: boolean;
  manifests?: string;
  workers?: number;
  resyncMs?: number;
  observeEveryMs?: number;
  tmuxSocket?: string;
  eventTtlMs?: number;
  /** Kill tmux sessions on the socket that this store cannot account for (orphans). */
  gcOrphans?: boolean;
  log: Logger;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sessionKey = (o: Resource) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Manager {
  readonly store: Store;
  readonly tmux: Tmux;
  readonly git = new GitObserver();
  readonly panes: PaneObserver;
  readonly identity = holderIdentity();
  readonly home: string;
  readonly queue: WorkQueue;
  readonly metrics: ControllerMetrics;
  /** Per-session event logs (written by this process only while it holds the lease). */
  readonly logs: EventLogs;
  readonly feed = new AgentFeed();
  private readonly informers: Record<'sessions' | 'agents' | 'projects' | 'policies' | 'nodes', Informer>;
  private controller?: Controller;
  private reconciler?: SessionReconciler;
  /** The LLM judge: its own queue and workers (keyed by session), fed by sessions and Evaluations. */
  private readonly evaluations: Informer;
  readonly judgeQueue = new WorkQueue('judge');
  private judge?: JudgeReconciler;
  private judgeController?: Controller;
  /** Judgements in flight, controller-wide: the smallest judge.maxConcurrent of any policy, else 2. */
  readonly judgeLimiter = policyLimiter({ list: () => this.informers.policies.list() });
  /** The detector, circuit breaker and checkpoints: a consumer of each session's event log, keyed by session. */
  readonly assessQueue = new WorkQueue('assessment');
  private assessController?: Controller;
  private node?: NodeReconciler;
  private stopped = false;
  private timers: NodeJS.Timeout[] = [];
  private watcher?: FSWatcher;
  /** Hook files and transcripts of live runs: a change brings the session back at once. */
  private feedWatcher?: FSWatcher;
  private readonly watched = new Map<string, string>(); // file → session key
  private hostCache?: { at: number; snap: HostSnapshot };
  private waiter?: ReturnType<Tmux['waitForPaneDied']>;
  private readonly log: Logger;
  private leading = false;
  private synced = false;

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.log;
    this.home = opts.home ? path.resolve(opts.home) : orchctlHome();
    fs.mkdirSync(this.home, { recursive: true, mode: 0o700 });
    this.store = new SqliteStore(stateDbPath({ ...process.env, ORCHCTL_HOME: this.home }));
    this.tmux = new Tmux(opts.tmuxSocket ?? process.env.ORCHCTL_TMUX_SOCKET ?? 'orchctl');
    this.panes = new PaneObserver(this.tmux);
    const inf = (kind: string) => new Informer(this.store, kind, (m) => this.log.warn(m));
    this.informers = {
      sessions: inf('AgentSession'),
      agents: inf('Agent'),
      projects: inf('Project'),
      policies: inf('SessionPolicy'),
      nodes: inf('Node'),
    };
    this.evaluations = inf('Evaluation');
    this.metrics = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: CONTROLLER_LEASE,
      sessions: this.informers.sessions,
      nodes: this.informers.nodes,
    });
    this.queue = new WorkQueue('agentsession', undefined, this.metrics.runtime.queueHooks);
    this.logs = new EventLogs(this.home);
  }

  /**
   * Sends text into a live session through the verified delivery path (the circuit breaker's
   * interventions use this; `orchctl send` calls the same function from its own process).
   */
  async send(key: string, text: string, origin: string): Promise<DeliveryResult> {
    const [namespace, name] = key.split('/');
    const r = await sendToSession(this.store, this.tmux, namespace, name, { text, force: origin === 'intervention' });
    this.log.info(`agentsession ${key}: ${origin} ${r.delivered ? 'delivered' : 'not confirmed'} (${r.message})`);
    return r;
  }

  /** Watches `files` for `key` (chokidar; files that do not exist yet are picked up when created). */
  private watchFeed(key: string, files: string[]): void {
    const fresh = files.filter((f) => this.watched.get(f) !== key);
    if (!fresh.length || this.stopped) return;
    for (const f of fresh) this.watched.set(f, key);
    if (!this.feedWatcher) {
      this.feedWatcher = chokidar.watch(fresh, { ignoreInitial: true, persistent: true });
      this.feedWatcher.on('all', (_ev: string, file: string) => {
        const k = this.watched.get(file);
        if (k) this.queue.add(k);
      });
    } else this.feedWatcher.add(fresh);
  }

  /** Stops watching a session's files once its run is over. */
  private unwatchFeed(key: string): void {
    const files = [...this.watched].filter(([, k]) => k === key).map(([f]) => f);
    for (const f of files) this.watched.delete(f);
    if (files.length) void this.feedWatcher?.unwatch(files);
  }

  private host(): HostSnapshot {
    if (!this.hostCache || Date.now() - this.hostCache.at > 2000)
      this.hostCache = { at: Date.now(), snap: hostSnapshot(this.home) };
    return this.hostCache.snap;
  }

  /** Waits for the lease (standby while another live controller holds it). */
  private async lead(): Promise<void> {
    let said = false;
    while (!this.stopped) {
      if (await acquireLease(this.store, this.identity)) return;
      if (!said) {
        const cur = await this.store.getLease(CONTROLLER_LEASE);
        this.log.info(`another controller (${cur?.holderIdentity}) holds the lease; standing by`);
        if (this.opts.once)
          throw new Error(
            `another controller (${cur?.holderIdentity}) is running on this store; --once needs the lease`,
          );
        said = true;
      }
      await sleep(2000);
    }
  }

  async run(): Promise<void> {
    await this.lead();
    if (this.stopped) return;
    this.leading = true;
    this.metrics.runtime.setLeader(true);
    this.log.info(
      `controller ${this.identity} acquired the lease (store ${stateDbPath({ ORCHCTL_HOME: this.home })}, tmux socket ${this.tmux.socket})`,
    );
    this.timers.push(setInterval(() => void this.renew(), 2000));

    const recorder = new EventRecorder(this.store, 'orchctl-controller', undefined, (m) => this.log.warn(m));
    const storeUid = await this.store.uid();
    const [tmuxVersion, gitVersion] = await Promise.all([
      this.tmux.version().catch(() => 'not found'),
      this.git.version().catch(() => 'not found'),
    ]);
    this.node = new NodeReconciler({
      store: this.store,
      sessions: this.informers.sessions,
      panes: this.panes,
      tmux: this.tmux,
      host: () => this.host(),
      versions: { node: process.version, tmux: tmuxVersion, git: gitVersion, orchctl: orchctlVersion() },
      controller: { holderIdentity: this.identity, pid: process.pid, startTime: new Date().toISOString() },
      recorder,
      log: this.log,
      storeUid,
      gcOrphans: !!this.opts.gcOrphans,
    });
    this.reconciler = new SessionReconciler({
      store: this.store,
      ...this.informers,
      tmux: this.tmux,
      panes: this.panes,
      storeUid,
      git: this.git,
      host: () => this.host(),
      nodeUnschedulable: () => this.node!.unschedulable(),
      recorder,
      audit: new AuditLog(this.home),
      home: this.home,
      log: this.log,
      enqueue: (k) => this.queue.add(k),
      metrics: this.metrics.runs,
      logs: this.logs,
      feed: this.feed,
      hookCommand: [process.execPath, path.join(packageRoot(), 'bin', 'orchctl'), 'hook'],
      watch: (k, files) => this.watchFeed(k, files),
      resumeNotes: (s) => resumeNotes(s, this.evaluations.list(s.metadata.namespace ?? '') as Evaluation[]),
    });
    this.controller = new Controller('agentsession', this.queue, this.reconciler, {
      workers: this.opts.workers ?? 4,
      log: (m, e) => this.log.error(m, e),
      metrics: this.metrics.runtime.controllerHooks,
      errors: new ReconcileErrorReporter({
        store: this.store,
        recorder,
        kind: 'AgentSession',
        cached: (k) => this.informers.sessions.get(k.split('/')[0], k.split('/')[1]),
      }),
    });
    this.metrics.runtime.setMaxConcurrentReconciles(this.opts.workers ?? 4);
    this.judge = new JudgeReconciler({
      store: this.store,
      policies: this.informers.policies,
      evaluations: this.evaluations,
      recorder,
      home: this.home,
      log: this.log,
      enqueue: (k) => this.judgeQueue.add(k),
      limiter: this.judgeLimiter,
      metrics: this.metrics.judge,
    });
    this.judgeController = new Controller('judge', this.judgeQueue, this.judge, {
      workers: 2,
      log: (m, e) => this.log.error(m, e),
    });
    this.informers.sessions.onChange((_t, o) => this.judgeQueue.add(sessionKey(o)));
    const assess = new AssessmentReconciler({
      store: this.store,
      policies: this.informers.policies,
      home: this.home,
      send: (k, text, origin) => this.send(k, text, origin),
      recorder,
      log: this.log,
      metrics: this.metrics.assessment,
      summaryBackend: (policy) => {
        try {
          return createBackend(resolveJudgeConfig(judgeConfigOf(policy)));
        } catch {
          return undefined; // the offline summary stands in
        }
      },
    });
    this.assessController = new Controller('assessment', this.assessQueue, assess, {
      workers: 2,
      log: (m, e) => this.log.error(m, e),
    });
    this.logs.onAppend((k) => this.assessQueue.add(k)); // new events: assess them now
    this.evaluations.onChange((_t, o) => {
      const ref = (o.spec as { sessionRef?: string } | undefined)?.sessionRef;
      if (ref) this.judgeQueue.add(`${o.metadata.namespace ?? ''}/${ref}`);
    });

    // Watches say "look at this key now"; what to do is decided from the whole object.
    this.informers.sessions.onChange((_t, o) => {
      this.queue.add(sessionKey(o));
      // A session that is not (or no longer) running may have freed an admission slot.
      const phase = (o.status as { phase?: Phase } | undefined)?.phase;
      if (!phase || !ACTIVE_PHASES.has(phase)) {
        this.enqueuePending(o.metadata.namespace);
        this.unwatchFeed(sessionKey(o));
      }
    });
    for (const k of ['agents', 'projects', 'policies'] as const)
      this.informers[k].onChange((_t, o) => this.enqueueNamespace(o.metadata.namespace));
    const projects = new ProjectReconciler({ store: this.store, projects: this.informers.projects });
    this.informers.projects.onChange((t, o) => {
      if (t !== 'DELETED') void this.safely('project status', () => projects.reconcile(o));
    });
    await Promise.all([...Object.values(this.informers), this.evaluations].map((i) => i.start()));
    this.synced = true;

    if (this.opts.manifests) await this.applyManifests();
    await this.safely('node status', () => this.node!.reconcile());
    this.controller.start();
    this.judgeController.start();
    this.assessController.start();
    this.enqueueAll();

    if (this.opts.once) {
      await this.drain();
      await this.safely('node status', () => this.node!.reconcile());
      return;
    }
    this.watchPaneDeaths();
    this.timers.push(setInterval(() => this.enqueueAll(), this.opts.resyncMs ?? 30_000));
    // Routine observation of live sessions, all on one tick so they share one tmux snapshot.
    this.timers.push(setInterval(() => this.enqueueActive(), this.opts.observeEveryMs ?? 5000));
    this.timers.push(setInterval(() => void this.safely('node status', () => this.node!.reconcile()), 10_000));
    this.timers.push(setInterval(() => void this.safely('project status', () => projects.reconcileAll()), 10_000));
    this.timers.push(setInterval(() => void this.safely('event cleanup', () => this.expireEvents()), 60_000));
    if (this.opts.manifests) this.watchManifests();
    await this.stoppedPromise;
  }

  private markStopped!: () => void;
  /** Resolves when stop() is called: run() returns then. */
  private readonly stoppedPromise = new Promise<void>((resolve) => (this.markStopped = resolve));

  /** /readyz: ready only while this process leads and its caches are filled. */
  readiness(): Readiness {
    if (this.stopped) return { ready: false, reason: 'shutting down' };
    if (!this.leading) return { ready: false, reason: 'standing by for the controller lease' };
    if (!this.synced) return { ready: false, reason: 'filling the informer caches' };
    return { ready: true, reason: `leading as ${this.identity}` };
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!(await this.store.tryAcquireLease(CONTROLLER_LEASE, this.identity, 15))) {
        this.log.error('lost the controller lease to another controller; stopping');
        process.exitCode = 1;
        await this.stop();
      }
    } catch (e) {
      this.log.error('could not renew the controller lease', e);
    }
  }

  private enqueueAll(): void {
    for (const o of this.informers.sessions.list()) this.queue.add(sessionKey(o));
    for (const o of this.informers.sessions.list()) this.judgeQueue.add(sessionKey(o));
    for (const o of this.informers.sessions.list()) this.assessQueue.add(sessionKey(o));
  }

  private enqueuePending(ns: string | undefined): void {
    for (const o of this.informers.sessions.list(ns ?? '')) {
      const phase = (o.status as { phase?: Phase } | undefined)?.phase;
      if ((phase ?? 'Pending') === 'Pending') this.queue.add(sessionKey(o));
    }
  }

  private enqueueNamespace(ns: string | undefined): void {
    for (const o of this.informers.sessions.list(ns ?? '')) this.queue.add(sessionKey(o));
  }

  /** A pane died or the tmux server went away: look at every live session now. */
  private nudgeActive(): void {
    this.panes.invalidate();
    this.enqueueActive();
  }

  private enqueueActive(): void {
    for (const o of this.informers.sessions.list()) {
      const phase = (o.status as { phase?: Phase } | undefined)?.phase;
      if (phase && (ACTIVE_PHASES.has(phase) || o.metadata.deletionTimestamp)) this.queue.add(sessionKey(o));
    }
  }

  /** `tmux wait-for` on the channel our pane-died hook signals: exits reach status at once. */
  private watchPaneDeaths(): void {
    const loop = async () => {
      let quickFailures = 0;
      while (!this.stopped) {
        const t0 = Date.now();
        this.waiter = this.tmux.waitForPaneDied();
        const r = await this.waiter;
        if (this.stopped) return;
        this.nudgeActive();
        // No server yet (or it just died): don't spin; the first launch starts one.
        if (r.exitCode !== 0 && Date.now() - t0 < 200) await sleep(Math.min(2000, 100 * 2 ** quickFailures++));
        else quickFailures = 0;
      }
    };
    void loop();
  }

  private async applyManifests(): Promise<void> {
    const dir = this.opts.manifests!;
    try {
      const { docs, errors } = readManifests([dir], true);
      if (errors.length) throw new ValidationFailed(errors);
      const prepared = prepareManifests(docs, registry());
      const results = await applyPrepared(this.store, prepared, {});
      const changed = results.filter((r) => r.action !== 'unchanged');
      for (const r of changed) this.log.info(`manifests: ${r.kind.singular}.orchctl.io/${r.name} ${r.action}`);
    } catch (e) {
      if (e instanceof ValidationFailed)
        for (const x of e.errors) this.log.error(`manifests not applied: ${x.message}`);
      else this.log.error(`manifests in ${dir} not applied: ${(e as Error).message}`);
    }
  }

  private watchManifests(): void {
    let timer: NodeJS.Timeout | undefined;
    this.watcher = chokidar.watch(this.opts.manifests!, {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 25 },
    });
    this.watcher.on('all', (_ev: string, file: string) => {
      if (!/\.(ya?ml|json)$/.test(file)) return;
      clearTimeout(timer);
      timer = setTimeout(() => void this.applyManifests(), 150);
    });
  }

  private async expireEvents(ttlMs = this.opts.eventTtlMs ?? 3_600_000): Promise<void> {
    const { items } = await this.store.list('Event');
    const cutoff = Date.now() - ttlMs;
    for (const e of items) {
      if (Date.parse(String(e.lastTimestamp ?? e.metadata.creationTimestamp)) < cutoff)
        await this.store
          .delete({ kind: 'Event', namespace: e.metadata.namespace ?? '', name: e.metadata.name })
          .catch((err) => {
            if (!isApiError(err, 'NotFound')) throw err;
          });
    }
  }

  /** --once: until nothing is queued or being reconciled, and background deliveries are done. */
  private async drain(): Promise<void> {
    await sleep(20);
    while (
      this.queue.busy() > 0 ||
      this.reconciler!.deliveriesInFlight() > 0 ||
      this.judgeQueue.busy() > 0 ||
      (this.judge?.pending ?? 0) > 0 ||
      this.assessQueue.busy() > 0
    )
      await sleep(20);
  }

  private async safely(what: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.log.error(`${what} failed`, e);
    }
  }

  private stopping?: Promise<void>;

  /**
   * Idempotent, and every caller waits for the whole shutdown: a second caller returning early
   * let the process exit before the store was closed (and its WAL checkpointed).
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    // Some steps await promises no handle keeps alive; without this Node may exit midway,
    // before the store is closed and its WAL checkpointed.
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await this.shutdownSteps();
    } finally {
      clearInterval(keepAlive);
    }
  }

  private async shutdownSteps(): Promise<void> {
    this.stopped = true;
    this.markStopped();
    this.metrics.runtime.setLeader(false);
    for (const t of this.timers) clearInterval(t);
    await this.watcher?.close();
    await this.feedWatcher?.close();
    this.waiter?.kill();
    await this.controller?.stop();
    await this.judge?.stop();
    await this.judgeController?.stop();
    await this.assessController?.stop();
    for (const i of [...Object.values(this.informers), this.evaluations]) i.stop();
    if (this.leading) await this.store.releaseLease(CONTROLLER_LEASE, this.identity).catch(() => undefined);
    this.logs.closeAll();
    await this.store.close();
  }
}
