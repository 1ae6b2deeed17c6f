/**
 * Retention: how long what grows with time is kept (docs/store.md, "Retention"), as Kubernetes'
 * Event TTL. Each setting has a default and bounds; `orchctl controller` takes them as flags and
 * refuses a value outside the bounds with a message naming the flag.
 */
import { formatDuration, parseDuration } from './duration.js';

export interface Retention {
  /** Events, from their last occurrence (Kubernetes' --event-ttl: 1 h). */
  eventTtlMs: number;
  /** Sent, failed, suppressed Notifications, from when they were settled (the digest reads a day back). */
  notificationTtlMs: number;
  /** Evaluations kept per session (newest runs first); in-progress ones and the newest are never deleted. */
  evaluationsPerSession: number;
  /** Run directories (output.log, session.log, state.json, result.json) kept on disk per session. */
  runDirsPerSession: number;
  /** A deleted session's directory (its runs and event log) is removed once untouched this long. */
  deletedSessionDirTtlMs: number;
  /** A finished session an Autopilot started goes this long after it completed (a Job's ttlSecondsAfterFinished). */
  autopilotSessionTtlMs: number;
}

export const DEFAULT_RETENTION: Retention = {
  eventTtlMs: 3_600_000,
  notificationTtlMs: 48 * 3_600_000,
  evaluationsPerSession: 20,
  runDirsPerSession: 10,
  deletedSessionDirTtlMs: 24 * 3_600_000,
  autopilotSessionTtlMs: 168 * 3_600_000,
};

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;

type Bound = { flag: string; min: number; max: number; duration: boolean };

/** Each setting's flag and bounds (durations in ms). */
export const RETENTION_BOUNDS: Record<keyof Retention, Bound> = {
  eventTtlMs: { flag: '--event-ttl', min: MINUTE, max: 30 * DAY, duration: true },
  notificationTtlMs: { flag: '--notification-retention', min: MINUTE, max: 90 * DAY, duration: true },
  // At least 2: the judge looks at the current run and the one before (judge/reconciler.ts endedRuns),
  // and would judge again a run whose Evaluation or state.json were gone.
  evaluationsPerSession: { flag: '--evaluations-per-session', min: 2, max: 1000, duration: false },
  runDirsPerSession: { flag: '--run-dirs-per-session', min: 2, max: 1000, duration: false },
  deletedSessionDirTtlMs: { flag: '--deleted-session-dir-ttl', min: MINUTE, max: 90 * DAY, duration: true },
  autopilotSessionTtlMs: { flag: '--autopilot-session-ttl', min: MINUTE, max: 365 * DAY, duration: true },
};

const show = (b: Bound, v: number) => (b.duration ? formatDuration(v) : String(v));

/** Why `value` is out of bounds for `key`, or undefined when it is within them. */
export function checkRetention(key: keyof Retention, value: number): string | undefined {
  const b = RETENTION_BOUNDS[key];
  if (!Number.isFinite(value) || (!b.duration && !Number.isInteger(value)) || value < b.min || value > b.max)
    return `must be ${b.duration ? 'a duration' : 'an integer'} from ${show(b, b.min)} to ${show(b, b.max)}`;
  return undefined;
}

/**
 * The retention from flag texts (a Go duration or an integer, by setting), defaults for the rest.
 * Throws, naming the flag and its bounds, for a value that does not parse or is out of bounds.
 */
export function parseRetention(texts: Partial<Record<keyof Retention, string>>): Retention {
  const out: Retention = { ...DEFAULT_RETENTION };
  for (const key of Object.keys(RETENTION_BOUNDS) as (keyof Retention)[]) {
    const text = texts[key];
    if (text === undefined) continue;
    const b = RETENTION_BOUNDS[key];
    let value: number;
    try {
      value = b.duration ? parseDuration(text) : /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
    } catch {
      value = Number.NaN;
    }
    const bad = checkRetention(key, value);
    if (bad) throw new Error(`${b.flag} ${text}: ${bad}`);
    out[key] = value;
  }
  return out;
}
