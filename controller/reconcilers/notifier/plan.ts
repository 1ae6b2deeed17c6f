/**
 * The router's plan for one NotificationPolicy: given the Events of its namespace, its outbox and
 * the clock, which Notifications to record, which to move on (a deferral due, a batch to flush),
 * which old ones to delete, and how far the Event cursor advances. Pure: the reconciler reads the
 * inputs and performs the writes, all in one transaction with the cursor, so a crash either
 * records an Event's notifications and moves the cursor past it, or neither.
 */
import type { EventObject } from '../../api/event.js';
import type { BudgetWarning, NotificationDecision, NotificationPolicy, Silence } from '../../api/notification.js';
import { DEFAULT_TIME_ZONE, type NotificationTier as Tier, REPEAT_ESCALATION } from '../../api/notification.js';
import { AgentConditionReason, NotifierReason } from '../../api/event-reasons.js';
import type { NotificationResult } from '../../api/metrics-hooks.js';
import {
  NOTIFICATION_LABELS,
  type Notification,
  type NotificationPolicyStatus,
  type NotificationSpec,
  type NotificationStatus,
} from '../../api/outbox.js';
import { API_VERSION } from '../../api/types.js';
import { decide, decideFlush, type NotifierState, quietHoursEnd } from './decide.js';
import { eventKey, notificationFields } from './matchers.js';
import { batchMessage, eventMessage, withBatch } from './message.js';
import { carrierName, eventNotificationName, outboxState, TERMINAL } from './outbox.js';
import { budgetDay } from './quiet-hours.js';

/** Events about the notifier's own objects are never routed: a failing channel must not notify itself. */
export const UNROUTED_KINDS: ReadonlySet<string> = new Set([
  'Notification',
  'NotificationChannel',
  'NotificationPolicy',
  'Silence',
]);
/**
 * What the notifier says about a channel that is routed all the same: to the policy's other
 * channels (decide.ts never sends a channel's own trouble to it).
 */
export const CHANNEL_ALERT_REASONS: ReadonlySet<string> = new Set([NotifierReason.NotificationFailed]);
/** Events that tell a condition turned True: a deferral of one whose condition is False again is dropped. */
const CONDITION_REASONS: ReadonlySet<string> = new Set(Object.values(AgentConditionReason));
/**
 * Sent, failed, suppressed… notifications are kept this long (the digest reads them), then deleted;
 * `orchctl controller --notification-retention` sets it (api/retention.ts).
 */
export const RETENTION_MS = 48 * 3600_000;
/** Deletions per reconcile, so one reconcile's transaction stays small. */
const MAX_DELETES = 200;

export type RouterInput = {
  now: number;
  policy: NotificationPolicy;
  /** The namespace's NotificationChannels by name (their own dailyBudget). */
  channels: Record<string, { dailyBudget?: number }>;
  /** This policy's Notifications. */
  outbox: Notification[];
  /** The namespace's Events. */
  events: EventObject[];
  silences: Silence[];
  /** The involved object's labels, for `labels.<key>` matchers. */
  labelsOf?: (e: EventObject) => Record<string, string> | undefined;
  /**
   * Whether the condition an Event of CONDITION_REASONS told of (its reason) is still True on the
   * involved object; undefined when unknown. A WaitingForInput answered within its grace is not sent.
   */
  stillTrue?: (e: EventObject) => boolean | undefined;
  /** How long settled Notifications are kept (RETENTION_MS by default). */
  retentionMs?: number;
};

export type RouterPlan = {
  /** New Notifications, status included. */
  create: Notification[];
  /** Existing Notifications with a new status (their resourceVersion kept: the write is a CAS). */
  update: Notification[];
  delete: Notification[];
  status: NotificationPolicyStatus;
  warnings: BudgetWarning[];
  /** What was decided, for the metrics. */
  results: { channel: string; tier: 1 | 2 | 3 | 4; result: NotificationResult }[];
  /** When to look again (a deferral or batch falls due), ms since the epoch. */
  next?: number;
};

