/**
 * How a reconciler declares its controller (controller-runtime's builder): a named work queue and
 * workers, what wakes it — `for` (an object → its own key), `owns` and `watches` (an object or an
 * event → keys), `every` (periodic keys) — what --once waits for (`inFlight`) and what stop()
 * does first (`onStop`). The manager (manager.ts) starts and stops what is declared here.
 */
import type { ObjectOf } from '../api/kinds.js';
import type { Resource } from '../api/types.js';
import type { WatchEventType } from '../store/store.js';
import { Controller, type ControllerMetricsHooks, type Reconciler } from './controller.js';
import type { Informer } from './informer.js';
import type { Logger } from './log.js';
import type { OwnWrites } from './own-writes.js';
import type { QueueMetricsHooks, WorkQueue } from './workqueue.js';

/** The work-queue key of an object: `namespace/name` (`/name` for a cluster-scoped one). */
export const queueKey = (o: Resource): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Which keys a change to an object (of type T: its kind's, api/kinds.ts; `old`: as it was) brings back. */
export type ObjectMapping<T extends Resource = Resource> = (obj: T, type: WatchEventType, old?: T) => Iterable<string>;

/** Something outside the store that says "look now": a file watcher, a tmux hook, an event log. */
export interface EventSource<E> {
  /** Calls `handler` for every event from now on. */
  subscribe(handler: (event: E) => void): void;
}

/** A controller's reconcile-loop metrics (controller/metrics implements them; the runtime knows no prom-client). */
export interface Instrumentation {
  queue?: QueueMetricsHooks;
  reconcile?: ControllerMetricsHooks;
  maxConcurrentReconciles?(n: number): void;
}

/** Told of every failed and successful reconcile (e.g. runtime/reconcile-errors.ts). */
export interface ReconcileOutcomes {
  failed(key: string, e: unknown): Promise<void>;
  succeeded(key: string): Promise<void>;
}

/** One registered controller: its queue, what feeds it, and what --once and stop() must wait for. */
export interface Registration {
  name: string;
  queue: WorkQueue;
  workers: number;
  errors?: ReconcileOutcomes;
  controller?: Controller;
  atStart: Keys[];
  periodic: { ms: number; keys: Keys }[];
  /** Keys this process acts on (a node: sessions bound to it); others never enter the queue. */
  accepts?: (key: string) => boolean;
  inFlight: (() => number)[];
  onStop: (() => void | Promise<void>)[];
}

/** Keys to queue, found synchronously or after a look (the session observe tick's tmux snapshot). */
type Keys = () => Iterable<string> | Promise<Iterable<string>>;

/** What a builder needs of its manager. */
export interface BuilderContext {
  informer<K extends string>(kind: K): Informer<K>;
  log: Logger;
  instrumentation?: Instrumentation;
}

/**
 * Queues the keys this registration accepts. A node filters here, not only when a key is dequeued:
 * the observe tick lists every live session of the cluster, and queueing the other nodes' too made
 * each node's idle cost scale with the cluster instead of with its own sessions.
 */
export function enqueueAccepted(r: Registration, keys: Iterable<string>): void {
  for (const k of keys) if (!r.accepts || r.accepts(k)) r.queue.add(k);
}

/** How a reconciler declares its controller (controller-runtime's builder). */
export class ControllerBuilder {
  /** Brings a key back (background work a reconcile started has finished). */
  readonly enqueue = (key: string): void => this.r.queue.add(key);

  constructor(
    private readonly r: Registration,
    private readonly mgr: BuilderContext,
  ) {}

  /**
   * Every change to an object of `kind` brings that object's own key; with `ownWrites`, but the echo
   * of a write this controller made through `ownWrites.through(store)` (own-writes.ts).
   */
  for<K extends string>(kind: K, opts: { ownWrites?: OwnWrites } = {}): this {
    const own = opts.ownWrites;
    return this.watches(kind, (o, type, old) => (own?.isEcho(type, o, old) ? [] : [queueKey(o)]));
  }

  /** Every change to an object of `kind` that one of ours owns brings the owner's key (`toOwner`). */
  owns<K extends string>(kind: K, toOwner: ObjectMapping<ObjectOf<K>>): this {
    return this.watches(kind, toOwner);
  }

  /**
   * Changes to objects of a kind, or events from a source, bring the keys `map` returns; `map` gets
   * the kind's type (`watches('Pipeline', (p) => …)`: p is a Pipeline).
   */
  watches<K extends string>(kind: K, map: ObjectMapping<ObjectOf<K>>): this;
  watches<E>(source: EventSource<E>, map: (event: E) => Iterable<string>): this;
  watches<K extends string, E>(
    from: K | EventSource<E>,
    map: ObjectMapping<ObjectOf<K>> | ((event: E) => Iterable<string>),
  ): this {
    const add = (keys: Iterable<string>) => enqueueAccepted(this.r, keys);
    if (typeof from === 'string') {
      const m = map as ObjectMapping<ObjectOf<K>>;
      this.mgr.informer(from).onChange((type, obj, old) => add(m(obj, type, old)));
    } else {
      const m = map as (event: E) => Iterable<string>;
      from.subscribe((event) => add(m(event)));
    }
    return this;
  }

  /**
   * Every `ms` (not with --once) the keys `keys` returns (it may look first: a tick still looking
   * when the next is due skips that one); with `atStart`, also once when the controllers start.
   */
  every(ms: number, keys: Keys, opts: { atStart?: boolean } = {}): this {
    this.r.periodic.push({ ms, keys });
    if (opts.atStart) this.r.atStart.push(keys);
    return this;
  }

  /** Queues `keys` once when the controllers start. */
  atStart(keys: Keys): this {
    this.r.atStart.push(keys);
    return this;
  }

  /** Work a reconcile started in the background: --once also waits until this says 0. */
  inFlight(count: () => number): this {
    this.r.inFlight.push(count);
    return this;
  }

  /** Runs on stop(), before this controller's workers are waited for. */
  onStop(fn: () => void | Promise<void>): this {
    this.r.onStop.push(fn);
    return this;
  }

  /** The reconciler this controller's workers call with each key. */
  complete(reconciler: Reconciler): void {
    const instr = this.mgr.instrumentation;
    this.r.controller = new Controller(this.r.name, this.r.queue, reconciler, {
      workers: this.r.workers,
      log: (m, e) => this.mgr.log.error(m, e),
      metrics: instr?.reconcile,
      errors: this.r.errors,
    });
    instr?.maxConcurrentReconciles?.(this.r.workers);
  }
}
