/**
 * How long a stop waits for the work in flight (`--shutdown-grace`, like Kubernetes'
 * terminationGracePeriodSeconds): a stop takes no new work at once, lets the reconciles in flight
 * finish until the grace runs out, then releases the leases, closes the event logs and the store,
 * and exits — non-zero if work was still running. Crash-only makes that safe: the next start adopts
 * what runs and converges.
 */
import { formatDuration, parseDuration } from '../api/duration.js';

export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
export const MIN_SHUTDOWN_GRACE_MS = 1000;
export const MAX_SHUTDOWN_GRACE_MS = 10 * 60_000;
/**
 * Past the grace, at most this long for what must still be done (the leases released, the logs and
 * the store closed) before the process exits regardless: a store that does not answer cannot keep it.
 */
export const SHUTDOWN_TEARDOWN_MS = 5000;

/** Why `ms` is no shutdown grace, or undefined. */
export function checkShutdownGrace(ms: number): string | undefined {
  if (Number.isFinite(ms) && ms >= MIN_SHUTDOWN_GRACE_MS && ms <= MAX_SHUTDOWN_GRACE_MS) return undefined;
  return `must be a duration from ${formatDuration(MIN_SHUTDOWN_GRACE_MS)} to ${formatDuration(MAX_SHUTDOWN_GRACE_MS)}`;
}

/** `--shutdown-grace`: milliseconds (the default when not given); throws naming the flag outside the bounds. */
export function shutdownGraceMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SHUTDOWN_GRACE_MS;
  let ms: number;
  try {
    ms = parseDuration(text);
  } catch {
    ms = Number.NaN;
  }
  const bad = checkShutdownGrace(ms);
  if (bad) throw new Error(`--shutdown-grace ${text}: ${bad}`);
  return ms;
}

/** Whether `work` settles before the time `at` (Date.now() ms); its failure counts as settled. */
export async function settlesBy(work: Promise<unknown>, at: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, at - Date.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
