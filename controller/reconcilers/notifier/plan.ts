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
import { budgetDay } from '../../notify/quiet-hours.js';

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

/** A decision's metrics result. */
type Decided = { channel: string; tier: Tier };

/**
 * One pass of the router over a policy's outbox: the Notifications as they stand (`work`), which of
 * them this pass created or changed, and the plan being built. The steps run in planRouting's order.
 */
class RoutingPass {
  readonly plan: RouterPlan;
  private readonly spec: NonNullable<NotificationPolicy['spec']>;
  private readonly name: string;
  private readonly prior: NotificationPolicyStatus;
  private readonly day: ReturnType<typeof budgetDay>;
  private readonly work: Map<string, Notification>;
  private readonly created = new Set<string>();
  private readonly changed = new Set<string>();
  /** Events this policy may route: not about the notifier's own objects, but for a channel's trouble. */
  private readonly routable: EventObject[];
  private readonly inhibitSources: NotifierState['inhibitSources'];

  constructor(private readonly input: RouterInput) {
    const { now, policy } = input;
    this.spec = policy.spec!;
    this.name = policy.metadata.name;
    this.prior = policy.status ?? {};
    this.day = budgetDay(now, this.spec.timeZone ?? DEFAULT_TIME_ZONE);
    this.plan = { create: [], update: [], delete: [], status: { ...this.prior }, warnings: [], results: [] };
    this.work = new Map(input.outbox.map((n) => [n.metadata.name, n]));
    this.routable = input.events.filter(
      (e) => !UNROUTED_KINDS.has(e.involvedObject.kind) || CHANNEL_ALERT_REASONS.has(e.reason),
    );
    // Only a policy with inhibit rules needs the fields of every Event in the namespace.
    this.inhibitSources = this.spec.inhibit?.length
      ? this.routable.map((e) => notificationFields(e, input.labelsOf?.(e)))
      : [];
  }

  /** The Warnings of `e`'s reason within the repeat window, up to and including `e` (decide.ts escalates). */
  private repeats(e: EventObject): number {
    if (e.type !== 'Warning') return 0;
    const now = this.input.now;
    return this.routable
      .filter(
        (x) =>
          x.type === 'Warning' &&
          x.reason === e.reason &&
          rv(x) <= rv(e) &&
          now - Date.parse(x.lastTimestamp) <= REPEAT_ESCALATION.windowMs,
      )
      .reduce((n, x) => n + Math.max(1, x.count ?? 1), 0);
  }

  private state(): NotifierState {
    return {
      ...outboxState(this.work.values(), this.day.start),
      budgetWarnedDay: this.plan.status.budgetWarned,
      inhibitSources: this.inhibitSources,
      silences: this.input.silences,
    };
  }

  private put(n: Notification, isNew: boolean): void {
    this.work.set(n.metadata.name, n);
    (isNew ? this.created : this.changed).add(n.metadata.name);
  }

  private setStatus(n: Notification, status: NotificationStatus): void {
    this.put({ ...n, status }, false);
  }

  private result(d: Decided, result: NotificationResult): void {
    this.plan.results.push({ channel: d.channel, tier: d.tier, result });
  }

  private batched(channel: string): Notification[] {
    return [...this.work.values()]
      .filter((n) => n.spec!.channel === channel && n.status?.phase === 'Batched')
      .sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
  }

  private record(nm: string, s: NotificationSpec, status: NotificationStatus): void {
    const { policy, now } = this.input;
    const name = this.name;
    const labels = {
      [NOTIFICATION_LABELS.policy]: name,
      [NOTIFICATION_LABELS.channel]: s.channel,
      [NOTIFICATION_LABELS.tier]: String(s.tier),
      [NOTIFICATION_LABELS.source]: s.source,
    };
    const owner = policy.metadata.uid
      ? { ownerReferences: [{ apiVersion: API_VERSION, kind: 'NotificationPolicy', name, uid: policy.metadata.uid }] }
      : {};
    const metadata = { name: nm, namespace: policy.metadata.namespace, creationTimestamp: iso(now), labels, ...owner };
    this.put({ apiVersion: API_VERSION, kind: 'Notification', metadata, spec: s, status }, true);
  }

