/**
 * One retry-on-conflict loop, as client-go's `retry.RetryOnConflict`: run `fn` (which reads what it
 * writes afresh each time), and when the store refuses its write as stale (Conflict) run it again, a
 * bounded number of times. A fenced write (this writer's lease is not held) is a Conflict no retry
 * can cure, so it is never retried. Built on cockatiel's retry policy.
 */
import {
  ConstantBackoff,
  ExponentialBackoff,
  halfJitterGenerator,
  handleWhen,
  type IBackoffFactory,
  retry,
} from 'cockatiel';
import { isApiError } from '../api/errors.js';
import { isFenced } from './store.js';

export interface RetryOnConflictOptions {
  /** Runs of `fn` in all, the first included (at least 1). Default 5, as client-go's DefaultRetry. */
  attempts?: number;
  /** Which errors mean "read again and retry". Default: a Conflict that is not a fence. */
  retryOn?: (e: unknown) => boolean;
  /**
   * Wait between runs: exponential from `initialMs` (doubling, at most `maxMs`), each wait drawn from
   * [half, all] of that so that writers who met do not meet again in step. Default none
   * (the next run reads afresh at once, as every writer here did before this helper).
   */
  backoff?: { initialMs: number; maxMs: number };
}

/** A Conflict that reading again may cure (not a fence). */
export const isRetryableConflict = (e: unknown): boolean => isApiError(e, 'Conflict') && !isFenced(e);

/**
 * `fn(attempt)` (attempt 0 first) until it returns, throws an error `retryOn` does not accept, or
 * `attempts` runs are spent; then the last run's error is thrown.
 */
export async function retryOnConflict<T>(
  fn: (attempt: number) => Promise<T>,
  opts: RetryOnConflictOptions = {},
): Promise<T> {
  const attempts = Math.max(1, Math.floor(opts.attempts ?? 5));
  const backoff: IBackoffFactory<unknown> = opts.backoff
    ? new ExponentialBackoff({
        generator: halfJitterGenerator,
        initialDelay: opts.backoff.initialMs,
        maxDelay: opts.backoff.maxMs,
      })
    : new ConstantBackoff(0);
  const policy = retry(handleWhen(opts.retryOn ?? isRetryableConflict), { maxAttempts: attempts - 1, backoff });
  return policy.execute(({ attempt }) => fn(attempt));
}
