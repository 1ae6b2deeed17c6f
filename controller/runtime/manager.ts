/**
 * The manager, in controller-runtime's mould. It owns the store handle, the leader lease and one
 * informer per kind (shared by every controller that reads or watches that kind), and runs the
 * controllers registered with it. It knows no reconciler: each reconciler's `setup(mgr, deps)`
 * registers a named controller and says there what wakes it, e.g.
 *
 *   mgr.controller('judge', { workers: 2 })
 *     .for('AgentSession')                          // a session changed: its own key
 *     .owns('Evaluation', (e) => [sessionKeyOf(e)]) // one of its Evaluations changed: the owner's key
 *     .watches(source, (event) => keys)             // anything else that says "look now"
 *     .every(resyncMs, allSessions, { atStart: true })
 *     .complete(reconciler);
 *
 * run(): wait for the lease (standing by while another live controller holds it), let the caller
 * register its controllers, fill every informer cache, run the onSynced hooks, start the
 * controllers and queue the atStart keys; then, with --once, wait until every queue is idle and
 * every inFlight probe says 0, run the onDrained hooks and return; otherwise start the periodic
 * sources and the runnables and return when stop() is called. Watches say "look at this key now";
 * what to do is decided by the reconciler from the whole object.
 *
 * One manager per role of a process (app/): the control plane's holds the controller lease, a
 * node agent's its node lease. Two managers of one process (a controller with its embedded node)
 * share one store handle and one informer per kind (`informers`); the one that owns them closes
 * them. A lease not renewed within its duration has lapsed (the process was stopped, or cut off
 * from the store): before any controller of the role reconciles again, the lease is taken back
 * and `onLapse` runs (the node agent kills its stale runs there).
 *
 * stop() is bounded (runtime/shutdown.ts): no new work at once (quiesce()), the work in flight
 * until the grace runs out (finishInFlight(), the lease still renewed), then the lease released,
 * the shutdown hooks run and the store closed whether it finished or not.
 */
import { isApiError } from '../api/errors.js';
import type { Store } from '../store/store.js';
import {
  type BuilderContext,
  ControllerBuilder,
  enqueueAccepted,
  type Instrumentation,
  type ReconcileOutcomes,
  type Registration,
} from './builder.js';
import type { Reconciler } from './controller.js';
import { Informer } from './informer.js';
import { acquireLease, CONTROLLER_LEASE, CONTROLLER_LEASE_TIMING, holderIdentity, type LeaseTiming } from './lease.js';
import type { Logger } from './log.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, settlesBy } from './shutdown.js';
import { WorkQueue } from './workqueue.js';

export { type EventSource, type ObjectMapping, queueKey } from './builder.js';

/** A long-running part of the process: started once the controllers run (never with --once), always stopped. */
export interface Runnable {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

export interface ManagerOptions {
  /** Owned from here on: closed by stop(). */
  store: Store;
  log: Logger;
  /** One pass and return (needs the lease like a long run; refuses while another controller holds it). */
  once?: boolean;
  /** What the "acquired the lease" line says about this process (its store, its tmux socket). */
  describe?: string;
  /** Leading (after the lease is won) and no longer leading (on stop). */
  onLeading?(leading: boolean): void;
  /** Metrics hooks for a controller by name, if it has any. */
  instrument?(controller: string): Instrumentation | undefined;
  /** The lease this manager's controllers run under (default: the controller lease, 15 s, renewed every 2 s). */
  lease?: RoleLease;
  /** This process as a lease holder (default holderIdentity()). */
  identity?: string;
  /** The informers of the process, when another manager shares them (their owner stops them, closes the store). */
  informers?: Informers;
  /** Whether a controller reconciles `key` now (a node agent: only sessions bound to it); false skips it. */
  accepts?(controller: string, key: string): boolean;
  /** --once: work of another manager of this process that the drain waits for too. */
  alsoBusy?(): boolean;
  /** How long stop() lets the work in flight finish (default 30 s; runtime/shutdown.ts). */
  shutdownGraceMs?: number;
}

/** A role's lease and what happens around it. */
export interface RoleLease {
  name: string;
  timing: LeaseTiming;
  /** What holds it, in logs and /readyz ("controller", "node agent n1"). */
  what: string;
  /** After every successful acquisition and renewal (a node agent's heartbeat file). */
  onRenewed?(): void;
  /** The lease had lapsed and is held again: runs before any controller of the role reconciles. */
  onLapse?(): Promise<void>;
  /** A renewal failed because the store did not answer (a node agent: hold the fuse if no one can write). */
  onStoreUnavailable?(): void;
}

const CONTROLLER_ROLE: RoleLease = { name: CONTROLLER_LEASE, timing: CONTROLLER_LEASE_TIMING, what: 'controller' };

/** One informer (cache + watch) per kind, shared by the managers of a process; each is started once. */
export class Informers {
  private readonly byKind = new Map<string, { informer: Informer; started?: Promise<void> }>();
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /**
   * The informer of `kind`, typed as that kind's: a decode point — the registry files each informer
   * under the kind it was made for.
   */
  get<K extends string>(kind: K): Informer<K> {
    let e = this.byKind.get(kind);
    if (!e) {
      e = { informer: new Informer<string>(this.store, kind, (m) => this.log.warn(m)) };
      this.byKind.set(kind, e);
    }
    return e.informer as Informer<K>;
  }

