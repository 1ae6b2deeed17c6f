/**
 * A counting semaphore for LLM calls (seed 000's claudePWithSemaphore): at most `limit()` holders
 * at once, FIFO. The limit is read on every acquire and release, so a SessionPolicy change takes
 * effect for the next call without dropping the ones in flight (a lowered limit just admits no
 * one until enough have finished).
 */
export class Semaphore {
  private holders = 0;
  private readonly waiting: { resolve: () => void; signal?: AbortSignal; onAbort?: () => void }[] = [];
  private peakHolders = 0;

  constructor(private readonly limit: () => number) {}

  get inFlight(): number {
    return this.holders;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Highest number of holders seen at once (for tests and benchmarks). */
  get peak(): number {
    return this.peakHolders;
  }

  private max(): number {
    const n = Math.floor(this.limit());
    return Number.isFinite(n) && n >= 1 ? n : 1;
  }

  /** Resolves when a slot is held; rejects if `signal` aborts while waiting. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    if (this.holders < this.max() && this.waiting.length === 0) {
      this.take();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const w: (typeof this.waiting)[number] = { resolve, signal };
      if (signal) {
        w.onAbort = () => {
          const i = this.waiting.indexOf(w);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason ?? new Error('aborted'));
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiting.push(w);
    });
  }

  release(): void {
    this.holders = Math.max(0, this.holders - 1);
    this.pump();
  }

  /** Runs `fn` holding a slot. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private take(): void {
    this.holders++;
    this.peakHolders = Math.max(this.peakHolders, this.holders);
  }

  private pump(): void {
    while (this.waiting.length && this.holders < this.max()) {
      const w = this.waiting.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
      this.take();
      w.resolve();
    }
  }
}
