/**
 * What becomes of one routed Event on each of its channels, and of a channel's tier-3 batch when
 * its interval is up: seed 002 §2.8's tiers on top of Alertmanager's routing. Pure: `now` and
 * what the outbox knows come in as plain data, the decisions go out; nothing here sends.
 *
 * Per channel, in this order:
 *  1. tier 4 is never sent;
 *  2. an inhibit rule with a source Event in force, or an active silence, mutes it (any tier: both
 *     are deliberate);
 *  3. the same Event (a `count` bump) notified within repeatInterval is a repeat;
 *  4. tier 1 is sent now — in quiet hours and past the budget too;
 *     tier 2 waits for the end of quiet hours, goes to the digest past the budget, else is sent;
 *     tier 3 goes to the digest past the budget, else into the channel's batch;
 *     tier 1 and 2 wait for groupWait/groupInterval when a route sets them (default 0s);
 *  5. a tier 1/2 message takes the channel's pending batch along (an early flush).
 * A message deferred earlier is decided again when due (`due`), without the repeat check it
 * passed then: by then the budget may be spent, or a silence may have begun.
 */
import { parseDuration } from '../../api/duration.js';
import type { EventObject } from '../../api/event.js';
import {
  BUDGET_WARNING_RATIO,
  DEFAULT_DAILY_BUDGET,
  DEFAULT_DURATIONS,
  DEFAULT_TIME_ZONE,
  parseQuietHours,
  REPEAT_ESCALATION,
  type BatchFlushDecision,
  type BudgetWarning,
  type NotificationDecision,
  type NotificationFields,
  type NotificationPolicySpec,
  type NotificationTier,
  type RoutedNotification,
  type Silence,
} from '../../api/notification.js';
import { compileAll, eventKey, matchesAll, notificationFields } from './matchers.js';
import { budgetDay, quietUntil } from '../../notify/quiet-hours.js';
import { routeFields } from './route.js';

/** One group's history on one channel, from the outbox. */
export type GroupState = {
  /** When the group's last message went out. */
  lastSentAt?: number;
  /** Per Event (matchers.eventKey), when a message for it was last recorded and not suppressed:
   *  sent, deferred, batched or put in the digest. */
  notified?: Record<string, number>;
  /** When the oldest message of the group still waiting for groupWait was recorded. */
  firstPendingAt?: number;
};

/** A channel's tier-3 messages not sent yet. */
export type PendingBatch = { items: number; openedAt: number };

/** What the decision needs from the outbox and the store, as plain data. */
export type NotifierState = {
  /** Per channel, messages sent since the budget's day began (quiet-hours.budgetDay). */
  sentToday?: Record<string, number>;
  /** Per channel, the day key of the last budget warning. */
  budgetWarnedDay?: Record<string, string>;
  /** channel → groupKey → its history. */
  groups?: Record<string, Record<string, GroupState>>;
  batches?: Record<string, PendingBatch>;
  /** The fields (matchers.notificationFields) of the Events in force as inhibit sources. */
  inhibitSources?: NotificationFields[];
  silences?: Silence[];
};

export type DecideInput = {
  now: number;
  policy: NotificationPolicySpec;
  /** The NotificationChannels by name, for their own dailyBudget. */
  channels?: Record<string, { dailyBudget?: number }>;
  event: EventObject;
  /** The involved object's labels. */
  labels?: Record<string, string>;
  state: NotifierState;
  /** Decide again a message deferred for this channel, now due. */
  due?: { channel: string };
  /**
   * How often the Event's reason was recorded as a Warning within REPEAT_ESCALATION.windowMs, this
   * Event included (plan.ts counts): more than REPEAT_ESCALATION.after raises it one tier.
   */
  repeats?: number;
  /** The most a re-decided message may fall to: the tier it was recorded with (an escalation stays). */
  tierCap?: NotificationTier;
};

export type DecideResult = {
  routes: RoutedNotification[];
  decisions: NotificationDecision[];
  warnings: BudgetWarning[];
};

type Ctx = {
  now: number;
  policy: NotificationPolicySpec;
  channels: Record<string, { dailyBudget?: number }>;
  state: NotifierState;
};

const budgetOf = (c: Ctx, channel: string): number =>
  c.channels[channel]?.dailyBudget ?? c.policy.dailyBudget ?? DEFAULT_DAILY_BUDGET;

const quietEnd = (c: Ctx): number | undefined =>
  quietUntil(c.now, c.policy.timeZone ?? DEFAULT_TIME_ZONE, parseQuietHours(c.policy.quietHours));

const batchIntervalMs = (p: NotificationPolicySpec) =>
  parseDuration(p.batchInterval ?? DEFAULT_DURATIONS.batchInterval);

