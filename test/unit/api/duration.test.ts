/**
 * AGE as kubectl prints it: apimachinery pkg/util/duration HumanDuration (integer truncation),
 * the table in shared/reference/kubernetes-conventions.md §C3.
 */
import { describe, expect, it } from 'vitest';
import { age, formatDuration, humanDuration, isGoDuration, parseDuration } from '../../../controller/api/duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const Y = 365 * D;

describe('humanDuration (kubectl AGE)', () => {
  const cases: [string, number, string][] = [
    ['-2s', -2 * S, '<invalid>'],
    ['-1s', -1 * S, '0s'],
    ['-999ms (truncates to 0)', -999, '0s'],
    ['0', 0, '0s'],
    ['999ms', 999, '0s'],
    ['1s', 1 * S, '1s'],
    ['45s', 45 * S, '45s'],
    ['119s', 119 * S, '119s'],
    ['119.9s', 119 * S + 900, '119s'],
    ['120s', 120 * S, '2m'],
    ['121s', 121 * S, '2m1s'],
    ['5m32s', 5 * M + 32 * S, '5m32s'],
    ['7m', 7 * M, '7m'],
    ['9m59s', 9 * M + 59 * S, '9m59s'],
    ['10m', 10 * M, '10m'],
    ['10m59s', 10 * M + 59 * S, '10m'],
    ['45m', 45 * M, '45m'],
    ['2h59m59s', 3 * H - S, '179m'],
    ['3h', 3 * H, '3h'],
    ['3h5m', 3 * H + 5 * M, '3h5m'],
    ['3h5m59s', 3 * H + 5 * M + 59 * S, '3h5m'],
    ['7h59m', 7 * H + 59 * M, '7h59m'],
    ['8h', 8 * H, '8h'],
    ['8h30m', 8 * H + 30 * M, '8h'],
    ['10h', 10 * H, '10h'],
    ['47h', 47 * H, '47h'],
    ['47h59m', 47 * H + 59 * M, '47h'],
    ['48h', 48 * H, '2d'],
    ['2d3h', 2 * D + 3 * H, '2d3h'],
    ['2d3h59m', 2 * D + 3 * H + 59 * M, '2d3h'],
    ['7d23h', 7 * D + 23 * H, '7d23h'],
    ['8d', 8 * D, '8d'],
    ['8d5h', 8 * D + 5 * H, '8d'],
    ['45d', 45 * D, '45d'],
    ['400d', 400 * D, '400d'],
    ['729d', 729 * D, '729d'],
    ['729d23h', 729 * D + 23 * H, '729d'],
    ['2y', 2 * Y, '2y'],
    ['2y5d', 2 * Y + 5 * D, '2y5d'],
    ['7y364d', 7 * Y + 364 * D, '7y364d'],
    ['8y', 8 * Y, '8y'],
    ['8y100d', 8 * Y + 100 * D, '8y'],
    ['20y', 20 * Y, '20y'],
  ];
  it.each(cases)('%s → %s', (_label, ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });
});

describe('age (AGE column from a creationTimestamp)', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  it('measures from the timestamp to now', () => {
    expect(age('2025-03-01T11:54:28Z', now)).toBe('5m32s');
    expect(age('2025-02-27T09:00:00Z', now)).toBe('2d3h');
    expect(age('2025-03-01T12:00:00Z', now)).toBe('0s');
  });
  it('prints <unknown> without a timestamp and <invalid> for garbage or the future', () => {
    expect(age(undefined, now)).toBe('<unknown>');
    expect(age('yesterday-ish', now)).toBe('<invalid>');
    expect(age('2025-03-01T12:00:05Z', now)).toBe('<invalid>');
  });
});

describe('Go durations', () => {
  it.each([
    ['45m', 45 * M],
    ['1h30m', 90 * M],
    ['1m30s', 90 * S],
    ['500ms', 500],
    ['1.5h', 90 * M],
    ['2h45m30.5s', 2 * H + 45 * M + 30_500],
    ['0', 0],
    ['-5m', -5 * M],
    ['+10s', 10 * S],
    ['1000us', 1],
    ['1000000ns', 1],
  ])('parses %s', (s, ms) => {
    expect(isGoDuration(s)).toBe(true);
    expect(parseDuration(s)).toBeCloseTo(ms, 6);
  });

  it.each(['', '45', 'm', '45 minutes', '1d', '5M', '1h 30m', 'PT45M', '--5m', '.s', 'abc'])('rejects %j', (s) => {
    expect(isGoDuration(s)).toBe(false);
    expect(() => parseDuration(s)).toThrow(`invalid duration "${s}": must be a duration like 45m`);
  });

  it('formats milliseconds compactly for messages', () => {
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(45 * S)).toBe('45s');
    expect(formatDuration(45 * M)).toBe('45m');
    expect(formatDuration(H + 2 * M + 3 * S)).toBe('1h2m3s');
    expect(formatDuration(2 * H)).toBe('2h');
  });
});
