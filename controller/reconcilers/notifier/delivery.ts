/**
 * Delivery: one Notification per key. A `Pending` notification is sent through its channel and
 * then marked: Sent; Pending again with the next attempt's time (retryable failures, exponential
 * backoff with jitter, a server's Retry-After honoured); or Failed (refused, or retries used up),
 * with a Warning Event on the channel. The record was written before the send (the router's
 * transaction), so a crash before the send leaves it Pending and a crash after it leaves it
 * Pending too. A send that returned delivered is in the channel's delivered-keys record
 * (delivered.ts) before the mark: the next attempt finds its key there and marks it Sent unsent.
 * A send in flight at the crash is sent again with the same idempotency key, which receivers that
 * honour one (webhook's Idempotency-Key, email's Message-ID, a command's ORCHCTL_NOTIFICATION_KEY)
 * use to drop the duplicate.
 */
import { NotifierReason } from '../../api/event-reasons.js';
import { isApiError } from '../../api/errors.js';
import type { NotifierMetricsHooks } from '../../api/metrics-hooks.js';
import type { NotificationChannelSpec, NotificationSendResult } from '../../api/notification-channel.js';
import type { Notification, NotificationStatus } from '../../api/outbox.js';
import type { Resource } from '../../api/types.js';
import type { EventRecorder } from '../../client/events.js';
import { type Channel, createChannel } from '../../notify/channel.js';
import { sent } from '../../notify/result.js';
import type { Result } from '../../runtime/controller.js';
import { failpoint } from '../../runtime/failpoints.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Store } from '../../store/store.js';
import type { DeliveredKeys } from './delivered.js';
import { channelMessage } from './message.js';
import { type LinkConfig, withActionLinks } from './action-links.js';

/** Attempts before a retryable failure becomes Failed: 1 s doubling to 10 min, about 40 minutes in all. */
export const MAX_ATTEMPTS = 12;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10 * 60_000;
/** A Retry-After longer than this is capped: the notification still counts its attempts. */
const MAX_RETRY_AFTER_MS = 3600_000;

export interface DeliveryDeps {
  store: Store;
  notifications: Pick<Informer<'Notification'>, 'get'>;
  channels: Pick<Informer<'NotificationChannel'>, 'get'>;
  recorder: EventRecorder;
  log: Logger;
  metrics?: NotifierMetricsHooks;
  /** Where channels read `{env: NAME}` secrets (the controller's environment by default). */
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  random?: () => number;
  /** The channels' delivered-keys records (none: a crash between a send and its mark sends it again). */
  delivered?: DeliveredKeys;
  /** Approve/reject links on a pending Decision's message (none: the message says how to answer from the CLI). */
  links?: LinkConfig;
}

const iso = (t: number) => new Date(t).toISOString();