  /** Whether the informer of `kind` was started. */
  started(kind: string): boolean {
    return !!this.byKind.get(kind)?.started;
  }

  /** Starts those not started yet; resolves when every cache is filled. */
  async start(): Promise<void> {
    await Promise.all([...this.byKind.values()].map((e) => (e.started ??= e.informer.start())));
  }

  /** Whether every started cache holds what the store holds now (Informer.caughtUp). */
  async caughtUp(): Promise<boolean> {
    const started = [...this.byKind.values()].filter((e) => e.started);
    for (const e of started) if (!(await e.informer.caughtUp())) return false;
    return true;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const e of this.byKind.values()) e.informer.stop();
  }
}

/** /readyz's answer. */
export interface Readiness {
  ready: boolean;
  reason: string;
}

interface Hook {
  what: string;
  fn: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The store did not answer (timed out, no member, no leader): a reason to wait and retry, not to exit. */
function isStoreUnavailable(e: unknown): boolean {
  return isApiError(e) && (e.reason === 'Timeout' || e.reason === 'Unavailable');
}

export class Manager {
  readonly store: Store;
  readonly log: Logger;
  readonly identity: string;
  readonly lease: RoleLease;
  private readonly informers: Informers;
  /** Whether this manager owns the store and the informers (closes and stops them). */
  private readonly owner: boolean;
  /** When the lease was last acquired or renewed (this process's clock, ms). */
  private renewedAt = 0;
  /** Taking a lapsed lease back (onLapse included): every reconcile of the role waits for it. */
  private recovering?: Promise<void>;
  private readonly registrations: Registration[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly synced: Hook[] = [];
  private readonly drained: Hook[] = [];
  private readonly shutdownHooks: (() => void | Promise<void>)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  /** The lease's renewal: kept while the work in flight finishes, so that its writes still count. */
  private renewal?: NodeJS.Timeout;
  /** The renewal under way: the release waits for it, or it would take the lease back after. */
  private renewing?: Promise<void>;
  /** Whether the work in flight finished in time (set by the first finishInFlight()). */
  private finishing?: Promise<boolean>;
  /** What of the shutdown is still running: a controller's name, or a runnable's or hook's. */
  private readonly unfinished = new Set<string>();
  private stopped = false;
  private leading = false;
  private cachesFilled = false;
  /** Since when (this process's clock, ms) and why the store has not answered this role's lease calls. */
  private storeDown?: { since: number; why: string };
  /** When the store last came back after this role could not write to it (an outage, a lapsed lease). */
  private storeBackAt?: number;
  private markStopped!: () => void;
  /** Resolves when stop() is called: run() returns then. */
  private readonly stoppedPromise = new Promise<void>((resolve) => (this.markStopped = resolve));
  private stopping?: Promise<void>;

  constructor(private readonly opts: ManagerOptions) {
    this.store = opts.store;
    this.log = opts.log;
    this.identity = opts.identity ?? holderIdentity();
    this.lease = opts.lease ?? CONTROLLER_ROLE;
    this.owner = !opts.informers;
    this.informers = opts.informers ?? new Informers(opts.store, opts.log);
  }

  /** The shared informer (cache + watch) of `kind`, created on first use and started by run(). */
  informer<K extends string>(kind: K): Informer<K> {
    const inf = this.informers.get(kind);
    // Asked for late: fill it now. Only then: this is called per key on hot paths (a node's
    // accepts, at every resync of every session), and start() went over every informer each time.
    if (this.cachesFilled && !this.informers.started(kind)) void this.informers.start();
    return inf;
  }

  /** The informers of this process, for another manager to share. */
  get sharedInformers(): Informers {
    return this.informers;
  }

  /** Registers a controller named `name` (its work queue and `workers` workers); declare its watches on the builder. */
  controller(name: string, opts: { workers: number; errors?: ReconcileOutcomes }): ControllerBuilder {
    const instrumentation = this.opts.instrument?.(name);
    const r: Registration = {
      name,
      queue: new WorkQueue(name, undefined, instrumentation?.queue),
      workers: opts.workers,
      errors: opts.errors,
      atStart: [],
      periodic: [],
      ...(this.opts.accepts ? { accepts: (key: string) => this.opts.accepts!(name, key) } : {}),
      inFlight: [],
      onStop: [],
    };
    this.registrations.push(r);
    const ctx = { informer: <K extends string>(kind: K) => this.informer(kind), log: this.log, instrumentation };
    return new GatedBuilder(r, ctx, (rec) => this.gated(name, rec));
  }

  /** The reconciler behind the role's lease: nothing reconciles while a lapsed lease is taken back. */
  private gated(name: string, rec: Reconciler): Reconciler {
    return {
      reconcile: async (key) => {
        await this.held();
        if (this.opts.accepts && !this.opts.accepts(name, key)) return;
        return rec.reconcile(key);
      },
    };
  }

  /** A runnable: started after the controllers (not with --once), stopped on stop() with them. */
  add(r: Runnable): void {
    this.runnables.push(r);
  }

  /** Runs once the caches are filled, before any controller starts (in registration order; a failure is logged). */
  onSynced(what: string, fn: () => Promise<void>): void {
    this.synced.push({ what, fn });
  }

  /** --once: runs after every queue has drained, before run() returns. */
  onDrained(what: string, fn: () => Promise<void>): void {
    this.drained.push({ what, fn });
  }

  /** Runs on stop(), after the lease is released and before the store is closed. */
  onShutdown(fn: () => void | Promise<void>): void {
    this.shutdownHooks.push(fn);
  }

  /**
   * Waits for the lease, then calls `whenLeading` (register controllers there: what they need may
   * depend on leading, e.g. the controller's start time) and runs them. Returns on stop(), or
   * with --once when the pass is done.
   */
  async run(whenLeading?: () => void | Promise<void>): Promise<void> {
    await this.lead();
    if (this.stopped) return;
    this.leading = true;
    this.renewedAt = Date.now();
    this.lease.onRenewed?.();
    this.opts.onLeading?.(true);
    const lease = this.lease.name === CONTROLLER_LEASE ? 'the lease' : `the lease ${this.lease.name}`;
    this.log.info(
      `${this.lease.what} ${this.identity} acquired ${lease}${this.opts.describe ? ` (${this.opts.describe})` : ''}`,
    );
    this.renewal = setInterval(() => {
      this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    }, this.lease.timing.renewMs);
    await whenLeading?.();
    const unfinished = this.registrations.find((r) => !r.controller);
    if (unfinished) throw new Error(`controller ${unfinished.name} was registered without complete(reconciler)`);
    await this.informers.start();
    this.cachesFilled = true;
    if (this.stopped) return;
    for (const h of this.synced) {
      if (this.stopped) return;
      await this.safely(h.what, h.fn);
    }
    // Nothing may start once stop() has run: a timer or file watcher started after it would keep
    // the process alive with its store closed.
    if (this.stopped) return;
    for (const r of this.registrations) r.controller!.start();
    for (const r of this.registrations) for (const keys of r.atStart) enqueueAccepted(r, await keys());

    if (this.opts.once) {
      await this.drain();
      if (this.stopped) return;
      for (const h of this.drained) await this.safely(h.what, h.fn);
      return;
    }
    for (const r of this.registrations) for (const p of r.periodic) this.timers.push(this.periodic(r, p));
    for (const x of this.runnables) {
      if (this.stopped) return;
      await x.start?.();
    }
    await this.stoppedPromise;
  }

  /** A periodic source's timer: one tick at a time; a failing one is logged and the next tick tries again. */
  private periodic(r: Registration, p: Registration['periodic'][number]): NodeJS.Timeout {
    let busy = false;
    return setInterval(() => {
      if (busy) return;
      busy = true;
      Promise.resolve()
        .then(p.keys)
        .then((keys) => enqueueAccepted(r, keys))
        .catch((e) => this.log.error(`${r.name}: periodic keys`, e))
        .finally(() => {
          busy = false;
        });
    }, p.ms);
  }

  /** /readyz: ready only while this process leads and its caches are filled. */
  readiness(): Readiness {
    if (this.stopped) return { ready: false, reason: 'shutting down' };
    const down = this.storeDown;
    const unreachable = down
      ? `the store has not answered for ${Math.round((Date.now() - down.since) / 1000)}s (${down.why}); retrying`
      : undefined;
    if (!this.leading) return { ready: false, reason: unreachable ?? `standing by for the ${this.lease.what} lease` };
    if (unreachable) return { ready: false, reason: unreachable };
    if (!this.cachesFilled) return { ready: false, reason: 'filling the informer caches' };
    return { ready: true, reason: `leading as ${this.identity}` };
  }

  /**
   * Waits for the lease (standby while another live holder has it). A store that does not answer
   * (an outage, a lost quorum) is waited out, with backoff, never a reason to exit: a standby that
   * exits leaves nothing to take over when the store comes back (without a supervisor).
   */
  private async lead(): Promise<void> {
    const { name, timing, what } = this.lease;
    const look = Math.min(2000, timing.renewMs);
    let said = false;
    let backoff = look;
    while (!this.stopped) {
      try {
        if (await acquireLease(this.store, this.identity, timing.seconds, name)) {
          this.storeAnswered();
          return;
        }
        this.storeAnswered();
        backoff = look;
        if (!said) {
          const cur = await this.store.getLease(name);
          const lease = name === CONTROLLER_LEASE ? 'the lease' : `the lease ${name}`;
          this.log.info(`another ${what} (${cur?.holderIdentity}) holds ${lease}; standing by`);
          if (this.opts.once)
            throw new Error(`another ${what} (${cur?.holderIdentity}) is running on this store; --once needs ${lease}`);
          said = true;
        }
      } catch (e) {
        if (this.opts.once || !isStoreUnavailable(e)) throw e;
        this.storeFailed(e, backoff);
        // Back off up to 10 s: a long outage is not hammered, and a store back is noticed within 10 s.
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 10_000);
        continue;
      }
      await sleep(look);
    }
  }

