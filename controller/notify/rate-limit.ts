/**
 * A channel's `rateLimit`: at most `count` send attempts in any window of `perMs`. A send over it
 * is not made; it is told how long until the oldest attempt leaves the window, so the outbox can
 * come back then instead of hammering a receiver (Slack takes about one message a second).
 */
export class SlidingWindowLimit {
  private readonly times: number[] = [];

  constructor(
    private readonly count: number,
    private readonly perMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes a slot and returns undefined, or returns the milliseconds until one frees. */
  take(): number | undefined {
    const t = this.now();
    while (this.times.length && this.times[0] <= t - this.perMs) this.times.shift();
    if (this.times.length >= this.count) return this.times[0] + this.perMs - t;
    this.times.push(t);
    return undefined;
  }
}
