/**
 * Send results and the one place that says which outcomes are worth retrying: the destination
 * failing or asking to wait (5xx, 429, SMTP 4xx, exit 75), a time limit, a cancelled send or a
 * connection that did not happen may go through later; a refusal of this message (4xx, SMTP 5xx)
 * or a configuration that cannot work will not, however often it is tried.
 */
import type { NotificationSendCode, NotificationSendResult } from '../api/notification-channel.js';

const RETRYABLE: Record<NotificationSendCode, boolean> = {
  sent: false,
  rejected: false,
  server_error: true,
  rate_limited: true,
  timeout: true,
  cancelled: true,
  network: true,
  config: false,
};

export function sent(label: string, detail: string, status?: number): NotificationSendResult {
  return { delivered: true, code: 'sent', status, message: `${label}: delivered (${detail})`, retryable: false };
}

export function failed(
  code: Exclude<NotificationSendCode, 'sent'>,
  label: string,
  text: string,
  extra: { status?: number; retryAfterMs?: number } = {},
): NotificationSendResult {
  return { delivered: false, code, message: `${label}: ${text}`, retryable: RETRYABLE[code], ...extra };
}

/** A channel or message that cannot work as written; caught at the channel and reported as `config`. */
export class ChannelConfigError extends Error {}

/** An error's text squeezed to one short line, for quoting a server's or a program's words. */
export function excerpt(text: string, max = 200): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, max);
}

/** TLS verification failures: a retry meets the same certificate. */
const TLS_CODE = /^(CERT_|ERR_TLS_|ERR_SSL_|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT|UNABLE_TO_(GET|VERIFY)|HOSTNAME_)/;

/**
 * A socket-level failure by its code: a certificate that does not verify is configuration, a
 * connect timeout is a timeout, anything else (refused, reset, unreachable, not resolved) network.
 */
export function socketFailure(label: string, code: string | undefined, fallback: string): NotificationSendResult {
  if (code && TLS_CODE.test(code))
    return failed('config', label, `TLS: the server's certificate is not trusted (${code})`);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return failed('timeout', label, `the connection timed out (${code})`);
  if (code === 'ECONNREFUSED') return failed('network', label, 'connection refused (ECONNREFUSED)');
  return failed('network', label, code ? `cannot reach the destination (${code})` : fallback);
}