/** The wait before attempt `attempts + 1`: doubling from 1 s, capped, ±20 % so a burst of failures spreads out. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class DeliveryReconciler {
  /** Channels built once per spec generation: a channel's rate limit lives in it. */
  private readonly built = new Map<string, { generation: number; channel: Channel }>();
  private readonly abort = new AbortController();

  constructor(private readonly d: DeliveryDeps) {}

  stop(): void {
    this.abort.abort();
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const cached = this.d.notifications.get(namespace, name);
    if (!cached?.spec || cached.status?.phase !== 'Pending') return;
    // The cache may not have our own last write yet (it arrives with the next watch delivery):
    // a message is only sent on what the store says now, one read per send.
    const n = await this.d.store.get({ kind: 'Notification', namespace, name });
    if (!n?.spec || n.status?.phase !== 'Pending') return;
    const now = (this.d.now ?? Date.now)();
    const wait = Date.parse(n.status.nextAttemptAt ?? '') - now;
    if (wait > 0) return { requeueAfterMs: wait };

    const obj = this.d.channels.get(namespace, n.spec.channel);
    const channelKey = `${namespace}/${n.spec.channel}`;
    const msgKey = channelMessage(n).idempotencyKey;
    if (obj?.spec && this.d.delivered?.has(channelKey, msgKey))
      return this.mark(n, obj, sent(`${n.spec.channel}`, 'already delivered before a restart: not sent again'));
    const result: NotificationSendResult = obj?.spec
      ? await this.send(obj, n)
      : {
          delivered: false,
          code: 'config',
          message: `no NotificationChannel "${n.spec.channel}" in namespace ${namespace || 'default'}`,
          retryable: true,
        };
    failpoint('notifier-before-record');
    if (result.delivered) this.d.delivered?.add(channelKey, msgKey);
    failpoint('notifier-after-send');
    return this.mark(n, obj, result);
  }

  private async send(obj: Resource, n: Notification): Promise<NotificationSendResult> {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const generation = obj.metadata.generation ?? 0;
    let b = this.built.get(key);
    if (!b || b.generation !== generation) {
      const channel = createChannel(obj.metadata.name, obj.spec as NotificationChannelSpec, { env: this.d.env });
      b = { generation, channel };
      this.built.set(key, b);
    }
    const message = await withActionLinks(this.d.store, n, channelMessage(n), this.d.links, (this.d.now ?? Date.now)());
    failpoint('notifier-before-send');
    return b.channel.send(message, { signal: this.abort.signal });
  }

  private async mark(n: Notification, channel: Resource | undefined, r: NotificationSendResult) {
    const now = (this.d.now ?? Date.now)();
    const attempts = (n.status?.attempts ?? 0) + 1;
    const base: NotificationStatus = {
      phase: 'Pending',
      attempts,
      lastAttemptAt: iso(now),
      code: r.code,
      message: r.message,
      ...(r.status !== undefined ? { httpStatus: r.status } : {}),
    };
    const { spec } = n;
    let status: NotificationStatus;
    let requeue: number | undefined;
    if (r.delivered) status = { ...base, phase: 'Sent', sentAt: iso(now) };
    else if (r.retryable && attempts < MAX_ATTEMPTS && !this.abort.signal.aborted) {
      requeue = Math.max(backoffMs(attempts, this.d.random), Math.min(r.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
      status = { ...base, nextAttemptAt: iso(now + requeue) };
    } else if (r.retryable && this.abort.signal.aborted) status = { ...base, attempts: attempts - 1 };
    else status = { ...base, phase: 'Failed', reason: r.code };
    try {
      await this.d.store.updateStatus({ ...n, status });
    } catch (e) {
      // Someone else moved it on (a second controller during a lease hand-over): theirs stands.
      if (isApiError(e, 'Conflict') || isApiError(e, 'NotFound')) return;
      throw e;
    }
    const result = status.phase === 'Sent' ? 'sent' : status.phase === 'Failed' ? 'failed' : 'retry';
    if (!this.abort.signal.aborted || result !== 'retry')
      this.d.metrics?.onNotification?.(spec!.channel, spec!.tier, result);
    if (result === 'sent') {
      const from = Date.parse(spec!.event?.lastTimestamp ?? n.metadata.creationTimestamp ?? '');
      if (from) this.d.metrics?.onDelivered?.(spec!.channel, spec!.tier, Math.max(0, now - from) / 1000);
    } else this.d.log.warn(`notification ${n.metadata.name} to ${spec!.channel}: ${r.code}: ${r.message}`);
    // A failed message about a failed channel tells of nothing new: two failing channels must not
    // keep notifying each other.
    if (result === 'failed' && channel && spec!.event?.reason !== NotifierReason.NotificationFailed)
      await this.d.recorder.record(
        channel,
        'Warning',
        NotifierReason.NotificationFailed,
        `notification ${n.metadata.name} (${spec!.title}) was not delivered after ${attempts} attempt(s): ${r.message}`,
      );
    return requeue !== undefined ? { requeueAfterMs: requeue } : undefined;
  }
}
