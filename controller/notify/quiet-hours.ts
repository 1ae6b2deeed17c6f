/**
 * Wall-clock time in an IANA time zone through Intl.DateTimeFormat (no date library: reading the
 * wall clock and finding the instant of a wall time is all quiet hours and the budget's day need),
 * and when quiet hours end. Quiet hours are a property of the wall clock: during a DST fold the
 * repeated hour is quiet twice, and an end inside a DST gap (02:30 on a spring-forward night) is
 * the first instant the clock reads later than it, the jump itself.
 */
import type { QuietInterval } from '../api/notification.js';

const MINUTE = 60_000;
const DAY_MS = 24 * 60 * MINUTE;

export type WallClock = { year: number; month: number; day: number; weekday: number; minute: number };

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock at `t` as if it were UTC: Date.UTC of the local date and time (whole seconds). */
function localAsUtc(t: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(t)) if (part.type !== 'literal') p[part.type] = +part.value;
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
}

/** The zone's offset from UTC at `t`, in milliseconds. */
const offsetAt = (t: number, timeZone: string): number => localAsUtc(t, timeZone) - Math.floor(t / 1000) * 1000;

export function wallClock(t: number, timeZone: string): WallClock {
  const d = new Date(localAsUtc(t, timeZone));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    weekday: d.getUTCDay(),
    minute: d.getUTCHours() * 60 + d.getUTCMinutes(),
  };
}

/**
 * The first instant after `after` at which the wall clock reads `minute` (may be ≥ 1440: the next
 * days) of the given date: in a fold the later reading when the earlier one is past, in a gap
 * the moment of the jump.
 */
export function instantOf(
  date: Omit<WallClock, 'weekday' | 'minute'>,
  minute: number,
  timeZone: string,
  after = -Infinity,
): number {
  const local = Date.UTC(date.year, date.month - 1, date.day, 0, minute);
  // A day either side is past any transition near `local`: the offsets before and after it.
  const before = offsetAt(local - DAY_MS, timeZone);
  const later = offsetAt(local + DAY_MS, timeZone);
  const found = [local - before, local - later]
    .filter((t) => t > after && localAsUtc(t, timeZone) === local)
    .sort((a, b) => a - b);
  if (found.length) return found[0];
  if (before === later) return after + MINUTE; // only when `local` is not after `after`: keep moving
  // A gap: the wall time never occurs; search the jump between the two readings to the second.
  let lo = Math.min(local - before, local - later);
  let hi = Math.max(local - before, local - later);
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2000) * 1000;
    if (offsetAt(mid, timeZone) === before) lo = mid;
    else hi = mid;
  }
  return Math.max(hi, after + 1);
}

/** The latest end (date and minute) of the intervals quiet at `w`, or undefined when none is. */
function activeEnd(w: WallClock, intervals: QuietInterval[]): number | undefined {
  let end: number | undefined;
  const yesterday = (w.weekday + 6) % 7;
  for (const q of intervals) {
    let e: number | undefined;
    if (q.start < q.end) {
      if (q.days.includes(w.weekday) && w.minute >= q.start && w.minute < q.end) e = q.end;
    } else if (q.days.includes(w.weekday) && w.minute >= q.start) e = q.end + 24 * 60;
    else if (q.days.includes(yesterday) && w.minute < q.end) e = q.end;
    if (e !== undefined && (end === undefined || e > end)) end = e;
  }
  return end;
}

/** Whether `now` is in quiet hours. */
export const isQuiet = (now: number, timeZone: string, intervals: QuietInterval[]): boolean =>
  activeEnd(wallClock(now, timeZone), intervals) !== undefined;

/**
 * When the quiet hours `now` is in end (following intervals that join up, e.g. Friday night
 * into a quiet Saturday), or undefined when `now` is not quiet.
 */
export function quietUntil(now: number, timeZone: string, intervals: QuietInterval[]): number | undefined {
  let t = now;
  // Validation refuses quiet hours covering the whole week, so the chain ends within 8 days.
  for (let step = 0; step < 8 * intervals.length + 2; step++) {
    const w = wallClock(t, timeZone);
    const end = activeEnd(w, intervals);
    if (end === undefined) return step === 0 ? undefined : t;
    t = instantOf(w, end, timeZone, t);
  }
  return t;
}

/** The budget's day at `now`: its key (YYYY-MM-DD) and the instant it began, in the time zone. */
export function budgetDay(now: number, timeZone: string): { key: string; start: number } {
  const w = wallClock(now, timeZone);
  const key = `${w.year}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
  return { key, start: instantOf(w, 0, timeZone) };
}