  private warn(ws: BudgetWarning[]): void {
    const status = this.plan.status;
    for (const w of ws) {
      if (status.budgetWarned?.[w.channel] === w.day) continue;
      status.budgetWarned = { ...status.budgetWarned, [w.channel]: w.day };
      this.plan.warnings.push(w);
    }
  }

  /** What becomes of an Event now (`due`: a deferral on that channel decided again). */
  private decideNow(event: EventObject, more: { due?: { channel: string }; repeats?: number; tierCap?: Tier } = {}) {
    const { now, channels, labelsOf } = this.input;
    const d = decide({
      now,
      policy: this.spec,
      channels,
      event,
      labels: labelsOf?.(event),
      state: this.state(),
      ...more,
    });
    this.warn(d.warnings);
    return d.decisions;
  }

  /** A tier 1/2 message going out takes the channel's pending batch along. */
  private takeBatch(carrier: string, dec: NotificationDecision): Notification[] {
    if (dec.action !== 'send' || !dec.flushesBatch) return [];
    const items = this.batched(dec.channel);
    for (const it of items) this.setStatus(it, flushed(it, carrier));
    return items;
  }

  /** 1. Events new since the cursor, in the order they happened; the cursor moves past them. */
  routeFresh(): void {
    const { policy } = this.input;
    const cursor = this.prior.eventRevision !== undefined ? Number(this.prior.eventRevision) : undefined;
    const since = Date.parse(policy.metadata.creationTimestamp ?? '') || 0;
    const fresh = this.routable
      .filter((e) => (cursor !== undefined ? rv(e) > cursor : Date.parse(e.lastTimestamp) >= since))
      .sort((a, b) => rv(a) - rv(b));
    for (const e of fresh) for (const dec of this.decideNow(e, { repeats: this.repeats(e) })) this.recordEvent(e, dec);
    if (fresh.length) this.plan.status.eventRevision = String(rv(fresh[fresh.length - 1]));
    else if (cursor === undefined) this.plan.status.eventRevision = String(Math.max(0, ...this.routable.map(rv)));
  }

