/**
 * Quiet hours on the wall clock of an IANA time zone: ranges past midnight, the days they belong
 * to, intervals that join up, DST gaps and folds, zones off the whole hour, and the budget's day.
 */
import { describe, expect, it } from 'vitest';
import { parseQuietHours, type QuietHoursInterval } from '../../../../controller/api/notification.js';
import { budgetDay, isQuiet, quietUntil } from '../../../../controller/notify/quiet-hours.js';
import { at } from './fixtures.js';

const until = (now: string, tz: string, q: QuietHoursInterval[]) => {
  const t = quietUntil(at(now), tz, parseQuietHours(q));
  return t === undefined ? undefined : new Date(t).toISOString();
};

describe('quietUntil', () => {
  it.each([
    // [now (UTC), zone, intervals, quiet until (UTC) or undefined]
    ['2026-06-03T12:00:00Z', 'UTC', [], undefined],
    ['2026-06-03T23:00:00Z', 'UTC', [{ start: '22:00', end: '07:00' }], '2026-06-04T07:00:00.000Z'],
    ['2026-06-03T21:59:00Z', 'UTC', [{ start: '22:00', end: '07:00' }], undefined],
    ['2026-06-03T22:00:00Z', 'UTC', [{ start: '22:00', end: '07:00' }], '2026-06-04T07:00:00.000Z'],
    // India is UTC+5:30: 22:30 there is 17:00 UTC, and 07:00 is 01:30 UTC.
    ['2026-06-03T17:00:00Z', 'Asia/Kolkata', [{ start: '22:00', end: '07:00' }], '2026-06-04T01:30:00.000Z'],
    // Berlin spring-forward night: 02:00 CET jumps to 03:00 CEST (01:00 UTC); an end at 02:30 is the jump.
    ['2026-03-28T22:30:00Z', 'Europe/Berlin', [{ start: '22:00', end: '02:30' }], '2026-03-29T01:00:00.000Z'],
    // New York fall-back night: 01:00–02:00 comes twice (EDT, then EST); 01:30 ends each pass through it.
    ['2026-11-01T05:15:00Z', 'America/New_York', [{ start: '00:00', end: '01:30' }], '2026-11-01T05:30:00.000Z'],
    ['2026-11-01T06:15:00Z', 'America/New_York', [{ start: '00:00', end: '01:30' }], '2026-11-01T06:30:00.000Z'],
    ['2026-11-01T05:45:00Z', 'America/New_York', [{ start: '00:00', end: '01:30' }], undefined],
  ] as [string, string, QuietHoursInterval[], string | undefined][])('%s in %s %j → %s', (now, tz, q, want) => {
    expect(until(now, tz, q)).toBe(want);
  });

  it('a range past midnight belongs to the day it starts on', () => {
    // Weeknights in New York (EDT, UTC-4): Monday to Friday nights, 22:00–07:00.
    const weeknights = [{ days: ['monday:friday'], start: '22:00', end: '07:00' }];
    // Friday 23:00 → Saturday 07:00: Friday's night runs into Saturday.
    expect(until('2026-06-06T03:00:00Z', 'America/New_York', weeknights)).toBe('2026-06-06T11:00:00.000Z');
    // Saturday 23:00 and Monday 06:00 (the end of Sunday's night) are not quiet.
    expect(until('2026-06-07T03:00:00Z', 'America/New_York', weeknights)).toBeUndefined();
    expect(until('2026-06-08T10:00:00Z', 'America/New_York', weeknights)).toBeUndefined();
    // Tuesday 06:00 is the end of Monday's night.
    expect(until('2026-06-09T10:00:00Z', 'America/New_York', weeknights)).toBe('2026-06-09T11:00:00.000Z');
  });

  it('follows intervals that join up: Friday night, a quiet weekend, Monday until 07:00', () => {
    const weekend = [
      { days: ['friday'], start: '22:00', end: '24:00' },
      { days: ['saturday', 'sunday'], start: '00:00', end: '24:00' },
      { days: ['monday'], start: '00:00', end: '07:00' },
    ];
    // Friday 5 June 2026, 23:00 CEST → Monday 8 June, 07:00 CEST.
    expect(until('2026-06-05T21:00:00Z', 'Europe/Berlin', weekend)).toBe('2026-06-08T05:00:00.000Z');
    expect(isQuiet(at('2026-06-07T12:00:00Z'), 'Europe/Berlin', parseQuietHours(weekend))).toBe(true);
    expect(isQuiet(at('2026-06-08T05:00:00Z'), 'Europe/Berlin', parseQuietHours(weekend))).toBe(false);
  });

  it('the repeated hour of a fold is quiet both times, the hour after it is not', () => {
    const q = parseQuietHours([{ start: '01:00', end: '02:00' }]);
    expect(isQuiet(at('2026-11-01T05:30:00Z'), 'America/New_York', q)).toBe(true); // 01:30 EDT
    expect(isQuiet(at('2026-11-01T06:30:00Z'), 'America/New_York', q)).toBe(true); // 01:30 EST
    expect(isQuiet(at('2026-11-01T07:30:00Z'), 'America/New_York', q)).toBe(false); // 02:30 EST
    expect(new Date(quietUntil(at('2026-11-01T05:30:00Z'), 'America/New_York', q)!).toISOString()).toBe(
      '2026-11-01T07:00:00.000Z',
    );
  });
});

describe('budgetDay', () => {
  it.each([
    ['2026-06-03T21:59:00Z', 'Europe/Berlin', '2026-06-03', '2026-06-02T22:00:00.000Z'],
    ['2026-06-03T22:00:00Z', 'Europe/Berlin', '2026-06-04', '2026-06-03T22:00:00.000Z'],
    // The day the clocks go forward is 23 hours long: it began at midnight CET.
    ['2026-03-29T20:00:00Z', 'Europe/Berlin', '2026-03-29', '2026-03-28T23:00:00.000Z'],
    ['2026-06-03T03:00:00Z', 'America/New_York', '2026-06-02', '2026-06-02T04:00:00.000Z'],
    ['2026-06-03T03:00:00Z', 'UTC', '2026-06-03', '2026-06-03T00:00:00.000Z'],
  ])('%s in %s is day %s, begun at %s', (now, tz, key, start) => {
    const d = budgetDay(at(now), tz);
    expect([d.key, new Date(d.start).toISOString()]).toEqual([key, start]);
  });
});
