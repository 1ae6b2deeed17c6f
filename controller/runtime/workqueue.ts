/**
 * A keyed, level-triggered work queue with client-go's semantics (util/workqueue):
 *  - a key is queued at most once (dirty set): bursts of events collapse into one reconcile;
 *  - a key being processed is never handed to a second worker; if it is added meanwhile it is
 *    re-queued when the first worker calls done();
 *  - addAfter() schedules a key (the earliest due time wins); addRateLimited() backs off
 *    exponentially per key (5 ms · 2^failures, at most 1000 s) until forget().
 */
export interface QueueMetricsHooks {
  onAdd?(key: string): void;
  onDepth?(depth: number): void;
  onRetry?(key: string): void;
  onGet?(key: string, queuedForSeconds: number): void;
  onDone?(key: string, workedForSeconds: number): void;
}

export class ExponentialRateLimiter {
  private readonly failures = new Map<string, number>();
  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}
  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }
  forget(key: string): void {
    this.failures.delete(key);
  }
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Map<string, number>(); // key -> start time
  private readonly addedAt = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private finished = 0;

  constructor(
    readonly name: string,
    private readonly limiter = new ExponentialRateLimiter(),
    private readonly hooks: QueueMetricsHooks = {},
  ) {}

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.hooks.onAdd?.(key);
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.push(key);
  }

  private push(key: string): void {
    this.addedAt.set(key, performance.now());
    const w = this.waiters.shift();
    if (w) {
      this.take(key);
      w(key);
    } else {
      this.queue.push(key);
      this.hooks.onDepth?.(this.queue.length);
    }
  }

  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    this.hooks.onRetry?.(key);
    const at = Date.now() + delayMs;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delayMs);
    this.timers.set(key, { at, timer });
  }

  addRateLimited(key: string): void {
    this.addAfter(key, this.limiter.when(key));
  }

  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.retries(key);
  }

  private take(key: string): void {
    this.dirty.delete(key);
    this.processing.set(key, performance.now());
    const added = this.addedAt.get(key);
    this.addedAt.delete(key);
    this.hooks.onGet?.(key, added === undefined ? 0 : (performance.now() - added) / 1000);
  }

  /** Next key to work on; resolves undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.queue.length) {
      const key = this.queue.shift()!;
      this.hooks.onDepth?.(this.queue.length);
      this.take(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    const started = this.processing.get(key);
    this.processing.delete(key);
    this.finished++;
    if (started !== undefined) this.hooks.onDone?.(key, (performance.now() - started) / 1000);
    if (this.dirty.has(key) && !this.shuttingDown) this.push(key);
  }

  /** Keys handed out and done since the start (only grows): runtime/heap-reclaim.ts tells a burst by it. */
  completed(): number {
    return this.finished;
  }

  len(): number {
    return this.queue.length;
  }

  /** Keys waiting, being processed or scheduled; zero means idle. */
  pending(): number {
    return this.queue.length + this.processing.size + this.timers.size;
  }

  /** The keys being processed now (what a stop that ran out of time leaves unfinished). */
  inFlight(): string[] {
    return [...this.processing.keys()];
  }

  busy(): number {
    return this.queue.length + this.processing.size;
  }

  /**
   * Stops handing out keys, queued ones included (client-go drains them): what is queued is state in
   * the store, which the next start's resync reads again, and a controller told to stop with 1000
   * launches queued went on starting agents for 20 s after SIGTERM. Keys in flight finish.
   */
  shutdown(): void {
    this.shuttingDown = true;
    this.queue.length = 0;
    this.dirty.clear();
    this.addedAt.clear();
    this.hooks.onDepth?.(0);
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    for (const w of this.waiters.splice(0)) w(undefined);
  }
}
