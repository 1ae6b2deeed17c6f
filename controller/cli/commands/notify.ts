/**
 * `orchctl notify test CHANNEL`: sends one test message through a NotificationChannel, to see that
 * its destination and secrets work before an Event needs them. Besides the notifier reconciler,
 * this is the only caller of a channel: it reads the object (read-only, like `get`), builds the
 * channel with this process's environment for the secrets, sends once and prints what came of it.
 * Nothing is written to the store, and the send result is already scrubbed of every secret.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { isGoDuration, parseDuration } from '../../api/duration.js';
import type { NotificationChannelSpec, NotificationMessage, NotificationTier } from '../../api/notification-channel.js';
import type { Resource } from '../../api/types.js';
import { createChannel, MAX_TIMEOUT_MS } from '../../notify/channel.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

export interface NotifyTestOptions {
  namespace?: string;
  tier?: string;
  title?: string;
  message?: string;
  timeout?: string;
}

export const TEST_TITLE = 'orchctl test notification';

function parseTier(v: string | undefined): NotificationTier {
  const tier = Number(v ?? '2');
  if (![1, 2, 3, 4].includes(tier)) throw new Error(`--tier "${v}" is not 1 (urgent), 2, 3 or 4 (debug)`);
  return tier as NotificationTier;
}

/** The --timeout flag as the channel's own `timeout` field, bounded the same way. */
function checkTimeout(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!isGoDuration(v) || parseDuration(v) <= 0) throw new Error(`--timeout "${v}" is not a duration like 10s`);
  if (parseDuration(v) > MAX_TIMEOUT_MS) throw new Error(`--timeout may be at most ${MAX_TIMEOUT_MS / 1000}s`);
  return v;
}

/** Why the channel is not there, with the ones that are (a typo is the usual cause). */
function notFound(name: string, ns: string, all: Resource[]): Error {
  const here = all.filter((c) => c.metadata.namespace === ns).map((c) => c.metadata.name);
  const elsewhere = all
    .filter((c) => c.metadata.namespace !== ns)
    .map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
  const what = `notificationchannels "${name}" not found in namespace ${ns}`;
  if (here.length) return new Error(`${what}; channels there: ${here.join(', ')}`);
  if (elsewhere.length) return new Error(`${what}, which has none; in other namespaces (-n): ${elsewhere.join(', ')}`);
  return new Error(`${what}: no NotificationChannels exist (see manifests/notifications/ and orchctl apply)`);
}

export function testMessage(channel: string, ns: string, opts: NotifyTestOptions): NotificationMessage {
  const at = new Date().toISOString();
  const origin =
    `Sent by orchctl notify test through channel "${channel}" in namespace "${ns}" ` +
    `from ${os.hostname()} at ${at}.`;
  return {
    idempotencyKey: `test-${crypto.randomBytes(8).toString('hex')}`,
    tier: parseTier(opts.tier),
    title: opts.title ?? TEST_TITLE,
    body: opts.message ? `${opts.message}\n\n${origin}` : `This is a test notification. ${origin}`,
  };
}

/** Exit status: 0 when the destination took the message, 1 otherwise. */
export async function notifyTestCommand(name: string, opts: NotifyTestOptions, g: GlobalOptions): Promise<number> {
  const timeout = checkTimeout(opts.timeout);
  const ctx = openContext(g, { readonly: true });
  let obj: Resource | undefined;
  let ns: string;
  try {
    ns = namespaceFor(ctx.reg.resolve('notificationchannel'), opts.namespace);
    const n = name.includes('/') ? name.split('/')[1] : name;
    obj = await ctx.store.get({ kind: 'NotificationChannel', namespace: ns, name: n });
    if (!obj) throw notFound(n, ns, (await ctx.store.list('NotificationChannel')).items);
  } finally {
    await ctx.close();
  }
  const spec = obj.spec as NotificationChannelSpec;
  const channel = createChannel(obj.metadata.name, timeout ? { ...spec, timeout } : spec, { env: process.env });
  const message = testMessage(obj.metadata.name, ns, opts);
  const r = await channel.send(message);
  if (r.delivered) {
    out(`sent: ${r.message}; idempotency key ${message.idempotencyKey}\n`);
    return 0;
  }
  const status = r.status !== undefined ? ` (status ${r.status})` : '';
  const retry = r.retryable ? '; retryable: the notifier would try again with backoff' : '';
  // err() redacts again: the result is scrubbed already, this keeps it so whatever it holds.
  err(`error: not sent: ${r.code}${status}: ${r.message}${retry}\n`);
  // The channel's words say "the controller's environment": here it is this shell's.
  if (r.code === 'config') err("note: orchctl notify test reads the channel's secrets from this shell's environment\n");
  return 1;
}