const iso = (t: number) => new Date(t).toISOString();
const rv = (o: { metadata: { resourceVersion?: string } }) => Number(o.metadata.resourceVersion ?? 0);

/** The status a decision gives a Notification, and its metrics result. */
function statusOf(d: NotificationDecision): { status: NotificationStatus; result?: NotificationResult } {
  switch (d.action) {
    case 'send':
      return { status: { phase: 'Pending', attempts: 0 } };
    case 'defer':
      return { status: { phase: 'Deferred', reason: d.why, until: iso(d.until) }, result: 'deferred' };
    case 'batch':
      return { status: { phase: 'Batched', reason: 'tier3', until: iso(d.flushAt) }, result: 'batched' };
    case 'digest':
      return {
        status: { phase: 'Digest', reason: 'budget', message: `past the daily budget (${d.used}/${d.budget})` },
        result: 'digest',
      };
    case 'suppress': {
      const why =
        d.why === 'inhibited' ? `inhibit rule ${d.rule}` : d.why === 'silenced' ? `silence ${d.silence}` : d.why;
      return { status: { phase: 'Suppressed', reason: d.why, message: why }, result: 'suppressed' };
    }
  }
}

/** A batched Notification that went out with `carrier`. */
function flushed(n: Notification, carrier: string): NotificationStatus {
  const { until: _, ...rest } = n.status!;
  return { ...rest, phase: 'Flushed', sentWith: carrier };
}

/** The Event a deferred Notification was recorded for, as much of it as routing reads. */
function eventOf(n: Notification): EventObject {
  const e = n.spec!.event!;
  const [namespace, name] = (n.spec!.eventKey ?? '/').split('/');
  return {
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { namespace, name },
    involvedObject: { apiVersion: API_VERSION, ...e.involvedObject },
    reason: e.reason,
    message: e.message,
    type: e.type,
    count: e.count,
    firstTimestamp: e.lastTimestamp ?? '',
    lastTimestamp: e.lastTimestamp ?? '',
    source: { component: '', host: '' },
    reportingController: '',
  };
}

