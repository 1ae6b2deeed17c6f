import { describe, expect, it } from 'vitest';
import {
  MAX_NEXT_THINK_INTERVALS,
  MIN_NEXT_THINK_MS,
  nextThinkDelay,
} from '../../../../controller/reconcilers/autopilot/plan.js';

const MIN = 60_000;
const interval = 5 * MIN;

describe("the planner's nextThinkIn, within bounds", () => {
  it('schedules the next think when the planner asks, inside [1m, 4 intervals]', () => {
    expect(nextThinkDelay(interval, '2m')).toBe(2 * MIN);
    expect(nextThinkDelay(interval, '15m')).toBe(15 * MIN);
  });

  it('clamps a value out of bounds: never sooner than 1m, never later than 4 intervals', () => {
    expect(MIN_NEXT_THINK_MS).toBe(MIN);
    expect(nextThinkDelay(interval, '5s')).toBe(MIN);
    expect(nextThinkDelay(interval, '0s')).toBe(MIN);
    expect(nextThinkDelay(interval, '48h')).toBe(MAX_NEXT_THINK_INTERVALS * interval);
    // With an interval under a minute, the floor is the interval: no planner makes it think more often.
    expect(nextThinkDelay(10_000, '1s')).toBe(10_000);
    expect(nextThinkDelay(10_000, '1h')).toBe(40_000);
  });

  it('keeps the interval when the planner gives none, null or a value that is not a duration', () => {
    expect(nextThinkDelay(interval, undefined)).toBe(interval);
    expect(nextThinkDelay(interval, '')).toBe(interval);
    expect(nextThinkDelay(interval, 'soon')).toBe(interval);
  });
});
