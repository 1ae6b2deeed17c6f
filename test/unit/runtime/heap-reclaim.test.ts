/** Releasing the heap after a drained burst (controller/runtime/heap-reclaim.ts, issue 29). */
import v8 from 'node:v8';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BurstReclaimer, BurstTrigger, releaseHeap } from '../../../controller/runtime/heap-reclaim.js';
import type { Logger } from '../../../controller/runtime/log.js';

const opts = { minReconciles: 100, settleTicks: 2, minIntervalMs: 60_000 };

/**
 * Feeds the trigger one tick a (logical) second: [reconciles finished this tick, busy]. Returns the
 * clock (ms) of each tick that said release; `at` carries the counter and the clock across calls.
 */
function run(trigger: BurstTrigger, ticks: [number, boolean][], at = { done: 0, t: 0 }): number[] {
  const fired: number[] = [];
  for (const [n, busy] of ticks) {
    at.done += n;
    at.t += 1000;
    if (trigger.tick(at.done, busy, at.t)) fired.push(at.t);
  }
  return fired;
}

const busyFor = (n: number, perTick: number): [number, boolean][] => Array.from({ length: n }, () => [perTick, true]);
const idleFor = (n: number): [number, boolean][] => Array.from({ length: n }, () => [0, false]);

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

  it('does not fire while work is queued or running, even with no reconcile finishing', () => {
    const t = new BurstTrigger(opts);
    expect(run(t, [...busyFor(3, 100), ...busyFor(20, 0)])).toEqual([]);
  });

  it('counts a trickle without a quiet spell as one burst, released after the first quiet spell', () => {
    const t = new BurstTrigger(opts);
    // One reconcile a tick for 150 ticks (nothing queued between): 150 ≥ 100.
    const trickle: [number, boolean][] = Array.from({ length: 150 }, () => [1, false]);
    expect(run(t, [...trickle, ...idleFor(3)])).toEqual([152_000]);
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
    expect(run(t, [[10_000, false], ...idleFor(10)])).toEqual([]);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BurstTrigger({ minReconciles: 0 })).toThrow(/minReconciles must be a positive integer/);
    expect(() => new BurstTrigger({ minIntervalMs: Number.POSITIVE_INFINITY })).toThrow(/minIntervalMs/);
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
    let busy = false;
    const release = vi.fn(async () => {
      throw new Error('ERR_INSPECTOR_NOT_AVAILABLE');
    });
    const r = new BurstReclaimer({ reconciled: () => done, busy: () => busy }, log, { ...opts, release });
    r.start();
    await vi.advanceTimersByTimeAsync(1000);
    busy = true;
    done = 500;
    await vi.advanceTimersByTimeAsync(1000);
    busy = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(release).toHaveBeenCalledTimes(1);
    expect(warnings).toEqual([expect.stringMatching(/cannot release the heap after bursts.*NOT_AVAILABLE/)]);
    done = 2000; // another burst: no second try
    await vi.advanceTimersByTimeAsync(120_000);
    r.stop();
    expect(release).toHaveBeenCalledTimes(1);
  });
});
