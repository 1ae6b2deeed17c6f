/** WorkQueue (controller/runtime/workqueue.ts): client-go util/workqueue semantics. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExponentialRateLimiter, WorkQueue, type QueueMetricsHooks } from '../../../controller/runtime/workqueue.js';

const PENDING = Symbol('pending');
/** The promise's value if it has already settled, else PENDING (without waiting on timers). */
async function peek<T>(p: Promise<T>): Promise<T | typeof PENDING> {
  // Let any already-queued resolutions run first.
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return Promise.race([p, Promise.resolve(PENDING)]);
}

/** Takes every key queued right now (without blocking). */
async function drain(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) out.push((await q.get())!);
  return out;
}

describe('WorkQueue: queueing and dedup', () => {
  it('hands keys out in FIFO order', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('b');
    q.add('c');
    expect(q.len()).toBe(3);
    expect(await drain(q)).toEqual(['a', 'b', 'c']);
  });

  it('queues a key at most once while it waits', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await drain(q)).toEqual(['a', 'b']);
  });

  it('get() waits for the next add, and waiters are served in order', async () => {
    const q = new WorkQueue('t');
    const g1 = q.get();
    const g2 = q.get();
    expect(await peek(g1)).toBe(PENDING);
    q.add('x');
    expect(await peek(g1)).toBe('x');
    expect(await peek(g2)).toBe(PENDING);
    q.add('y');
    expect(await peek(g2)).toBe('y');
    expect(q.len()).toBe(0);
  });

  it('a key handed straight to a waiter counts as processing', async () => {
    const q = new WorkQueue('t');
    const g = q.get();
    q.add('x');
    expect(await g).toBe('x');
    expect(q.busy()).toBe(1);
    q.add('x'); // while processing: not handed out again
    expect(q.len()).toBe(0);
    q.done('x');
    expect(await drain(q)).toEqual(['x']);
  });
});

describe('WorkQueue: processing', () => {
  it('does not hand out a key being processed; re-queues it once on done() if added meanwhile', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    const next = q.get();
    expect(await peek(next)).toBe(PENDING); // a second worker does not get 'a'
    q.done('a');
    expect(await peek(next)).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.pending()).toBe(0);
  });

  it('done() without an add meanwhile does not re-queue', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    await q.get();
    q.done('a');
    expect(q.len()).toBe(0);
    expect(q.pending()).toBe(0);
  });

  it('other keys flow while one is processing', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('b');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('c');
    expect(await drain(q)).toEqual(['b', 'c']);
    q.done('a');
    expect(await drain(q)).toEqual(['a']);
  });

  it('a key re-queued by done() goes to the back of the queue', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    await q.get();
    q.add('a');
    q.add('b');
    q.done('a');
    expect(await drain(q)).toEqual(['b', 'a']);
  });

  it('len, busy and pending account for queued, processing and scheduled keys', async () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue('t');
      q.add('a');
      q.add('b');
      q.addAfter('c', 1000);
      expect([q.len(), q.busy(), q.pending()]).toEqual([2, 2, 3]);
      await q.get();
      expect([q.len(), q.busy(), q.pending()]).toEqual([1, 2, 3]);
      q.done('a');
      expect([q.len(), q.busy(), q.pending()]).toEqual([1, 1, 2]);
      q.shutdown();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('WorkQueue: delayed adds', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('addAfter adds the key once the delay has passed', () => {
    const q = new WorkQueue('t');
    q.addAfter('a', 1000);
    expect(q.len()).toBe(0);
    expect(q.pending()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(q.len()).toBe(0);
    vi.advanceTimersByTime(1);
    expect(q.len()).toBe(1);
    expect(q.pending()).toBe(1); // the timer is gone, the key is queued
  });

  it('addAfter with a delay ≤ 0 adds at once', () => {
    const q = new WorkQueue('t');
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
  });

  it('keeps the earliest due time: a sooner addAfter replaces a later one', async () => {
    const q = new WorkQueue('t');
    q.addAfter('a', 1000);
    q.addAfter('a', 100);
    vi.advanceTimersByTime(100);
    expect(await drain(q)).toEqual(['a']);
    q.done('a');
    vi.advanceTimersByTime(5000);
    expect(q.len()).toBe(0); // the 1000 ms timer was cancelled
  });

  it('keeps the earliest due time: a later addAfter is ignored', async () => {
    const q = new WorkQueue('t');
    q.addAfter('a', 100);
    q.addAfter('a', 1000);
    vi.advanceTimersByTime(100);
    expect(await drain(q)).toEqual(['a']);
    q.done('a');
    vi.advanceTimersByTime(5000);
    expect(q.len()).toBe(0);
  });

  it('keys are scheduled independently', async () => {
    const q = new WorkQueue('t');
    q.addAfter('slow', 300);
    q.addAfter('fast', 100);
    q.addAfter('mid', 200);
    vi.advanceTimersByTime(300);
    expect(await drain(q)).toEqual(['fast', 'mid', 'slow']);
  });

  it('a due key is deduplicated against one already queued', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.addAfter('a', 50);
    vi.advanceTimersByTime(50);
    expect(await drain(q)).toEqual(['a']);
  });

  it('a key that comes due while being processed is re-queued on done()', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    await q.get();
    q.addAfter('a', 50);
    vi.advanceTimersByTime(50);
    expect(q.len()).toBe(0);
    q.done('a');
    expect(await drain(q)).toEqual(['a']);
  });

  it('a delayed key wakes a waiting get()', async () => {
    const q = new WorkQueue('t');
    const g = q.get();
    q.addAfter('a', 10);
    expect(await peek(g)).toBe(PENDING);
    vi.advanceTimersByTime(10);
    expect(await peek(g)).toBe('a');
  });
});