  private recordEvent(e: EventObject, dec: NotificationDecision): void {
    if (dec.action === 'suppress' && dec.why === 'repeat') {
      this.result(dec, 'suppressed');
      return;
    }
    const nm = eventNotificationName(this.name, eventKey(e), e.count, dec.channel);
    if (this.work.has(nm)) return;
    const msg = eventMessage(e);
    const o = e.involvedObject;
    const { status, result } = statusOf(dec);
    const items = this.takeBatch(nm, dec);
    const event = {
      type: e.type,
      reason: e.reason,
      message: e.message,
      involvedObject: { kind: o.kind, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) },
      count: e.count,
      lastTimestamp: e.lastTimestamp,
    };
    this.record(
      nm,
      {
        policy: this.name,
        channel: dec.channel,
        tier: dec.tier,
        source: 'event',
        route: dec.route,
        groupKey: dec.groupKey,
        eventKey: eventKey(e),
        event,
        title: msg.title,
        body: withBatch(msg, items),
        ...(items.length ? { items: items.map((i) => i.metadata.name) } : {}),
      },
      status,
    );
    if (result) this.result(dec, result);
  }

  /**
   * 2. Deferrals now due are decided again (the budget may be spent, a silence begun); so is one
   * deferred to the end of quiet hours the policy no longer ends then (changed or removed).
   */
  redecideDue(): void {
    const { now } = this.input;
    const quietEnd = quietHoursEnd(this.spec, now);
    for (const n of [...this.work.values()]) {
      if (n.status?.phase !== 'Deferred' || !n.spec!.event) continue;
      const until = Date.parse(n.status.until ?? '');
      const stale = n.status.reason === 'quietHours' && quietEnd !== until;
      if (until > now && !stale) continue;
      this.redecide(n);
    }
  }

  private redecide(n: Notification): void {
    const spec = n.spec!;
    const ev = eventOf(n);
    if (CONDITION_REASONS.has(ev.reason) && this.input.stillTrue?.(ev) === false) {
      this.setStatus(n, { phase: 'Suppressed', reason: 'resolved', message: `${ev.reason} is no longer True` });
      this.result(spec, 'suppressed');
      return;
    }
    const dec = this.decideNow(ev, { due: { channel: spec.channel }, tierCap: spec.tier })[0];
    if (!dec) {
      this.setStatus(n, { phase: 'Suppressed', reason: 'unrouted', message: 'the policy no longer routes it here' });
      this.result(spec, 'suppressed');
      return;
    }
    const { status, result } = statusOf(dec);
    const items = this.takeBatch(n.metadata.name, dec);
    if (items.length)
      this.put(
        { ...n, spec: { ...spec, body: withBatch(spec, items), items: items.map((i) => i.metadata.name) } },
        false,
      );
    this.setStatus(this.work.get(n.metadata.name)!, status);
    if (result) this.result(dec, result);
  }

  /** 3. Tier-3 batches whose interval is up; returns when the next one falls due. */
  flushBatches(): number | undefined {
    const { now, channels } = this.input;
    const flush = decideFlush({ now, policy: this.spec, channels, state: this.state() });
    this.warn(flush.warnings);
    let next = flush.next;
    for (const dec of flush.decisions) {
      const items = this.batched(dec.channel);
      if (!items.length) continue;
      if (dec.action === 'defer') {
        next = Math.min(next ?? dec.until, dec.until);
        continue;
      }
      if (dec.action === 'digest') {
        const message = `past the daily budget (${dec.used}/${dec.budget})`;
        for (const it of items) this.setStatus(it, { phase: 'Digest', reason: 'budget', message });
        this.plan.results.push(
          ...items.map(() => ({ channel: dec.channel, tier: 3 as const, result: 'digest' as const })),
        );
        continue;
      }
      const names = items.map((i) => i.metadata.name);
      const nm = carrierName(this.name, 'batch', dec.channel, names);
      const msg = batchMessage(items);
      for (const it of items) this.setStatus(it, flushed(it, nm));
      const spec: NotificationSpec = { policy: this.name, channel: dec.channel, tier: 3, source: 'batch', ...msg };
      this.record(nm, { ...spec, items: names }, { phase: 'Pending' });
    }
    return next;
  }

  /** 4. When to look again; what is old enough to go; the writes. */
  finish(flushNext: number | undefined): RouterPlan {
    const { now } = this.input;
    const plan = this.plan;
    let next = flushNext;
    for (const n of this.work.values()) {
      const until = Date.parse(n.status?.until ?? '');
      if (n.status?.phase === 'Deferred' && until > now) next = Math.min(next ?? until, until);
    }
    if (next !== undefined) plan.next = next;
    for (const n of this.work.values()) {
      if (plan.delete.length >= MAX_DELETES) break;
      if (this.created.has(n.metadata.name) || this.changed.has(n.metadata.name)) continue;
      const at = Date.parse(n.status?.sentAt ?? n.metadata.creationTimestamp ?? '');
      const keep = this.input.retentionMs ?? RETENTION_MS;
      if (TERMINAL.has(n.status?.phase ?? 'Pending') && now - at > keep) plan.delete.push(n);
    }
    for (const nm of this.created) plan.create.push(this.work.get(nm)!);
    for (const nm of this.changed) if (!this.created.has(nm)) plan.update.push(this.work.get(nm)!);
    return plan;
  }
}

export function planRouting(input: RouterInput): RouterPlan {
  const pass = new RoutingPass(input);
  pass.routeFresh();
  pass.redecideDue();
  return pass.finish(pass.flushBatches());
}