  /** The store answered a lease call: say so once after an outage. */
  private storeAnswered(): void {
    if (!this.storeDown) return;
    this.storeBackAt = Date.now();
    const s = Math.round((Date.now() - this.storeDown.since) / 1000);
    this.log.info(`the store answers again (after ${s}s) for the ${this.lease.what} lease`);
    this.storeDown = undefined;
  }

  /** A lease call failed because the store did not answer: log it (once, then every minute) and keep retrying. */
  private storeFailed(e: unknown, retryMs: number): void {
    const why = (e as Error)?.message ?? String(e);
    const now = Date.now();
    const first = !this.storeDown;
    if (first) this.storeDown = { since: now, why };
    else this.storeDown!.why = why;
    const since = this.storeDown!.since;
    if (first || Math.floor((now - since) / 60_000) !== Math.floor((now - retryMs - since) / 60_000))
      this.log.warn(
        `the store does not answer for the ${this.lease.what} lease (${Math.round((now - since) / 1000)}s): ` +
          `${why}; retrying in ${Math.round(retryMs / 100) / 10}s`,
      );
  }

  /**
   * When this role last regained the store after it could not write to it (its lease calls failing
   * or its lease lapsed), its own clock; undefined if that never happened. Node lifecycle counts no
   * node lost for time before it: nobody could have renewed anything then.
   */
  storeReturnedAt(): number | undefined {
    return this.storeBackAt;
  }

