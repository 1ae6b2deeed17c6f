/**
 * A channel: one configured destination that sends one message, through its type's driver
 * (drivers.ts), and says what came of it. A send never throws: a missing secret, a bad spec, a refusing or
 * silent destination all come back as a result, classified as retryable or not, with a message
 * that names the channel and holds no secret. The notifier keeps one Channel per
 * NotificationChannel object (its rate limit lives in it) and records each result in the outbox.
 */
import { parseDuration } from '../api/duration.js';
import type {
  ChannelType,
  NotificationChannelSpec,
  NotificationMessage,
  NotificationSendResult,
} from '../api/notification-channel.js';
import { channelDriver } from './drivers.js';
import { SlidingWindowLimit } from './rate-limit.js';
import { ChannelConfigError, failed } from './result.js';
import { SecretScope } from './secrets.js';
import { DEFAULT_TIMEOUT_MS, specProblem } from './spec.js';

export { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, specProblem } from './spec.js';

const MAX_KEY = 200;

export interface Channel {
  readonly name: string;
  readonly type: ChannelType;
  send(message: NotificationMessage, opts?: { signal?: AbortSignal }): Promise<NotificationSendResult>;
}

export interface ChannelOptions {
  /** Where `…From.env` secrets and a command's `valueFrom` are read; the controller's own by default. */
  env?: NodeJS.ProcessEnv;
  /** The clock of the rate limit. */
  now?: () => number;
}

/** What is wrong with a message, or undefined (the key goes into a header as it is). */
function messageProblem(m: NotificationMessage): string | undefined {
  if (typeof m.idempotencyKey !== 'string' || !/^[\x21-\x7e]+$/.test(m.idempotencyKey))
    return 'the message has no idempotency key of printable ASCII without spaces';
  if (m.idempotencyKey.length > MAX_KEY) return `the message's idempotency key is over ${MAX_KEY} characters`;
  if (![1, 2, 3, 4].includes(m.tier)) return `the message's tier ${m.tier} is not 1-4`;
  return undefined;
}

export function createChannel(name: string, spec: NotificationChannelSpec, opts: ChannelOptions = {}): Channel {
  const env = opts.env ?? process.env;
  const type = spec.type;
  const label = `${type} channel "${name}"`;
  const problem = specProblem(spec);
  const timeoutMs = spec.timeout && !problem ? parseDuration(spec.timeout) : DEFAULT_TIMEOUT_MS;
  const limit =
    spec.rateLimit && !problem
      ? new SlidingWindowLimit(spec.rateLimit.count, parseDuration(spec.rateLimit.per), opts.now)
      : undefined;
  const driver = problem ? undefined : channelDriver(type);

  return {
    name,
    type,
    async send(message, { signal } = {}) {
      if (!driver) return failed('config', label, problem ?? 'unknown type');
      const bad = messageProblem(message);
      if (bad) return failed('config', label, bad);
      const waitMs = limit?.take();
      if (waitMs !== undefined)
        return failed('rate_limited', label, `over the channel's rateLimit; next slot in ${waitMs} ms`, {
          retryAfterMs: waitMs,
        });
      const secrets = new SecretScope(env);
      let result: NotificationSendResult;
      try {
        result = await driver.send(spec, { name, label, message, timeoutMs, signal, secrets, env });
      } catch (e) {
        result =
          e instanceof ChannelConfigError
            ? failed('config', label, e.message)
            : failed('server_error', label, `unexpected failure: ${(e as Error)?.message ?? String(e)}`);
      }
      return { ...result, message: secrets.clean(result.message) };
    },
  };
}
