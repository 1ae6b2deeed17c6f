/**
 * What is wrong with a channel's spec as written, before any secret is read: shared by the
 * channel itself and by apply's admission (client/admission.ts). The common fields are checked
 * here, the type's own by its driver (drivers.ts), whose sending library loads only on a send.
 */
import { isGoDuration, parseDuration } from '../api/duration.js';
import type { NotificationChannelSpec } from '../api/notification-channel.js';
import { CHANNEL_TYPES, channelDriver } from './drivers.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
/** A send that needs longer is holding the outbox up; the spec may not ask for more. */
export const MAX_TIMEOUT_MS = 5 * 60_000;

function durationProblem(field: string, value: string | undefined, max?: number): string | undefined {
  if (value === undefined) return undefined;
  if (!isGoDuration(value)) return `${field} "${value}" is not a duration like 10s`;
  const ms = parseDuration(value);
  if (ms <= 0) return `${field} must be positive`;
  if (max !== undefined && ms > max) return `${field} may be at most ${max / 1000}s`;
  return undefined;
}

/** What is wrong with a spec as written (before any secret is read), or undefined. */
export function specProblem(spec: NotificationChannelSpec): string | undefined {
  const common =
    durationProblem('timeout', spec.timeout, MAX_TIMEOUT_MS) ??
    (spec.rateLimit &&
      (!Number.isInteger(spec.rateLimit.count) || spec.rateLimit.count < 1
        ? 'rateLimit.count must be a whole number of at least 1'
        : durationProblem('rateLimit.per', spec.rateLimit.per)));
  if (common) return common;
  const driver = channelDriver(spec.type);
  if (!driver) return `type "${(spec as { type?: string }).type}" is not ${orList(CHANNEL_TYPES)}`;
  return driver.validate(spec);
}

/** ['a', 'b', 'c'] → "a, b or c". */
function orList(words: readonly string[]): string {
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}