/** The most urgent tier the policy routes these fields to (4 when no route sets one). */
const urgency = (routes: RoutedNotification[]): NotificationTier =>
  Math.min(4, ...routes.map((r) => r.tier)) as NotificationTier;

/**
 * The inhibit rule muting the Event, by name, or undefined. An Event never inhibits itself, and a
 * less urgent one never inhibits a more urgent one (a tier-4 source mutes nothing above tier 4).
 */
function inhibitedBy(
  policy: NotificationPolicySpec,
  sources: NotificationFields[],
  fields: NotificationFields,
  tier: NotificationTier,
) {
  const same = (a: NotificationFields) =>
    Object.keys(a).length === Object.keys(fields).length && Object.keys(a).every((k) => a[k] === fields[k]);
  for (const [i, rule] of (policy.inhibit ?? []).entries()) {
    if (!matchesAll(compileAll(rule.targetMatchers), fields)) continue;
    const source = compileAll(rule.sourceMatchers);
    const hit = sources.some(
      (s) =>
        !same(s) &&
        matchesAll(source, s) &&
        (rule.equal ?? []).every((f) => (s[f] ?? '') === (fields[f] ?? '')) &&
        urgency(routeFields(policy, s)) <= tier,
    );
    if (hit) return rule.name ?? `inhibit[${i}]`;
  }
  return undefined;
}

function silencedBy(silences: Silence[], now: number, fields: NotificationFields): string | undefined {
  return silences.find(
    (s) =>
      Date.parse(s.spec!.startsAt) <= now &&
      now < Date.parse(s.spec!.endsAt) &&
      matchesAll(compileAll(s.spec!.matchers), fields),
  )?.metadata.name;
}

/** groupWait for a group with nothing sent within repeatInterval, else groupInterval. */
function groupTimer(r: RoutedNotification, g: GroupState | undefined, now: number) {
  const recent = g?.lastSentAt !== undefined && now - g.lastSentAt < r.repeatIntervalMs;
  if (recent) {
    const until = g.lastSentAt! + r.groupIntervalMs;
    return until > now ? { why: 'groupInterval' as const, until } : undefined;
  }
  const until = (g?.firstPendingAt ?? now) + r.groupWaitMs;
  return until > now ? { why: 'groupWait' as const, until } : undefined;
}

/** Each channel once, on its most urgent route (the first of equals, in tree order); never `self`. */
function byChannel(routes: RoutedNotification[], self?: string): [string, RoutedNotification][] {
  const best = new Map<string, RoutedNotification>();
  for (const r of routes)
    for (const ch of r.channels) {
      if (ch === self) continue;
      const had = best.get(ch);
      if (!had || r.tier < had.tier) best.set(ch, r);
    }
  return [...best];
}

function decideChannel(
  c: Ctx,
  channel: string,
  r: RoutedNotification,
  key: string,
  muted: { rule?: string; silence?: string },
  due: boolean,
): NotificationDecision {
  const base = { channel, tier: r.tier, route: r.route, groupKey: r.groupKey };
  if (r.tier === 4) return { ...base, action: 'suppress', why: 'tier4' };
  if (muted.rule) return { ...base, action: 'suppress', why: 'inhibited', rule: muted.rule };
  if (muted.silence) return { ...base, action: 'suppress', why: 'silenced', silence: muted.silence };
  const g = c.state.groups?.[channel]?.[r.groupKey];
  const notified = g?.notified?.[key];
  if (!due && notified !== undefined && c.now - notified < r.repeatIntervalMs)
    return { ...base, action: 'suppress', why: 'repeat', until: notified + r.repeatIntervalMs };
  const used = c.state.sentToday?.[channel] ?? 0;
  const budget = budgetOf(c, channel);
  const overBudget = used >= budget;
  if (r.tier === 3) {
    if (overBudget) return { ...base, action: 'digest', why: 'budget', used, budget };
    const batch = c.state.batches?.[channel];
    const openedAt = batch?.items ? batch.openedAt : c.now;
    return { ...base, action: 'batch', flushAt: openedAt + batchIntervalMs(c.policy) };
  }
  if (r.tier === 2) {
    const until = quietEnd(c);
    if (until !== undefined) return { ...base, action: 'defer', why: 'quietHours', until };
    if (overBudget) return { ...base, action: 'digest', why: 'budget', used, budget };
  }
  const timer = groupTimer(r, g, c.now);
  if (timer) return { ...base, action: 'defer', ...timer };
  const pending = c.state.batches?.[channel]?.items ?? 0;
  return { ...base, action: 'send', ...(pending ? { flushesBatch: pending } : {}) };
}

