/**
 * Gives the V8 heap back to the system once a burst of work has drained (issue 29). After 1000
 * sessions are applied at once the live heap is ~45 MB, but V8 keeps what the burst committed
 * (~130 MB: old-space pages half empty, a new space grown to 32 MB) until its memory reducer's
 * compacting collection, which waits for a low allocation rate and came 25–35 s later: RSS sat at
 * 180–220 MB meanwhile against ~135 MB after. Measured alternatives (docs/benchmarks.md): a plain
 * `gc()` (--expose-gc) neither compacts nor shrinks the new space (RSS 218 → 190 MB) and put the
 * reducer off for 40 s more; V8 11.3's gc() options cannot ask for more; heap flags on the command
 * line did not lower the peak. What works is V8's LowMemoryNotification (full collections that
 * compact and shrink the new space: 219 → 136 MB in 0.2 s), which Node reaches only through the
 * inspector protocol's HeapProfiler.collectGarbage on an in-process session (no port is opened).
 *
 * When (BurstTrigger, pure): a tick every second reads how many reconciles the process has finished
 * and how many keys wait in its queues. A tick is busy when keys wait or at least `quietBelow`
 * reconciles finished in it (a few a second — a node's heartbeat, a session's periodic look — are
 * the steady state, not a burst); a burst is a run of busy ticks. Once `settleTicks` quiet ticks
 * follow it, a burst of at least `minReconciles` releases the heap, a smaller one is forgotten (small
 * bursts do not add up across quiet spells), and never twice within `minIntervalMs`. Steady idle
 * never releases; steady heavy work releases at most once per interval, after a quiet spell.
 */
import inspector from 'node:inspector';
import v8 from 'node:v8';
import type { Logger } from './log.js';
import type { Runnable } from './manager.js';

export interface BurstTriggerOptions {
  /**
   * Reconciles finished in one burst for it to release the heap (default 2000: a launch costs about
   * six over the controllers, so ~350 launches at once; the five-minute looks at 1000 idle sessions
   * come ~250 an observe tick, quiet seconds between, and never reach it).
   */
  minReconciles?: number;
  /** A tick with fewer reconciles than this and no key waiting is quiet (default 10; a node's heartbeat: 1 in 2 s). */
  quietBelow?: number;
  /** Quiet ticks after the burst before releasing (default 2: a pass's own follow-up comes first). */
  settleTicks?: number;
  /** No two releases closer than this (default 60 s: at most ~0.4 % of a core at 0.25 s each). */
  minIntervalMs?: number;
}

export const BURST_DEFAULTS = { minReconciles: 2000, quietBelow: 10, settleTicks: 2, minIntervalMs: 60_000 } as const;

/** Decides, tick by tick, when a drained burst should release the heap. No clock of its own. */
export class BurstTrigger {
  private readonly o: Required<BurstTriggerOptions>;
  private lastDone?: number;
  private burst = 0;
  private quiet = 0;
  private releasedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: BurstTriggerOptions = {}) {
    this.o = {
      minReconciles: opts.minReconciles ?? BURST_DEFAULTS.minReconciles,
      quietBelow: opts.quietBelow ?? BURST_DEFAULTS.quietBelow,
      settleTicks: opts.settleTicks ?? BURST_DEFAULTS.settleTicks,
      minIntervalMs: opts.minIntervalMs ?? BURST_DEFAULTS.minIntervalMs,
    };
    for (const [k, v] of Object.entries(this.o))
      if (!Number.isInteger(v) || v < 1) throw new Error(`BurstTrigger: ${k} must be a positive integer, got ${v}`);
  }

  /**
   * One tick: `done`, the reconciles finished so far (a counter that only grows); `waiting`, the keys
   * queued now; `now`, ms. True: release the heap now (it counts as released).
   */
  tick(done: number, waiting: number, now: number): boolean {
    const progress = this.lastDone === undefined ? 0 : Math.max(0, done - this.lastDone);
    this.lastDone = done;
    if (waiting > 0 || progress >= this.o.quietBelow) {
      this.burst += progress;
      this.quiet = 0;
      return false;
    }
    this.quiet++;
    if (this.quiet < this.o.settleTicks) return false;
    if (this.burst < this.o.minReconciles) {
      this.burst = 0;
      return false;
    }
    if (now - this.releasedAt < this.o.minIntervalMs) return false; // kept: released once the interval is over
    this.burst = 0;
    this.releasedAt = now;
    return true;
  }
}

const MB = 2 ** 20;

/**
 * V8's LowMemoryNotification through an in-process inspector session. The session is disconnected
 * on a later turn: disconnecting inside the reply's callback deadlocks Node 20 (the dispatch is
 * still on the stack). Rejects when the inspector is not built in.
 */
export function releaseHeap(): Promise<void> {
  return new Promise((resolve, reject) => {
    const session = new inspector.Session();
    try {
      session.connect();
    } catch (e) {
      reject(e);
      return;
    }
    session.post('HeapProfiler.collectGarbage', (err) =>
      setImmediate(() => {
        session.disconnect();
        if (err) reject(err);
        else resolve();
      }),
    );
  });
}

/** The process's work, read each tick: reconciles finished so far, keys queued now. */
export interface WorkGauge {
  reconciled(): number;
  waiting(): number;
}

/** Runs the trigger every second (unref'd) and releases the heap when it says so; one release at a time. */
export class BurstReclaimer implements Runnable {
  private timer?: NodeJS.Timeout;
  private releasing = false;
  private disabled = false;
  private readonly trigger: BurstTrigger;
  private readonly tickMs: number;
  private readonly release: () => Promise<void>;

  constructor(
    private readonly work: WorkGauge,
    private readonly log: Logger,
    opts: BurstTriggerOptions & { tickMs?: number; release?: () => Promise<void> } = {},
  ) {
    this.trigger = new BurstTrigger(opts);
    this.tickMs = opts.tickMs ?? 1000;
    this.release = opts.release ?? releaseHeap;
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.disabled || this.releasing) return;
    if (!this.trigger.tick(this.work.reconciled(), this.work.waiting(), Date.now())) return;
    this.releasing = true;
    const before = v8.getHeapStatistics().total_heap_size;
    this.release()
      .then(() => {
        const after = v8.getHeapStatistics().total_heap_size;
        this.log.debug(
          `heap released after a burst: committed ${Math.round(before / MB)} → ${Math.round(after / MB)} MB`,
        );
      })
      .catch((e: unknown) => {
        // No inspector in this Node build: V8's own memory reducer still runs, later.
        this.disabled = true;
        this.log.warn(`cannot release the heap after bursts (left to V8): ${e instanceof Error ? e.message : e}`);
      })
      .finally(() => {
        this.releasing = false;
      });
  }
}