  /** Whether the lease went unrenewed for its whole duration (another holder may have taken over meanwhile). */
  lapsed(now = Date.now()): boolean {
    return this.leading && now - this.renewedAt > this.lease.timing.seconds * 1000;
  }

  /**
   * Resolves when the lease is held: at once while it is renewed in time; after a lapse, once it
   * has been taken back and onLapse has run. Throws when it cannot be (the store is unreachable,
   * or another holder has it: then the process stops).
   */
  held(): Promise<void> {
    if (this.recovering) return this.recovering;
    if (!this.lapsed()) return Promise.resolve();
    this.recovering = this.recover().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  private async recover(): Promise<void> {
    const gap = Math.round((Date.now() - this.renewedAt) / 1000);
    this.log.warn(`the ${this.lease.what} lease ${this.lease.name} was not renewed for ${gap}s; taking it back`);
    if (!(await this.renewOnce())) throw new Error(`lost the lease ${this.lease.name}`);
    this.storeBackAt = Date.now();
    await this.lease.onLapse?.();
  }

  private async renew(): Promise<void> {
    if (this.stopped && !this.renewal) return;
    try {
      // Stopping: no taking a lapsed lease back (and no onLapse sweep) for work that is ending.
      if (this.stopped && (this.recovering || this.lapsed())) return;
      if (this.recovering || this.lapsed()) await this.held();
      else await this.renewOnce();
      this.storeAnswered();
    } catch (e) {
      if (this.stopped) return;
      if (isApiError(e, 'StoreLost')) {
        // Nothing can be written any more: stop (the store's close() then writes nothing and
        // fails with the same error, which the process exits with).
        this.log.error(e.message);
        process.exitCode = 1;
        this.stop().catch(() => undefined);
        return;
      }
      if (isStoreUnavailable(e)) {
        this.storeFailed(e, this.lease.timing.renewMs);
        this.lease.onStoreUnavailable?.();
      } else this.log.error(`could not renew the ${this.lease.what} lease`, e);
    }
  }

  /** One renewal; false (and the process stops) when another holder has the lease. */
  private async renewOnce(): Promise<boolean> {
    const { name, timing, what } = this.lease;
    if (await this.store.tryAcquireLease(name, this.identity, timing.seconds)) {
      this.renewedAt = Date.now();
      this.lease.onRenewed?.();
      return true;
    }
    this.log.error(`lost the ${what} lease to another ${what}; stopping`);
    process.exitCode = 1;
    this.stop().catch(() => undefined); // a failure is run()'s and stop()'s other callers' to report
    return false;
  }

  /** Work queued or in flight (--once drains until there is none, here and in `alsoBusy`). */
  busy(): boolean {
    return this.registrations.some((r) => r.queue.busy() > 0 || r.inFlight.some((count) => count() > 0));
  }

  /** Reconciles finished by this manager's controllers since the start (runtime/heap-reclaim.ts). */
  reconciled(): number {
    return this.registrations.reduce((n, r) => n + r.queue.completed(), 0);
  }

  /** Keys queued and not yet handed to a worker, over this manager's controllers. */
  waiting(): number {
    return this.registrations.reduce((n, r) => n + r.queue.len(), 0);
  }

  /**
   * --once: until nothing is queued or being reconciled, no background work is in flight, and every
   * cache holds what the store holds. Idle queues alone are not the end of the pass: a write's event
   * reaches the handlers after the write returns (SQLite: on the next turn of the event loop; etcd:
   * over the network), and when the scheduler's binding was the last work of the pass, the drain saw
   * idle queues in between and the pass ended with the session bound but never started.
   */
  private async drain(): Promise<void> {
    const busy = () => this.busy() || !!this.opts.alsoBusy?.();
    while (!this.stopped) {
      await sleep(20);
      if (busy()) continue;
      if ((await this.informers.caughtUp()) && !busy()) return;
    }
  }

  private async safely(what: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.log.error(`${what} failed`, e);
    }
  }

