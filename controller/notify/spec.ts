/**
 * What is wrong with a channel's spec as written, before any secret is read: shared by the
 * channel itself and by apply's admission (client/admission.ts), which must not load the senders
 * (nodemailer, execa) on every `orchctl apply`.
 */
import { isGoDuration, parseDuration } from '../api/duration.js';
import { isLoopbackHost, plaintextRefusal } from '../api/endpoint.js';
import type { NotificationChannelSpec } from '../api/notification-channel.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
/** A send that needs longer is holding the outbox up; the spec may not ask for more. */
export const MAX_TIMEOUT_MS = 5 * 60_000;
const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

function durationProblem(field: string, value: string | undefined, max?: number): string | undefined {
  if (value === undefined) return undefined;
  if (!isGoDuration(value)) return `${field} "${value}" is not a duration like 10s`;
  const ms = parseDuration(value);
  if (ms <= 0) return `${field} must be positive`;
  if (max !== undefined && ms > max) return `${field} may be at most ${max / 1000}s`;
  return undefined;
}

/** An IPv6 address as URL.hostname spells it (isLoopbackHost's form). */
const bracketed = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

function plaintextToAnotherHost(url: string): boolean {
  try {
    return !!plaintextRefusal(new URL(url));
  } catch {
    return false;
  }
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
  switch (spec.type) {
    case 'webhook':
      if (!spec.urlFrom) return 'a webhook needs urlFrom (the URL is a secret)';
      if (spec.format !== undefined && spec.format !== 'json' && spec.format !== 'slack')
        return `format "${spec.format}" is not json or slack`;
      return undefined;
    case 'ntfy':
      if (spec.urlFrom) return spec.server || spec.topic ? 'urlFrom replaces server and topic' : undefined;
      if (!spec.server || !spec.topic) return 'ntfy needs urlFrom, or server and topic';
      if (!/^https?:\/\//.test(spec.server)) return 'server must be an http(s) URL';
      if (spec.tokenFrom && plaintextToAnotherHost(spec.server))
        return 'server is plain http:// to another host: the token (tokenFrom) would travel in clear; use https://';
      return TOPIC.test(spec.topic) ? undefined : 'topic may hold letters, digits, - and _ (at most 64)';
    case 'email':
      if (!spec.host) return 'email needs host';
      if (spec.port !== undefined && (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535))
        return 'port must be 1-65535';
      if (!spec.from) return 'email needs from';
      if (!spec.to?.length) return 'email needs at least one address in to';
      if (!spec.usernameFrom !== !spec.passwordFrom) return 'usernameFrom and passwordFrom go together';
      if (spec.usernameFrom && !spec.secure && !spec.requireTLS && !isLoopbackHost(bracketed(spec.host)))
        return (
          `requireTLS must be true (or secure: true, port 465) to send the credentials to ${spec.host}: ` +
          'otherwise they travel in clear to a server that offers no TLS'
        );
      return undefined;
    case 'command':
      return spec.command?.length && spec.command[0] ? undefined : 'command needs a program';
    default:
      return `type "${(spec as { type?: string }).type}" is not webhook, ntfy, email or command`;
  }
}