describe('WorkQueue: rate limiting', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** How long after addRateLimited the key shows up. */
  async function delayOf(q: WorkQueue, key: string): Promise<number> {
    q.addRateLimited(key);
    let waited = 0;
    while (q.len() === 0) {
      vi.advanceTimersByTime(1);
      waited++;
      if (waited > 100_000) throw new Error('never queued');
    }
    expect(await q.get()).toBe(key);
    q.done(key);
    return waited;
  }

  it('backs off 5 ms · 2^n per key', async () => {
    const q = new WorkQueue('t');
    const delays = [];
    for (let i = 0; i < 6; i++) delays.push(await delayOf(q, 'a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 160]);
    expect(q.numRequeues('a')).toBe(6);
  });

  it('counts failures per key', async () => {
    const q = new WorkQueue('t');
    await delayOf(q, 'a');
    await delayOf(q, 'a');
    expect(await delayOf(q, 'b')).toBe(5);
    expect(q.numRequeues('a')).toBe(2);
    expect(q.numRequeues('b')).toBe(1);
    expect(q.numRequeues('never')).toBe(0);
  });

  it('forget() resets the backoff', async () => {
    const q = new WorkQueue('t');
    await delayOf(q, 'a');
    await delayOf(q, 'a');
    await delayOf(q, 'a');
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(await delayOf(q, 'a')).toBe(5);
  });

  it('the limiter caps at 1000 s', () => {
    const l = new ExponentialRateLimiter();
    const seq = Array.from({ length: 30 }, () => l.when('k'));
    expect(seq.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(Math.max(...seq)).toBe(1_000_000);
    expect(seq.at(-1)).toBe(1_000_000);
    expect(l.retries('k')).toBe(30);
  });

  it('the limiter takes a custom base and cap', () => {
    const l = new ExponentialRateLimiter(100, 250);
    expect([l.when('k'), l.when('k'), l.when('k'), l.when('k')]).toEqual([100, 200, 250, 250]);
    l.forget('k');
    expect(l.when('k')).toBe(100);
  });

  it('uses the limiter it is given', async () => {
    const q = new WorkQueue('t', new ExponentialRateLimiter(50, 60));
    expect([await delayOf(q, 'a'), await delayOf(q, 'a'), await delayOf(q, 'a')]).toEqual([50, 60, 60]);
  });
});

describe('WorkQueue: shutdown', () => {
  it('resolves waiting get() calls with undefined', async () => {
    const q = new WorkQueue('t');
    const g1 = q.get();
    const g2 = q.get();
    q.shutdown();
    expect(await g1).toBeUndefined();
    expect(await g2).toBeUndefined();
    expect(await q.get()).toBeUndefined();
  });

  it('ignores adds after shutdown', async () => {
    const q = new WorkQueue('t');
    q.shutdown();
    q.add('a');
    q.addAfter('b', 0);
    q.addAfter('c', 10);
    q.addRateLimited('d');
    expect(q.len()).toBe(0);
    expect(q.pending()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it('cancels scheduled keys', () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue('t');
      q.addAfter('a', 100);
      q.shutdown();
      expect(q.pending()).toBe(0);
      vi.advanceTimersByTime(1000);
      expect(q.len()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops what is queued and not started (the next start resyncs it), unlike client-go', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('b');
    q.shutdown();
    expect(q.len()).toBe(0);
    expect(q.pending()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  it('does not re-queue a key added during processing once shut down', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    await q.get();
    q.add('a');
    q.shutdown();
    q.done('a');
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });
});

describe('WorkQueue: metrics hooks', () => {
  function recorder() {
    const calls: [string, ...unknown[]][] = [];
    const hooks: Required<QueueMetricsHooks> = {
      onAdd: (k) => calls.push(['add', k]),
      onDepth: (d) => calls.push(['depth', d]),
      onRetry: (k) => calls.push(['retry', k]),
      onGet: (k, s) => calls.push(['get', k, s]),
      onDone: (k, s) => calls.push(['done', k, s]),
    };
    return { calls, hooks };
  }

  it('reports adds, depth, gets and dones', async () => {
    const { calls, hooks } = recorder();
    const q = new WorkQueue('t', undefined, hooks);
    q.add('a');
    q.add('b');
    q.add('a'); // deduplicated: no hook
    await q.get();
    q.done('a');
    const kinds = calls.map((c) => c.slice(0, 2));
    expect(kinds).toEqual([
      ['add', 'a'],
      ['depth', 1],
      ['add', 'b'],
      ['depth', 2],
      ['depth', 1],
      ['get', 'a'],
      ['done', 'a'],
    ]);
    const get = calls.find((c) => c[0] === 'get')!;
    const done = calls.find((c) => c[0] === 'done')!;
    expect(get[2]).toBeGreaterThanOrEqual(0);
    expect(done[2]).toBeGreaterThanOrEqual(0);
  });

  it('reports an add during processing, but no depth until done() re-queues it', async () => {
    const { calls, hooks } = recorder();
    const q = new WorkQueue('t', undefined, hooks);
    q.add('a');
    await q.get();
    calls.length = 0;
    q.add('a');
    expect(calls).toEqual([['add', 'a']]);
    q.done('a');
    expect(calls.map((c) => c.slice(0, 2))).toEqual([
      ['add', 'a'],
      ['done', 'a'],
      ['depth', 1],
    ]);
  });

  it('reports a get for a key handed straight to a waiter', async () => {
    const { calls, hooks } = recorder();
    const q = new WorkQueue('t', undefined, hooks);
    const g = q.get();
    q.add('w');
    expect(await g).toBe('w');
    expect(calls.map((c) => c.slice(0, 2))).toEqual([
      ['add', 'w'],
      ['get', 'w'],
    ]);
  });

  it('reports retries for delayed and rate-limited adds', () => {
    vi.useFakeTimers();
    try {
      const { calls, hooks } = recorder();
      const q = new WorkQueue('t', undefined, hooks);
      q.addAfter('a', 100);
      q.addRateLimited('b');
      expect(calls).toEqual([
        ['retry', 'a'],
        ['retry', 'b'],
      ]);
      vi.advanceTimersByTime(100);
      expect(calls.filter((c) => c[0] === 'add').map((c) => c[1])).toEqual(['b', 'a']);
      q.shutdown();
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not report done for a key that was never handed out', () => {
    const { calls, hooks } = recorder();
    const q = new WorkQueue('t', undefined, hooks);
    q.done('ghost');
    expect(calls).toEqual([]);
  });
});