  /**
   * Idempotent, and every caller waits for the whole shutdown: a second caller returning early
   * let the process exit before the store was closed (and its WAL checkpointed). The work in
   * flight gets the grace (finishInFlight()); the lease is released and the store closed either way.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /**
   * Takes no new work from now on, at once: every queue shut down (what is queued is state in the
   * store, which the next start reads again), no periodic key, run() returns. Each controller
   * stopped only once the one before it had finished let the others go on working meanwhile — a
   * saturated process went on reconciling for minutes after SIGTERM. The lease is still renewed.
   */
  quiesce(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.markStopped();
    this.opts.onLeading?.(false);
    for (const t of this.timers) clearInterval(t);
    for (const r of this.registrations) r.queue.shutdown();
  }

  /**
   * Stops the runnables and the controllers (their onStop hooks, then their workers) and resolves
   * true when all of that finished, false at `at` (Date.now() ms; default: the grace from the first
   * call) if something had not: stillRunning() says what. The first call's deadline holds.
   */
  finishInFlight(at = Date.now() + (this.opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)): Promise<boolean> {
    this.quiesce();
    this.finishing ??= settlesBy(this.stopWork(), at);
    return this.finishing;
  }

  /** What was still running when finishInFlight() gave up: each controller with the keys it was reconciling. */
  stillRunning(): string[] {
    return [...this.unfinished].map((what) => {
      const keys = this.registrations.find((r) => r.name === what)?.queue.inFlight() ?? [];
      const shown = keys.slice(0, 5).join(', ') + (keys.length > 5 ? ` and ${keys.length - 5} more` : '');
      return keys.length ? `${what} (${shown})` : what;
    });
  }

