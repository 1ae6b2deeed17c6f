/** Releasing the heap after a drained burst (controller/runtime/heap-reclaim.ts, issue 29). */
import v8 from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BurstReclaimer, BurstTrigger, releaseHeap } from '../../../controller/runtime/heap-reclaim.js';
import type { Logger } from '../../../controller/runtime/log.js';

const opts = { minReconciles: 100, quietBelow: 10, settleTicks: 2, minIntervalMs: 60_000 };

/**
 * Feeds the trigger one tick a (logical) second: [reconciles finished this tick, keys waiting]. Returns the
 * clock (ms) of each tick that said release; `at` carries the counter and the clock across calls.
 */
function run(trigger: BurstTrigger, ticks: [number, number][], at = { done: 0, t: 0 }): number[] {
  const fired: number[] = [];
  for (const [n, waiting] of ticks) {
    at.done += n;
    at.t += 1000;
    if (trigger.tick(at.done, waiting, at.t)) fired.push(at.t);
  }
  return fired;
}

type Tick = [number, number];
const busyFor = (n: number, perTick: number, waiting = 50): Tick[] =>
  Array.from({ length: n }, () => [perTick, waiting]);
const idleFor = (n: number, perTick = 0): Tick[] => Array.from({ length: n }, () => [perTick, 0]);

describe('BurstTrigger', () => {
  it('fires once after a burst over the threshold has drained and settled', () => {
    const t = new BurstTrigger(opts);
    // 5 busy ticks of 40 reconciles (200), then quiet: fires at the second quiet tick, once.
    expect(run(t, [...busyFor(5, 40), ...idleFor(30)])).toEqual([7000]);
  });

  it('never fires on idle ticks, however many', () => {
    const t = new BurstTrigger(opts);
    expect(run(t, idleFor(1000))).toEqual([]);
  });

  it('does not fire for a burst under the threshold, and small bursts apart do not add up', () => {
    const t = new BurstTrigger(opts);
    const small = [...busyFor(3, 20), ...idleFor(5)]; // 60 reconciles, then a quiet spell
    expect(run(t, [...small, ...small, ...small, ...small])).toEqual([]);
  });

  it('does not fire while keys wait in a queue, even with no reconcile finishing', () => {
    const t = new BurstTrigger(opts);
    expect(run(t, [...busyFor(3, 100), ...busyFor(20, 0, 1)])).toEqual([]);
  });

  it('never fires on the steady state: a few reconciles a tick and nothing waiting', () => {
    const t = new BurstTrigger(opts);
    // 9 a tick for 1000 ticks: 9000 reconciles, none of them in a busy tick.
    expect(run(t, idleFor(1000, 9))).toEqual([]);
  });

  it('counts heavy work without a pause as one burst, released after its first quiet spell', () => {
    const t = new BurstTrigger(opts);
    // 10 a tick, nothing waiting, for 150 ticks: the first tick only sets the counter, 1490 ≥ 100.
    expect(run(t, [...idleFor(150, 10), ...idleFor(3, 1)])).toEqual([152_000]);
  });

  it('fires at most once per interval; a burst held back fires once the interval is over', () => {
    const t = new BurstTrigger(opts);
    const at = { done: 0, t: 0 };
    expect(run(t, [...busyFor(3, 100), ...idleFor(3)], at)).toEqual([5000]);
    // A second burst right after: held back until 60 s after the first release, then released once.
    expect(run(t, [...busyFor(3, 100), ...idleFor(80)], at)).toEqual([65_000]);
  });

  it('starts from the counter it first sees: reconciles before the first tick are no burst', () => {
    const t = new BurstTrigger(opts);
    expect(run(t, [[10_000, 0], ...idleFor(10)])).toEqual([]);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BurstTrigger({ minReconciles: 0 })).toThrow(/minReconciles must be a positive integer/);
    expect(() => new BurstTrigger({ minIntervalMs: Number.POSITIVE_INFINITY })).toThrow(/minIntervalMs/);
    expect(() => new BurstTrigger({ quietBelow: 2.5 })).toThrow(/quietBelow/);
  });
});

describe('releaseHeap', () => {
  it('gives the committed heap back: the young generation shrinks, and it can be called again', async () => {
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size;
    // Survivors of many scavenges grow the new space to its maximum (what a burst leaves).
    let keep: { i: number; s: string }[] | undefined = [];
    for (let i = 0; i < 2e6; i++) keep.push({ i, s: `x${i}` });
    const grown = newSpace();
    const total = v8.getHeapStatistics().total_heap_size;
    keep = undefined;
    await releaseHeap();
    expect(newSpace()).toBeLessThan(grown);
    expect(v8.getHeapStatistics().total_heap_size).toBeLessThan(total);
    await releaseHeap(); // the first session was disconnected: a second is accepted (no hang)
    expect(keep).toBeUndefined();
  });
});

describe('BurstReclaimer', () => {
  afterEach(() => vi.useRealTimers());

  it('releases through the trigger, and stops trying (one warning) when the release cannot run', async () => {
    vi.useFakeTimers();
    const warnings: string[] = [];
    const log: Logger = { info: () => {}, debug: () => {}, error: () => {}, warn: (m) => warnings.push(m) };
    let done = 0;
    let waiting = 0;
    const release = vi.fn(async () => {
      throw new Error('ERR_INSPECTOR_NOT_AVAILABLE');
    });
    const r = new BurstReclaimer({ reconciled: () => done, waiting: () => waiting }, log, { ...opts, release });
    r.start();
    await vi.advanceTimersByTimeAsync(1000);
    waiting = 20;
    done = 500;
    await vi.advanceTimersByTimeAsync(1000);
    waiting = 0;
    await vi.advanceTimersByTimeAsync(5000);
    expect(release).toHaveBeenCalledTimes(1);
    expect(warnings).toEqual([expect.stringMatching(/cannot release the heap after bursts.*NOT_AVAILABLE/)]);
    done = 2000; // another burst: no second try
    await vi.advanceTimersByTimeAsync(120_000);
    r.stop();
    expect(release).toHaveBeenCalledTimes(1);
  });
});
