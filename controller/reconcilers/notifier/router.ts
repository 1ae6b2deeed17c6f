/**
 * The router: one NotificationPolicy per key. Reads the policy's Events, outbox, channels and
 * silences from the caches, plans (plan.ts), and writes the plan in one transaction together with
 * the policy's Event cursor, guarded by the policy's resourceVersion: a stale cache or a second
 * controller loses the compare-and-swap and tries again, so an Event's notifications are
 * recorded once. Sending is the delivery reconciler's job; the router never calls a channel.
 */
import { NotifierReason } from '../../api/event-reasons.js';
import { isApiError } from '../../api/errors.js';
import type { EventObject } from '../../api/event.js';
import type { NotifierMetricsHooks } from '../../api/metrics-hooks.js';
import { DEFAULT_DAILY_BUDGET, DEFAULT_TIME_ZONE } from '../../api/notification.js';
import type { NotificationChannelSpec } from '../../api/notification-channel.js';
import type { NotificationChannelStatus } from '../../api/outbox.js';
import type { Resource } from '../../api/types.js';
import type { EventRecorder } from '../../client/events.js';
import type { Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Store, WriteOp } from '../../store/store.js';
import { isDeepStrictEqual } from 'node:util';
import { channelStatus } from './outbox.js';
import { planRouting } from './plan.js';
import { silenceUpdates } from './silences.js';
import { budgetDay } from '../../notify/quiet-hours.js';

/** Longest wait before the router looks at a policy again even when nothing woke it. */
const MAX_SLEEP_MS = 3600_000;
/** After losing a compare-and-swap to a cache that is a moment behind. */
const RETRY_MS = 20;

export interface RouterDeps {
  store: Store;
  policies: Pick<Informer<'NotificationPolicy'>, 'get' | 'list'>;
  channels: Pick<Informer<'NotificationChannel'>, 'list'>;
  notifications: Pick<Informer<'Notification'>, 'list'>;
  events: Pick<Informer<'Event'>, 'list'>;
  silences: Pick<Informer<'Silence'>, 'list'>;
  labelsOf?: (e: EventObject) => Record<string, string> | undefined;
  /** Whether the condition an Event told of is still True (plan.ts RouterInput.stillTrue). */
  stillTrue?: (e: EventObject) => boolean | undefined;
  recorder: EventRecorder;
  log: Logger;
  metrics?: NotifierMetricsHooks;
  now?: () => number;
  /** How long settled Notifications are kept (plan.ts RETENTION_MS by default). */
  retentionMs?: number;
}

const lost = (e: unknown) => isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') || isApiError(e, 'NotFound');

export class RouterReconciler {
  constructor(private readonly d: RouterDeps) {}

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const policy = this.d.policies.get(namespace, name);
    if (!policy?.spec || policy.metadata.deletionTimestamp) return;
    const now = (this.d.now ?? Date.now)();
    const channels = this.d.channels.list(namespace);
    const outbox = this.d.notifications.list(namespace).filter((n) => n.spec?.policy === name);
    const silences = this.d.silences.list(namespace);
    const plan = planRouting({
      now,
      policy,
      channels: Object.fromEntries(channels.map((c) => [c.metadata.name, (c.spec ?? {}) as { dailyBudget?: number }])),
      outbox,
      events: this.d.events.list(namespace),
      silences,
      labelsOf: this.d.labelsOf,
      stillTrue: this.d.stillTrue,
      retentionMs: this.d.retentionMs,
    });
    const ops: WriteOp[] = [
      ...plan.create.flatMap((n): WriteOp[] => [
        { op: 'create', object: n },
        { op: 'updateStatus', object: n },
      ]),
      ...plan.update.map((n): WriteOp => ({ op: 'updateStatus', object: n })),
      ...plan.delete.map(
        (n): WriteOp => ({
          op: 'delete',
          key: { kind: 'Notification', namespace, name: n.metadata.name },
          options: { resourceVersion: n.metadata.resourceVersion },
        }),
      ),
    ];
    const statusChanged = !isDeepStrictEqual(plan.status, policy.status ?? {});
    if (ops.length || statusChanged) {
      // The policy's write goes last and always: its resourceVersion guards the whole transaction.
      ops.push({ op: 'updateStatus', object: { ...policy, status: plan.status } });
      try {
        await this.d.store.txn(ops);
      } catch (e) {
        if (lost(e)) return { requeueAfterMs: RETRY_MS };
        throw e;
      }
    }
    for (const r of plan.results) this.d.metrics?.onNotification?.(r.channel, r.tier, r.result);
    for (const n of plan.create)
      this.d.log.debug(`notification ${namespace}/${n.metadata.name}: ${n.spec!.title} → ${n.status!.phase}`);
    for (const w of plan.warnings) {
      const ch = channels.find((c) => c.metadata.name === w.channel);
      if (ch) await this.d.recorder.record(ch, 'Warning', NotifierReason.NotificationBudget, w.message);
    }
    await this.writeChannelStatus(namespace, channels, now);
    const sil = silenceUpdates(silences, now);
    for (const [s, state] of sil.changed) await this.writeStatus({ ...s, status: { state } });
    const next = Math.min(plan.next ?? Number.POSITIVE_INFINITY, sil.next ?? Number.POSITIVE_INFINITY);
    return { requeueAfterMs: Math.min(MAX_SLEEP_MS, Math.max(1, next - now)) };
  }

  /**
   * Each channel's day so far, from the outbox of every policy in the namespace. The budget and the
   * day follow the first policy by name, so two policies do not take turns rewriting it.
   */
  private async writeChannelStatus(namespace: string, channels: Resource[], now: number): Promise<void> {
    const first = this.d.policies
      .list(namespace)
      .filter((p) => p.spec)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))[0];
    const day = budgetDay(now, first?.spec?.timeZone ?? DEFAULT_TIME_ZONE);
    const outbox = this.d.notifications.list(namespace);
    for (const ch of channels) {
      const spec = ch.spec as NotificationChannelSpec | undefined;
      const budget = spec?.dailyBudget ?? first?.spec?.dailyBudget ?? DEFAULT_DAILY_BUDGET;
      const status: NotificationChannelStatus = channelStatus(ch.metadata.name, outbox, day, budget);
      if (!isDeepStrictEqual(status, ch.status ?? {})) await this.writeStatus({ ...ch, status });
    }
  }

  /** A status derived from other objects: a lost race is fine, the next reconcile writes it again. */
  private async writeStatus(o: Resource): Promise<void> {
    try {
      await this.d.store.updateStatus(o);
    } catch (e) {
      if (!lost(e)) throw e;
    }
  }
}