export function planRouting(input: RouterInput): RouterPlan {
  const { now, policy } = input;
  const spec = policy.spec!;
  const name = policy.metadata.name;
  const namespace = policy.metadata.namespace;
  const prior = (policy.status ?? {}) as NotificationPolicyStatus;
  const day = budgetDay(now, spec.timeZone ?? DEFAULT_TIME_ZONE);
  const plan: RouterPlan = { create: [], update: [], delete: [], status: { ...prior }, warnings: [], results: [] };

  const work = new Map(input.outbox.map((n) => [n.metadata.name, n]));
  const created = new Set<string>();
  const changed = new Set<string>();
  const routable = input.events.filter(
    (e) => !UNROUTED_KINDS.has(e.involvedObject.kind) || CHANNEL_ALERT_REASONS.has(e.reason),
  );
  /** The Warnings of `e`'s reason within the repeat window, up to and including `e` (decide.ts escalates). */
  const repeats = (e: EventObject): number =>
    e.type !== 'Warning'
      ? 0
      : routable
          .filter(
            (x) =>
              x.type === 'Warning' &&
              x.reason === e.reason &&
              rv(x) <= rv(e) &&
              now - Date.parse(x.lastTimestamp) <= REPEAT_ESCALATION.windowMs,
          )
          .reduce((n, x) => n + Math.max(1, x.count ?? 1), 0);
  // Only a policy with inhibit rules needs the fields of every Event in the namespace.
  const inhibitSources = spec.inhibit?.length ? routable.map((e) => notificationFields(e, input.labelsOf?.(e))) : [];
  const state = (): NotifierState => ({
    ...outboxState(work.values(), day.start),
    budgetWarnedDay: plan.status.budgetWarned,
    inhibitSources,
    silences: input.silences,
  });
  const put = (n: Notification, isNew: boolean) => {
    work.set(n.metadata.name, n);
    (isNew ? created : changed).add(n.metadata.name);
  };
  const setStatus = (n: Notification, status: NotificationStatus) => put({ ...n, status }, false);
  const batched = (channel: string) =>
    [...work.values()]
      .filter((n) => n.spec!.channel === channel && n.status?.phase === 'Batched')
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  const record = (nm: string, s: NotificationSpec, status: NotificationStatus) =>
    put(
      {
        apiVersion: API_VERSION,
        kind: 'Notification',
        metadata: {
          name: nm,
          namespace,
          creationTimestamp: iso(now),
          labels: {
            [NOTIFICATION_LABELS.policy]: name,
            [NOTIFICATION_LABELS.channel]: s.channel,
            [NOTIFICATION_LABELS.tier]: String(s.tier),
            [NOTIFICATION_LABELS.source]: s.source,
          },
          ...(policy.metadata.uid
            ? {
                ownerReferences: [
                  { apiVersion: API_VERSION, kind: 'NotificationPolicy', name, uid: policy.metadata.uid },
                ],
              }
            : {}),
        },
        spec: s,
        status,
      },
      true,
    );
  const warn = (ws: BudgetWarning[]) => {
    for (const w of ws) {
      if (plan.status.budgetWarned?.[w.channel] === w.day) continue;
      plan.status.budgetWarned = { ...plan.status.budgetWarned, [w.channel]: w.day };
      plan.warnings.push(w);
    }
  };
  /** What becomes of an Event now (`due`: a deferral on that channel decided again). */
  const decideNow = (
    event: EventObject,
    more: { due?: { channel: string }; repeats?: number; tierCap?: Tier } = {},
  ) => {
    const d = decide({
      now,
      policy: spec,
      channels: input.channels,
      event,
      labels: input.labelsOf?.(event),
      state: state(),
      ...more,
    });
    warn(d.warnings);
    return d.decisions;
  };
  /** A tier 1/2 message going out takes the channel's pending batch along. */
  const takeBatch = (carrier: string, channel: string): Notification[] => {
    const items = batched(channel);
    for (const it of items) setStatus(it, flushed(it, carrier));
    return items;
  };

  // 1. Events new since the cursor, in the order they happened.
  const cursor = prior.eventRevision !== undefined ? Number(prior.eventRevision) : undefined;
  const since = Date.parse(policy.metadata.creationTimestamp ?? '') || 0;
  const fresh = routable
    .filter((e) => (cursor !== undefined ? rv(e) > cursor : Date.parse(e.lastTimestamp) >= since))
    .sort((a, b) => rv(a) - rv(b));
  for (const e of fresh) {
    for (const dec of decideNow(e, { repeats: repeats(e) })) {
      if (dec.action === 'suppress' && dec.why === 'repeat') {
        plan.results.push({ channel: dec.channel, tier: dec.tier, result: 'suppressed' });
        continue;
      }
      const nm = eventNotificationName(name, eventKey(e), e.count, dec.channel);
      if (work.has(nm)) continue;
      const msg = eventMessage(e);
      const o = e.involvedObject;
      const { status, result } = statusOf(dec);
      const items = dec.action === 'send' && dec.flushesBatch ? takeBatch(nm, dec.channel) : [];
      record(
        nm,
        {
          policy: name,
          channel: dec.channel,
          tier: dec.tier,
          source: 'event',
          route: dec.route,
          groupKey: dec.groupKey,
          eventKey: eventKey(e),
          event: {
            type: e.type,
            reason: e.reason,
            message: e.message,
            involvedObject: { kind: o.kind, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) },
            count: e.count,
            lastTimestamp: e.lastTimestamp,
          },
          title: msg.title,
          body: withBatch(msg, items),
          ...(items.length ? { items: items.map((i) => i.metadata.name) } : {}),
        },
        status,
      );
      if (result) plan.results.push({ channel: dec.channel, tier: dec.tier, result });
    }
  }
  if (fresh.length) plan.status.eventRevision = String(rv(fresh[fresh.length - 1]));
  else if (cursor === undefined) plan.status.eventRevision = String(Math.max(0, ...routable.map(rv)));

  // 2. Deferrals now due are decided again (the budget may be spent, a silence begun); so is one
  // deferred to the end of quiet hours the policy no longer ends then (changed or removed).
  const quietEnd = quietHoursEnd(spec, now);
  for (const n of [...work.values()]) {
    if (n.status?.phase !== 'Deferred' || !n.spec!.event) continue;
    const until = Date.parse(n.status.until ?? '');
    const stale = n.status.reason === 'quietHours' && quietEnd !== until;
    if (until > now && !stale) continue;
    const ev = eventOf(n);
    if (CONDITION_REASONS.has(ev.reason) && input.stillTrue?.(ev) === false) {
      setStatus(n, { phase: 'Suppressed', reason: 'resolved', message: `${ev.reason} is no longer True` });
      plan.results.push({ channel: n.spec!.channel, tier: n.spec!.tier, result: 'suppressed' });
      continue;
    }
    const dec = decideNow(ev, { due: { channel: n.spec!.channel }, tierCap: n.spec!.tier })[0];
    if (!dec) {
      setStatus(n, { phase: 'Suppressed', reason: 'unrouted', message: 'the policy no longer routes it here' });
      plan.results.push({ channel: n.spec!.channel, tier: n.spec!.tier, result: 'suppressed' });
      continue;
    }
    const { status, result } = statusOf(dec);
    const items = dec.action === 'send' && dec.flushesBatch ? takeBatch(n.metadata.name, dec.channel) : [];
    if (items.length)
      put(
        { ...n, spec: { ...n.spec!, body: withBatch(n.spec!, items), items: items.map((i) => i.metadata.name) } },
        false,
      );
    setStatus(work.get(n.metadata.name)!, status);
    if (result) plan.results.push({ channel: dec.channel, tier: dec.tier, result });
  }

  // 3. Tier-3 batches whose interval is up.
  const flush = decideFlush({ now, policy: spec, channels: input.channels, state: state() });
  warn(flush.warnings);
  let next = flush.next;
  for (const dec of flush.decisions) {
    const items = batched(dec.channel);
    if (!items.length) continue;
    if (dec.action === 'defer') {
      next = Math.min(next ?? dec.until, dec.until);
      continue;
    }
    if (dec.action === 'digest') {
      for (const it of items)
        setStatus(it, {
          phase: 'Digest',
          reason: 'budget',
          message: `past the daily budget (${dec.used}/${dec.budget})`,
        });
      plan.results.push(...items.map(() => ({ channel: dec.channel, tier: 3 as const, result: 'digest' as const })));
      continue;
    }
    const names = items.map((i) => i.metadata.name);
    const nm = carrierName(name, 'batch', dec.channel, names);
    const msg = batchMessage(items);
    for (const it of items) setStatus(it, flushed(it, nm));
    record(
      nm,
      { policy: name, channel: dec.channel, tier: 3, source: 'batch', ...msg, items: names },
      { phase: 'Pending' },
    );
  }

  // 4. When to look again; what is old enough to go.
  for (const n of work.values()) {
    const until = Date.parse(n.status?.until ?? '');
    if (n.status?.phase === 'Deferred' && until > now) next = Math.min(next ?? until, until);
  }
  if (next !== undefined) plan.next = next;
  for (const n of work.values()) {
    if (plan.delete.length >= MAX_DELETES) break;
    if (created.has(n.metadata.name) || changed.has(n.metadata.name)) continue;
    const at = Date.parse(n.status?.sentAt ?? n.metadata.creationTimestamp ?? '');
    if (TERMINAL.has(n.status?.phase ?? 'Pending') && now - at > (input.retentionMs ?? RETENTION_MS))
      plan.delete.push(n);
  }
  for (const nm of created) plan.create.push(work.get(nm)!);
  for (const nm of changed) if (!created.has(nm)) plan.update.push(work.get(nm)!);
  return plan;
}
