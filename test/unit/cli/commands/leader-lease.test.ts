/**
 * `orchctl controller --leader-lease` (cli/commands/controller.ts): whole seconds from 3 s to 60 s,
 * a clear error otherwise; no flag keeps the default (15 s).
 */
import { expect, it } from 'vitest';
import { leaderLeaseSeconds } from '../../../../controller/cli/commands/controller.js';

it('takes whole seconds between 3s and 60s', () => {
  expect(leaderLeaseSeconds(undefined)).toBeUndefined();
  expect(leaderLeaseSeconds('3s')).toBe(3);
  expect(leaderLeaseSeconds('4s')).toBe(4);
  expect(leaderLeaseSeconds('4000ms')).toBe(4);
  expect(leaderLeaseSeconds('1m')).toBe(60);
});

it('refuses a lease outside the bounds, a fraction of a second or no duration, naming the flag', () => {
  const bounds = 'the leader lease must be whole seconds between 3s and 1m';
  expect(() => leaderLeaseSeconds('2s')).toThrow(`--leader-lease 2s: ${bounds}`);
  expect(() => leaderLeaseSeconds('61s')).toThrow(`--leader-lease 61s: ${bounds}`);
  expect(() => leaderLeaseSeconds('4.5s')).toThrow(`--leader-lease 4.5s: ${bounds}`);
  expect(() => leaderLeaseSeconds('0')).toThrow(bounds);
  expect(() => leaderLeaseSeconds('4')).toThrow('invalid duration "4"');
});
