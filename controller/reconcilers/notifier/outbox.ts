/**
 * What the outbox (the Notification objects of one policy) says, as the plain data the routing
 * decision and a channel's status need. The outbox is the notifier's only memory: nothing here
 * is kept in the controller's RAM, so a restarted controller decides exactly as the old one would.
 */
import { createHash } from 'node:crypto';

import type { NotificationChannelStatus, Notification, NotificationPhase } from '../../api/outbox.js';
import type { GroupState, NotifierState, PendingBatch } from './decide.js';

/** Phases a Notification never leaves: housekeeping may delete them once old. */
export const TERMINAL: ReadonlySet<NotificationPhase> = new Set([
  'Sent',
  'Failed',
  'Flushed',
  'Digested',
  'Suppressed',
]);

/** Phases that use up the channel's daily budget (Pending: it is about to). A digest does not. */
const spendsBudget = (n: Notification, dayStart: number): boolean => {
  if (n.spec!.source === 'digest') return false;
  const phase = n.status?.phase;
  if (phase === 'Pending') return true;
  return phase === 'Sent' && !!n.status?.sentAt && Date.parse(n.status.sentAt) >= dayStart;
};

const recordedAt = (n: Notification): number => Date.parse(n.metadata.creationTimestamp ?? '') || 0;

/**
 * The decision's view of the outbox: per channel what was sent today, each group's pacing, the
 * pending tier-3 batches. `budgetWarnedDay` comes from the policy's status, the inhibit sources
 * and silences from the store; the caller adds them.
 */
export function outboxState(outbox: Iterable<Notification>, dayStart: number): NotifierState {
  const sentToday: Record<string, number> = {};
  const groups: Record<string, Record<string, GroupState>> = {};
  const batches: Record<string, PendingBatch> = {};
  for (const n of outbox) {
    const ch = n.spec!.channel;
    const phase = n.status?.phase;
    const at = recordedAt(n);
    if (spendsBudget(n, dayStart)) sentToday[ch] = (sentToday[ch] ?? 0) + 1;
    if (phase === 'Batched') {
      const b = batches[ch];
      batches[ch] = b ? { items: b.items + 1, openedAt: Math.min(b.openedAt, at) } : { items: 1, openedAt: at };
    }
    const key = n.spec!.groupKey;
    if (n.spec!.source !== 'event' || !key || phase === 'Suppressed' || phase === undefined) continue;
    groups[ch] ??= {};
    groups[ch][key] ??= {};
    const g = groups[ch][key];
    if (n.spec!.eventKey) {
      g.notified ??= {};
      g.notified[n.spec!.eventKey] = Math.max(g.notified[n.spec!.eventKey] ?? 0, at);
    }
    // Pending counts as sent for pacing: it goes out as soon as a delivery worker takes it.
    const sent = phase === 'Sent' ? Date.parse(n.status!.sentAt ?? '') || at : phase === 'Pending' ? at : undefined;
    if (sent !== undefined) g.lastSentAt = Math.max(g.lastSentAt ?? 0, sent);
    if (phase === 'Deferred' && n.status?.reason === 'groupWait')
      g.firstPendingAt = Math.min(g.firstPendingAt ?? Number.POSITIVE_INFINITY, at);
  }
  return { sentToday, groups, batches };
}

/** The counts a NotificationChannel's status shows, from the outbox of every policy using it. */
export function channelStatus(
  channel: string,
  outbox: Iterable<Notification>,
  day: { key: string; start: number },
  budget: number,
): NotificationChannelStatus {
  const st: NotificationChannelStatus = { day: day.key, sent: 0, budget, deferred: 0, batched: 0, digest: 0 };
  let lastAttempt: Notification | undefined;
  for (const n of outbox) {
    if (n.spec!.channel !== channel) continue;
    const phase = n.status?.phase;
    if (phase === 'Sent' && n.spec!.source !== 'digest' && Date.parse(n.status!.sentAt ?? '') >= day.start)
      st.sent! += 1;
    if (phase === 'Deferred') st.deferred! += 1;
    if (phase === 'Batched') st.batched! += 1;
    if (phase === 'Digest') st.digest! += 1;
    if (phase === 'Sent' && n.status!.sentAt && (!st.lastSentAt || n.status!.sentAt > st.lastSentAt))
      st.lastSentAt = n.status!.sentAt;
    const last = n.status?.lastAttemptAt;
    if (last && (!lastAttempt || last > (lastAttempt.status!.lastAttemptAt ?? ''))) lastAttempt = n;
  }
  if (lastAttempt) {
    const s = lastAttempt.status!;
    st.failing = s.code !== 'sent';
    if (st.failing) st.lastFailure = { at: s.lastAttemptAt!, code: s.code!, message: s.message ?? '' };
  }
  return st;
}

const hash = (...parts: (string | number)[]): string =>
  createHash('sha1').update(parts.join('\0')).digest('hex').slice(0, 10);

/** A name for a DNS-1123 subdomain built from names that already are: cut, then the hash keeps it unique. */
const join = (prefix: string, h: string) => `${prefix.slice(0, 200).replace(/[.-]+$/, '')}.${h}`;

/**
 * One Event occurrence on one channel: the same Event with the same count routed again (a
 * controller restarted before its cursor was saved) gets the same name, so it is recorded once.
 */
export const eventNotificationName = (policy: string, eventKey: string, count: number, channel: string): string =>
  join(`${policy}.${channel}`, hash(policy, eventKey, count, channel));

/**
 * A batch (named after the items it carries) or a digest (after its scheduled time): the same flush
 * recorded twice is one object.
 */
export const carrierName = (policy: string, kind: 'batch' | 'digest', channel: string, key: string[]): string =>
  join(`${policy}.${kind}.${channel}`, hash(policy, kind, channel, ...key));