function warnings(c: Ctx, sends: Map<string, number>): BudgetWarning[] {
  const day = budgetDay(c.now, c.policy.timeZone ?? DEFAULT_TIME_ZONE);
  const out: BudgetWarning[] = [];
  for (const [channel, sent] of sends) {
    const budget = budgetOf(c, channel);
    const used = (c.state.sentToday?.[channel] ?? 0) + sent;
    if (budget <= 0 || used < Math.ceil(budget * BUDGET_WARNING_RATIO)) continue;
    if (c.state.budgetWarnedDay?.[channel] === day.key) continue;
    const message =
      `channel ${channel} has sent ${used} of its ${budget} messages for ${day.key}; ` +
      'past the budget, tier 2 and 3 go to the digest (tier 1 is still sent)';
    out.push({ channel, used, budget, day: day.key, message });
  }
  return out;
}

/**
 * The routes one tier more urgent for a Warning repeated more than REPEAT_ESCALATION.after times
 * within its window (seed 002: an error repeated more than twice is urgent), and never less urgent
 * than `tierCap`.
 */
function escalated(routes: RoutedNotification[], input: DecideInput): RoutedNotification[] {
  const repeated = input.event.type === 'Warning' && (input.repeats ?? 0) > REPEAT_ESCALATION.after;
  return routes.map((r) => {
    let tier = repeated && r.tier > 1 ? ((r.tier - 1) as NotificationTier) : r.tier;
    if (input.tierCap !== undefined && input.tierCap < tier) tier = input.tierCap;
    return tier === r.tier ? r : { ...r, tier };
  });
}

/** The end of the quiet hours `now` is in under the policy as it is now, or undefined. */
export const quietHoursEnd = (policy: NotificationPolicySpec, now: number): number | undefined =>
  quietUntil(now, policy.timeZone ?? DEFAULT_TIME_ZONE, parseQuietHours(policy.quietHours));

/** The routes an Event takes and what becomes of it on each channel, with any budget warnings. */
export function decide(input: DecideInput): DecideResult {
  const c: Ctx = { now: input.now, policy: input.policy, channels: input.channels ?? {}, state: input.state };
  const fields = notificationFields(input.event, input.labels);
  const routes = escalated(routeFields(input.policy, fields), input);
  const muted = {
    rule: inhibitedBy(input.policy, input.state.inhibitSources ?? [], fields, urgency(routes)),
    silence: silencedBy(input.state.silences ?? [], input.now, fields),
  };
  const key = eventKey(input.event);
  // A channel's own trouble (NotificationFailed) is told on the other channels, never on itself.
  const self = input.event.involvedObject.kind === 'NotificationChannel' ? input.event.involvedObject.name : undefined;
  const decisions = byChannel(routes, self)
    .filter(([channel]) => !input.due || channel === input.due.channel)
    .map(([channel, r]) => decideChannel(c, channel, r, key, muted, !!input.due));
  const sends = new Map<string, number>();
  for (const d of decisions) sends.set(d.channel, d.action === 'send' ? 1 : 0);
  return { routes, decisions, warnings: warnings(c, sends) };
}

export type FlushInput = Omit<DecideInput, 'event' | 'labels' | 'due'>;
export type FlushResult = {
  decisions: BatchFlushDecision[];
  warnings: BudgetWarning[];
  /** The earliest batch not due yet: when to look again. */
  next?: number;
};

/** The batches whose interval is up: sent, deferred past quiet hours, or to the digest past the budget. */
export function decideFlush(input: FlushInput): FlushResult {
  const c: Ctx = { now: input.now, policy: input.policy, channels: input.channels ?? {}, state: input.state };
  const decisions: BatchFlushDecision[] = [];
  let next: number | undefined;
  for (const [channel, batch] of Object.entries(input.state.batches ?? {})) {
    if (!batch.items) continue;
    const flushAt = batch.openedAt + batchIntervalMs(input.policy);
    if (flushAt > input.now) {
      next = Math.min(next ?? flushAt, flushAt);
      continue;
    }
    const base = { channel, items: batch.items };
    const used = input.state.sentToday?.[channel] ?? 0;
    const budget = budgetOf(c, channel);
    const until = quietEnd(c);
    if (until !== undefined) decisions.push({ ...base, action: 'defer', why: 'quietHours', until });
    else if (used >= budget) decisions.push({ ...base, action: 'digest', why: 'budget', used, budget });
    else decisions.push({ ...base, action: 'send' });
  }
  const sends = new Map(decisions.map((d) => [d.channel, d.action === 'send' ? 1 : 0]));
  return { decisions, warnings: warnings(c, sends), ...(next !== undefined ? { next } : {}) };
}