  /** One step of stopping, counted in `unfinished` until it is done; a failure is logged. */
  private async step(what: string, fn: () => void | Promise<void>): Promise<void> {
    this.unfinished.add(what);
    try {
      await fn();
    } catch (e) {
      this.log.error(`stopping ${what} failed`, e);
    } finally {
      this.unfinished.delete(what);
    }
  }

  /** All at once: one that does not finish holds up none of the others. */
  private async stopWork(): Promise<void> {
    await Promise.all([
      ...this.runnables.map((x) => this.step(x.constructor.name, () => x.stop?.())),
      // A controller's hooks (cancelling what it runs in the background) before its workers are awaited.
      ...this.registrations.map((r) =>
        this.step(r.name, async () => {
          for (const fn of r.onStop) await fn();
          await r.controller?.stop();
        }),
      ),
    ]);
  }

  private async shutdown(): Promise<void> {
    // Some steps await promises no handle keeps alive; without this Node may exit midway,
    // before the store is closed and its WAL checkpointed.
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await this.finishInFlight();
      await this.teardown();
    } finally {
      clearInterval(keepAlive);
    }
  }

  /** After the work in flight (finished or given up): the lease released, the hooks run, the store closed. */
  private async teardown(): Promise<void> {
    clearInterval(this.renewal);
    this.renewal = undefined;
    await this.renewing;
    if (this.owner) this.informers.stop();
    if (this.leading) await this.store.releaseLease(this.lease.name, this.identity).catch(() => undefined);
    for (const fn of this.shutdownHooks) await fn();
    if (this.owner) await this.store.close();
  }
}

/** A builder whose reconciler goes through its manager's gate (the lease held, the key accepted). */
class GatedBuilder extends ControllerBuilder {
  constructor(
    r: Registration,
    ctx: BuilderContext,
    private readonly gate: (rec: Reconciler) => Reconciler,
  ) {
    super(r, ctx);
  }

  override complete(reconciler: Reconciler): void {
    super.complete(this.gate(reconciler));
  }
}
