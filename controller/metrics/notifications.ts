/**
 * The notifier's metrics (issue 14), both patterns of docs/monitoring.md "Adding metrics":
 *  - what happens, through NotifierMetricsHooks (controller/api/metrics-hooks.ts), counted once by
 *    the process where it happens:
 *    orchctl_notifications_total{channel, tier, result} — what became of each message on a channel;
 *    orchctl_notification_delivery_seconds{channel, tier} — the Event's last occurrence to the
 *    channel taking the message;
 *  - what each NotificationChannel's status says (the notifier writes its day so far there), read
 *    from the informer cache at scrape time, so the figures survive a restart and a deleted
 *    channel's series go with it:
 *    orchctl_notification_budget, orchctl_notification_budget_remaining,
 *    orchctl_notifications_waiting{state}, orchctl_notification_channel_failing.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { NotificationResult, NotifierMetricsHooks } from '../api/metrics-hooks.js';
import type { NotificationChannelSpec, NotificationTier } from '../api/notification-channel.js';
import type { NotificationChannelStatus } from '../api/outbox.js';
import type { Resource } from '../api/types.js';
import { type Emit, ScrapeFamily } from './family.js';

export type NotificationChannelObject = Resource<NotificationChannelSpec, NotificationChannelStatus>;

export const NOTIFICATION_RESULTS: readonly NotificationResult[] = [
  'sent',
  'failed',
  'retry',
  'deferred',
  'batched',
  'digest',
  'suppressed',
];

/**
 * Tier 1 is meant to arrive within 1 s (fine buckets up to 5 s); deferred messages wait for the
 * end of quiet hours, a tier-3 batch (default every 4 h) or a group interval (coarse buckets).
 */
export const NOTIFICATION_DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30, 300, 3600, 14_400, 43_200];

/** The waiting phases a channel's status counts: each is both the `state` label and the status field. */
const WAITING = ['deferred', 'batched', 'digest'] as const;

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export class NotifierMetrics implements NotifierMetricsHooks {
  private readonly notifications: Counter<'channel' | 'tier' | 'result'>;
  private readonly delivery: Histogram<'channel' | 'tier'>;
  /** channel/tier pairs whose result series exist, so increase() sees a pair's first failure. */
  private readonly seen = new Set<string>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.notifications = new Counter({
      name: 'orchctl_notifications_total',
      help:
        'What became of notifications on a channel, by channel, tier and result ' +
        '(sent, failed, retry, deferred, batched, digest, suppressed).',
      labelNames: ['channel', 'tier', 'result'],
      registers,
    });
    this.delivery = new Histogram({
      name: 'orchctl_notification_delivery_seconds',
      help: "Time from the Event's last occurrence to the channel taking the message, by channel and tier.",
      labelNames: ['channel', 'tier'],
      buckets: NOTIFICATION_DELIVERY_BUCKETS,
      registers,
    });
  }

  onNotification(channel: string, tier: NotificationTier, result: NotificationResult): void {
    const t = String(tier);
    const key = `${channel}\0${t}`;
    if (!this.seen.has(key)) {
      this.seen.add(key);
      for (const r of NOTIFICATION_RESULTS) this.notifications.inc({ channel, tier: t, result: r }, 0);
    }
    this.notifications.inc({ channel, tier: t, result });
  }

  onDelivered(channel: string, tier: NotificationTier, seconds: number): void {
    this.delivery.observe({ channel, tier: String(tier) }, seconds);
  }
}

/** The per-channel gauges, from the status the notifier writes; nothing for a channel it has not written yet. */
export function registerChannelMetrics(registry: Registry, channels: () => Iterable<NotificationChannelObject>): void {
  const family = (
    name: string,
    help: string,
    extra: readonly string[],
    series: (st: NotificationChannelStatus, emit: Emit) => void,
  ) =>
    new ScrapeFamily(registry, {
      name,
      help,
      type: 'gauge',
      labelNames: ['namespace', 'channel', ...extra],
      objects: channels,
      id: (c: NotificationChannelObject) => [c.metadata.namespace ?? '', c.metadata.name],
      series: (c, emit) => {
        if (c.status) series(c.status, emit);
      },
    });
  family(
    'orchctl_notification_budget',
    "The channel's daily budget: messages a day before tier 2/3 wait.",
    [],
    (st, emit) => {
      if (finite(st.budget)) emit([], st.budget);
    },
  );
  family(
    'orchctl_notification_budget_remaining',
    "Messages left in the channel's daily budget today (budget - sent, at least 0); tier 1 sends past it.",
    [],
    (st, emit) => {
      if (finite(st.budget) && finite(st.sent)) emit([], Math.max(0, st.budget - st.sent));
    },
  );
  family(
    'orchctl_notifications_waiting',
    'Notifications waiting on the channel, by state: deferred (quiet hours, group timers), batched (tier 3), ' +
      'digest (past the budget).',
    ['state'],
    (st, emit) => {
      for (const state of WAITING) emit([state], finite(st[state]) ? st[state] : 0);
    },
  );
  family(
    'orchctl_notification_channel_failing',
    "Whether the channel's last send attempt failed (1) or not (0).",
    [],
    (st, emit) => emit([], st.failing ? 1 : 0),
  );
}
