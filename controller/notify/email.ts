/**
 * The email channel: one message over SMTP with nodemailer — TLS from the start (`secure`) or
 * STARTTLS (`requireTLS` refuses to go on without it), optional credentials from secrets, every
 * wait bounded by the channel's timeout, and a Message-ID derived from the idempotency key so a
 * re-sent notification is recognisably the same mail. A fresh connection per message: notifications
 * are few, and a rotated password file is read on the next send.
 */
import fs from 'node:fs';
import type { NodemailerError } from 'nodemailer';
import { isLoopbackHost } from '../api/endpoint.js';
import type { EmailChannelSpec, NotificationSendResult } from '../api/notification-channel.js';
import type { SendContext } from './context.js';
import type { ChannelDriver } from './driver.js';
import { emailContent } from './format.js';
import { ChannelConfigError, excerpt, failed, sent, socketFailure } from './result.js';

function credentials(spec: EmailChannelSpec, ctx: SendContext): { user: string; pass: string } | undefined {
  if (!spec.usernameFrom && !spec.passwordFrom) return undefined;
  if (!spec.usernameFrom || !spec.passwordFrom)
    throw new ChannelConfigError('usernameFrom and passwordFrom go together');
  return {
    user: ctx.secrets.read('usernameFrom', spec.usernameFrom),
    pass: ctx.secrets.read('passwordFrom', spec.passwordFrom),
  };
}

function readCa(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new ChannelConfigError(`tls.caFile ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** An IPv6 address as URL.hostname spells it (isLoopbackHost's form). */
const bracketed = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export const emailDriver: ChannelDriver<EmailChannelSpec, ReturnType<typeof emailContent>> = {
  type: 'email',
  fields: ['host', 'port', 'secure', 'requireTLS', 'tls', 'from', 'to', 'usernameFrom', 'passwordFrom'],
  validate(spec) {
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
  },
  format: (spec, _channel, m) => emailContent(m, spec.from),
  send: sendEmail,
};

async function sendEmail(spec: EmailChannelSpec, ctx: SendContext): Promise<NotificationSendResult> {
  const { label, timeoutMs } = ctx;
  const auth = credentials(spec, ctx);
  // Loaded on the first mail, not with the driver: apply's admission validates channels without it.
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    host: spec.host,
    port: spec.port,
    secure: spec.secure ?? false,
    requireTLS: spec.requireTLS ?? false,
    auth,
    tls: spec.tls?.caFile ? { ca: readCa(spec.tls.caFile) } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    // The message is ours, but nothing in it should make nodemailer read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const content = emailDriver.format(spec, ctx.name, ctx.message);
  // The socket timeouts bound each wait; this bounds the whole exchange, as for the other channels.
  const signal = AbortSignal.any([AbortSignal.timeout(Math.max(1, timeoutMs)), ...(ctx.signal ? [ctx.signal] : [])]);
  try {
    const info = await transport.sendMail({ from: spec.from, to: spec.to, ...content, signal });
    const status = Number.parseInt(String(info.response ?? ''), 10);
    const rejected = info.rejected?.length ?? 0;
    return sent(
      label,
      `SMTP ${excerpt(String(info.response ?? ''), 80)}${rejected ? `; ${rejected} recipient(s) refused` : ''}`,
      Number.isNaN(status) ? undefined : status,
    );
  } catch (e) {
    return smtpFailure(label, e as NodemailerError, timeoutMs, ctx.signal);
  } finally {
    transport.close();
  }
}

function smtpFailure(label: string, e: NodemailerError, timeoutMs: number, outer?: AbortSignal) {
  if (outer?.aborted) return failed('cancelled', label, 'the send was cancelled');
  if (e.name === 'AbortError' || e.code === 'EABORT' || e.code === 'ETIMEDOUT')
    return failed('timeout', label, `the SMTP exchange did not finish within ${timeoutMs} ms`);
  const said = excerpt(e.response ?? e.message ?? '');
  const status = e.responseCode;
  // nodemailer sets `permanent` from the reply class: 5xx (but 503) will be refused again, 4xx may pass later.
  const permanent = e.permanent ?? (status !== undefined && status >= 500 && status !== 503);
  // e.message says what the TLS step was ("Error upgrading connection with STARTTLS: 500 …").
  if (e.code === 'ETLS' || e.code === 'EREQUIRETLS')
    return failed('config', label, `TLS: ${excerpt(e.message ?? '')}`, { status });
  if (e.code === 'EAUTH' && (permanent || !status))
    return failed('config', label, `login refused: ${said}`, { status });
  if (status && permanent)
    return failed('rejected', label, `the server refused (${e.command ?? 'SMTP'}): ${said}`, { status });
  if (status)
    return failed('server_error', label, `the server asks to try later (${e.command ?? 'SMTP'}): ${said}`, { status });
  if (e.code === 'ECONNECTION' || e.code === 'ESOCKET' || e.code === 'EDNS')
    // Node's own code stays underneath nodemailer's: a certificate error, ECONNREFUSED.
    return socketFailure(label, (e as { originalCode?: string }).originalCode, `cannot reach the SMTP server: ${said}`);
  if (e.code === 'EPROTOCOL') return failed('server_error', label, `the server's answer makes no sense: ${said}`);
  return failed('config', label, `${e.code ?? 'error'}: ${said}`);
}
