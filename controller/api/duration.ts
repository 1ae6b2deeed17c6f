/** Go-style durations ("45m", "1h30m", "500ms") and kubectl's human-readable AGE. */

const GO_DURATION = /^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$/;
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export function isGoDuration(s: string): boolean {
  return GO_DURATION.test(s);
}

/** Parses a Go duration to milliseconds; throws on bad input. */
export function parseDuration(s: string): number {
  if (!GO_DURATION.test(s)) throw new Error(`invalid duration "${s}": must be a duration like 45m`);
  const sign = s.startsWith('-') ? -1 : 1;
  let total = 0;
  for (const m of s.replace(/^[-+]/, '').matchAll(/([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(m[1]) * UNIT_MS[m[2]];
  }
  return sign * total;
}

/** Formats milliseconds as a compact Go-style duration ("1h2m3s"), for messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/** kubectl's HumanDuration (apimachinery pkg/util/duration), used for AGE columns. */
export function humanDuration(ms: number): string {
  const s = Math.trunc(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.trunc(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.trunc(s / 3600);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.trunc(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${d}d`;
  const y = Math.trunc(d / 365);
  if (h < 24 * 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

/** Age of an RFC 3339 timestamp relative to `now`, as kubectl prints it. */
export function age(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<invalid>';
  return humanDuration(now - t);
}
