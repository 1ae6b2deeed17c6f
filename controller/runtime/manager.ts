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
 */
import type { Store } from '../store/store.js';
import { ControllerBuilder, type Instrumentation, type ReconcileOutcomes, type Registration } from './builder.js';
import { Informer } from './informer.js';
import { acquireLease, CONTROLLER_LEASE, holderIdentity } from './lease.js';
import type { Logger } from './log.js';
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

export class Manager {
  readonly store: Store;
  readonly log: Logger;
  readonly identity = holderIdentity();
  private readonly informers = new Map<string, Informer>();
  private readonly registrations: Registration[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly synced: Hook[] = [];
  private readonly drained: Hook[] = [];
  private readonly shutdownHooks: (() => void | Promise<void>)[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private leading = false;
  private cachesFilled = false;
  private markStopped!: () => void;
  /** Resolves when stop() is called: run() returns then. */
  private readonly stoppedPromise = new Promise<void>((resolve) => (this.markStopped = resolve));
  private stopping?: Promise<void>;

  constructor(private readonly opts: ManagerOptions) {
    this.store = opts.store;
    this.log = opts.log;
  }

  /** The shared informer (cache + watch) of `kind`, created on first use and started by run(). */
  informer(kind: string): Informer {
    let inf = this.informers.get(kind);
    if (!inf) {
      inf = new Informer(this.store, kind, (m) => this.log.warn(m));
      this.informers.set(kind, inf);
      if (this.cachesFilled) void inf.start(); // asked for late: fill it now
    }
    return inf;
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
      inFlight: [],
      onStop: [],
    };
    this.registrations.push(r);
    return new ControllerBuilder(r, { informer: (kind) => this.informer(kind), log: this.log, instrumentation });
  }

  /** A runnable: started after the controllers (not with --once), stopped on stop() before them. */
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
    this.opts.onLeading?.(true);
    this.log.info(
      `controller ${this.identity} acquired the lease${this.opts.describe ? ` (${this.opts.describe})` : ''}`,
    );
    this.timers.push(setInterval(() => void this.renew(), 2000));
    await whenLeading?.();
    const unfinished = this.registrations.find((r) => !r.controller);
    if (unfinished) throw new Error(`controller ${unfinished.name} was registered without complete(reconciler)`);
    await Promise.all([...this.informers.values()].map((i) => i.start()));
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
    for (const r of this.registrations) for (const keys of r.atStart) for (const k of keys()) r.queue.add(k);

    if (this.opts.once) {
      await this.drain();
      if (this.stopped) return;
      for (const h of this.drained) await this.safely(h.what, h.fn);
      return;
    }
    for (const r of this.registrations)
      for (const p of r.periodic)
        this.timers.push(
          setInterval(() => {
            for (const k of p.keys()) r.queue.add(k);
          }, p.ms),
        );
    for (const x of this.runnables) {
      if (this.stopped) return;
      await x.start?.();
    }
    await this.stoppedPromise;
  }

  /** /readyz: ready only while this process leads and its caches are filled. */
  readiness(): Readiness {
    if (this.stopped) return { ready: false, reason: 'shutting down' };
    if (!this.leading) return { ready: false, reason: 'standing by for the controller lease' };
    if (!this.cachesFilled) return { ready: false, reason: 'filling the informer caches' };
    return { ready: true, reason: `leading as ${this.identity}` };
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

  /** --once: until nothing is queued or being reconciled, and no background work is in flight. */
  private async drain(): Promise<void> {
    const busy = () => this.registrations.some((r) => r.queue.busy() > 0 || r.inFlight.some((count) => count() > 0));
    await sleep(20);
    while (!this.stopped && busy()) await sleep(20);
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
    this.opts.onLeading?.(false);
    for (const t of this.timers) clearInterval(t);
    for (const x of this.runnables) await x.stop?.();
    for (const r of this.registrations) {
      for (const fn of r.onStop) await fn();
      await r.controller?.stop();
    }
    for (const i of this.informers.values()) i.stop();
    if (this.leading) await this.store.releaseLease(CONTROLLER_LEASE, this.identity).catch(() => undefined);
    for (const fn of this.shutdownHooks) await fn();
    await this.store.close();
  }
}
