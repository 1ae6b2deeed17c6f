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
  /** A session's event log is cut to its newest half past this many bytes (store/eventlog.ts). */
  eventLogMaxBytes: number;
}

const MIB = 1 << 20;

export const DEFAULT_RETENTION: Retention = {
  eventTtlMs: 3_600_000,
  notificationTtlMs: 48 * 3_600_000,
  evaluationsPerSession: 20,
  runDirsPerSession: 10,
  deletedSessionDirTtlMs: 24 * 3_600_000,
  autopilotSessionTtlMs: 168 * 3_600_000,
  eventLogMaxBytes: 64 * MIB,
};

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;

/** `bytes`: a count of bytes, written plain or with a binary suffix (64Mi, 1Gi). */
type Bound = { flag: string; min: number; max: number; duration: boolean; bytes?: boolean };

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
  // At least 1Mi: a cut keeps half, and a hook payload line alone may be a few hundred KB.
  eventLogMaxBytes: { flag: '--event-log-max-bytes', min: MIB, max: 64 * 1024 * MIB, duration: false, bytes: true },
};

const SIZE_UNITS: Record<string, number> = { '': 1, Ki: 1 << 10, Mi: MIB, Gi: 1 << 30 };

/** `64Mi`, `1Gi`, `1048576` → bytes; NaN for anything else. */
function parseBytes(text: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(text.trim());
  return m ? Number(m[1]) * SIZE_UNITS[m[2] ?? '']! : Number.NaN;
}

/** Bytes in the largest binary unit that divides them (1048576 → 1Mi). */
function formatBytes(v: number): string {
  for (const u of ['Gi', 'Mi', 'Ki']) if (v % SIZE_UNITS[u]! === 0) return `${v / SIZE_UNITS[u]!}${u}`;
  return String(v);
}

const show = (b: Bound, v: number) => (b.duration ? formatDuration(v) : b.bytes ? formatBytes(v) : String(v));
const kind = (b: Bound) => (b.duration ? 'a duration' : b.bytes ? 'a size' : 'an integer');

/** Why `value` is out of bounds for `key`, or undefined when it is within them. */
export function checkRetention(key: keyof Retention, value: number): string | undefined {
  const b = RETENTION_BOUNDS[key];
  if (!Number.isFinite(value) || (!b.duration && !Number.isInteger(value)) || value < b.min || value > b.max)
    return `must be ${kind(b)} from ${show(b, b.min)} to ${show(b, b.max)}`;
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
      if (b.duration) value = parseDuration(text);
      else if (b.bytes) value = parseBytes(text);
      else value = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
    } catch {
      value = Number.NaN;
    }
    const bad = checkRetention(key, value);
    if (bad) throw new Error(`${b.flag} ${text}: ${bad}`);
    out[key] = value;
  }
  return out;
}
