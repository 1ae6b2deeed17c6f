/**
 * What a digest reports, gathered from objects the store already holds (pure). The outbox is the
 * digest's memory: every Event a policy routes is recorded as a Notification per channel (tier 4
 * too, as Suppressed), so the runs, escalations and autopilot decisions since the last digest are
 * counted from the Notifications created since then, once per Event occurrence however many
 * channels it went to. Sessions waiting for input and the notifications still held back are
 * what holds now; each channel's status gives the budget used.
 *
 * Times on the wire are RFC 3339 and the store stamps objects to the second, so the window is
 * [since, now) in whole seconds: passing this digest's `now` as the next one's `since` counts
 * every Notification once.
 */
import type { Evaluation } from '../../../api/evaluation.js';
import type { AgentSession } from '../../../api/kinds.js';
import type { NotificationPolicy, NotificationRoute } from '../../../api/notification.js';
import type { ChannelType, NotificationTier } from '../../../api/notification-channel.js';
import type { Notification, NotificationChannelStatus } from '../../../api/outbox.js';
import { digestSettings } from './settings.js';

/** A NotificationChannel as far as the digest reads it. */
export type DigestChannel = {
  metadata: { name: string };
  spec?: { type?: ChannelType; format?: string };
  status?: NotificationChannelStatus;
};

export type DigestInput = {
  now: number;
  since: number;
  policy: NotificationPolicy;
  /** The outbox of the policy's namespace (other policies' Notifications are left out here). */
  notifications: Notification[];
  sessions: AgentSession[];
  evaluations: Evaluation[];
  channels: DigestChannel[];
};

/** One Event occurrence. `message` is the Event's text: it may quote an agent, so it is untrusted. */
export type DigestEvent = { object: string; reason: string; message: string; at: string; count: number };

/** A notification held back: past the budget (`Digest`) or deferred (quiet hours, group timers). */
export type DigestDeferred = {
  /** The Notification's name (the first channel's, when it went to several). */
  name: string;
  channels: string[];
  tier: NotificationTier;
  title: string;
  /** When it was recorded. */
  at: string;
  phase: 'Digest' | 'Deferred';
  why?: string;
  /** For Deferred: when it is decided again. */
  until?: string;
};

export type DigestWaiting = { session: string; since?: string; message?: string };

export type DigestEvaluation = {
  name: string;
  session: string;
  run?: number;
  phase?: string;
  score?: number;
  outcome?: string;
  recommendation?: string;
  at: string;
};

export type DigestBudget = {
  channel: string;
  type?: ChannelType;
  day?: string;
  sent: number;
  budget?: number;
  deferred: number;
  batched: number;
  digest: number;
  failing: boolean;
};

export type DigestData = {
  policy: string;
  namespace: string;
  /** The time zone times are shown in (the digest's). */
  timeZone: string;
  since: string;
  until: string;
  runs: { started: number; succeeded: number; failed: number };
  failedRuns: DigestEvent[];
  escalations: DigestEvent[];
  autopilot: DigestEvent[];
  waiting: DigestWaiting[];
  /** Evaluations judged (or, not judged yet, created) in the window; averageScore over the judged ones. */
  evaluations: DigestEvaluation[];
  averageScore?: number;
  deferred: DigestDeferred[];
  budget: DigestBudget[];
  /** Names of every Notification in phase Digest: the notifier marks them Digested once the digest is recorded. */
  digestItems: string[];
  /** Nothing happened, nobody waits, nothing is held back. */
  empty: boolean;
};

export const RUN_STARTED_REASONS: ReadonlySet<string> = new Set(['Started']);
export const RUN_SUCCEEDED_REASONS: ReadonlySet<string> = new Set(['Completed']);
/** How a run ends badly (reconcilers/session/plan.ts endReason; `Failed` as the issue names it). */
export const RUN_FAILED_REASONS: ReadonlySet<string> = new Set([
  'Failed',
  'Error',
  'TimedOut',
  'ExitStatusUnknown',
  'NodeFenced',
  'TmuxSessionLost',
  'CommandNotFound',
]);
export const ESCALATION_REASON = 'Escalated';
export const AUTOPILOT_REASON = 'AutopilotNotice';

const SECOND = 1000;
const floorSecond = (t: number) => Math.floor(t / SECOND) * SECOND;
const stamp = (s: string | undefined) => (s ? Date.parse(s) : Number.NaN);
const iso = (t: number) => new Date(t).toISOString();

/** Every channel the policy names: its route tree's and the digest's. */
function policyChannels(route: NotificationRoute | undefined, out = new Set<string>()): Set<string> {
  for (const c of route?.channels ?? []) out.add(c);
  for (const child of route?.routes ?? []) policyChannels(child, out);
  return out;
}

const objectOf = (n: Notification): string => {
  const o = n.spec!.event!.involvedObject;
  return `${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
};

function digestEvent(n: Notification): DigestEvent {
  const e = n.spec!.event!;
  return {
    object: objectOf(n),
    reason: e.reason,
    message: e.message,
    at: e.lastTimestamp ?? n.metadata.creationTimestamp ?? '',
    count: e.count,
  };
}

const byTime = <T extends { at: string }>(a: T, b: T) => a.at.localeCompare(b.at);

export function collectDigest(input: DigestInput): DigestData {
  const { policy } = input;
  const spec = policy.spec!;
  const name = policy.metadata.name;
  const from = floorSecond(input.since);
  const to = floorSecond(input.now);
  const inWindow = (t: number) => t >= from && t < to;

  const mine = input.notifications.filter((n) => n.spec?.policy === name);
  // One Event occurrence is one Notification per channel: count it once.
  const occurrences = new Map<string, Notification>();
  for (const n of mine) {
    if (n.spec!.source !== 'event' || !n.spec!.event || !inWindow(stamp(n.metadata.creationTimestamp))) continue;
    const key = `${n.spec!.eventKey ?? n.metadata.name}#${n.spec!.event.count}`;
    if (!occurrences.has(key)) occurrences.set(key, n);
  }
  const runs = { started: 0, succeeded: 0, failed: 0 };
  const failedRuns: DigestEvent[] = [];
  const escalations: DigestEvent[] = [];
  const autopilot: DigestEvent[] = [];
  for (const n of occurrences.values()) {
    const { reason, involvedObject } = n.spec!.event!;
    const aboutSession = involvedObject.kind === 'AgentSession';
    if (aboutSession && RUN_STARTED_REASONS.has(reason)) runs.started++;
    else if (aboutSession && RUN_SUCCEEDED_REASONS.has(reason)) runs.succeeded++;
    else if (aboutSession && RUN_FAILED_REASONS.has(reason)) {
      runs.failed++;
      failedRuns.push(digestEvent(n));
    } else if (reason === ESCALATION_REASON) escalations.push(digestEvent(n));
    else if (reason === AUTOPILOT_REASON) autopilot.push(digestEvent(n));
  }

  // Held back now, whenever recorded; the same Event on several channels is one line naming them all.
  const deferredByKey = new Map<string, DigestDeferred>();
  const digestItems: string[] = [];
  for (const n of mine) {
    const phase = n.status?.phase;
    if ((phase !== 'Digest' && phase !== 'Deferred') || n.spec!.source === 'digest') continue;
    if (phase === 'Digest') digestItems.push(n.metadata.name);
    const key = n.spec!.eventKey ? `${phase}#${n.spec!.eventKey}#${n.spec!.event?.count}` : n.metadata.name;
    const seen = deferredByKey.get(key);
    if (seen) {
      if (!seen.channels.includes(n.spec!.channel)) seen.channels.push(n.spec!.channel);
      continue;
    }
    deferredByKey.set(key, {
      name: n.metadata.name,
      channels: [n.spec!.channel],
      tier: n.spec!.tier,
      title: n.spec!.title,
      at: n.metadata.creationTimestamp ?? '',
      phase,
      ...(n.status?.reason ? { why: n.status.reason } : {}),
      ...(phase === 'Deferred' && n.status?.until ? { until: n.status.until } : {}),
    });
  }
  const deferred = [...deferredByKey.values()].sort(
    (a, b) => a.at.localeCompare(b.at) || a.title.localeCompare(b.title) || a.name.localeCompare(b.name),
  );
  digestItems.sort();

  const waiting: DigestWaiting[] = [];
  for (const s of input.sessions) {
    const c = s.status?.conditions?.find((x) => x.type === 'WaitingForInput');
    if (c?.status !== 'True') continue;
    waiting.push({
      session: `${s.metadata.namespace ? `${s.metadata.namespace}/` : ''}${s.metadata.name}`,
      ...(c.lastTransitionTime ? { since: c.lastTransitionTime } : {}),
      ...(c.message ? { message: c.message } : {}),
    });
  }
  waiting.sort((a, b) => (a.since ?? '').localeCompare(b.since ?? '') || a.session.localeCompare(b.session));

  // An evaluation belongs to the window it was judged in (one judged later than created is not lost).
  const evaluations: DigestEvaluation[] = [];
  for (const e of input.evaluations) {
    const at = e.status?.evaluatedAt ?? e.metadata.creationTimestamp;
    if (!at || !inWindow(floorSecond(stamp(at)))) continue;
    const st = e.status ?? {};
    evaluations.push({
      name: e.metadata.name,
      session: e.spec?.sessionRef ?? '',
      ...(e.spec?.run !== undefined ? { run: e.spec.run } : {}),
      ...(st.phase ? { phase: st.phase } : {}),
      ...(st.score !== undefined ? { score: st.score } : {}),
      ...(st.outcome ? { outcome: st.outcome } : {}),
      ...(st.recommendation ? { recommendation: st.recommendation } : {}),
      at,
    });
  }
  evaluations.sort(byTime);
  const scores = evaluations.map((e) => e.score).filter((s): s is number => s !== undefined);
  const averageScore = scores.length
    ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 10) / 10
    : undefined;

  const settings = digestSettings(spec);
  const named = policyChannels(spec.route);
  for (const c of settings.channels) named.add(c);
  const budget: DigestBudget[] = input.channels
    .filter((c) => named.has(c.metadata.name))
    .map((c) => {
      const st = c.status ?? {};
      return {
        channel: c.metadata.name,
        ...(c.spec?.type ? { type: c.spec.type } : {}),
        ...(st.day ? { day: st.day } : {}),
        sent: st.sent ?? 0,
        ...(st.budget !== undefined ? { budget: st.budget } : {}),
        deferred: st.deferred ?? 0,
        batched: st.batched ?? 0,
        digest: st.digest ?? 0,
        failing: st.failing === true,
      };
    })
    .sort((a, b) => a.channel.localeCompare(b.channel));

  const happened = runs.started + runs.succeeded + runs.failed + escalations.length + autopilot.length;
  return {
    policy: name,
    namespace: policy.metadata.namespace ?? '',
    timeZone: settings.timeZone,
    since: iso(from),
    until: iso(to),
    runs,
    failedRuns: failedRuns.sort(byTime),
    escalations: escalations.sort(byTime),
    autopilot: autopilot.sort(byTime),
    waiting,
    evaluations,
    ...(averageScore !== undefined ? { averageScore } : {}),
    deferred,
    budget,
    digestItems,
    empty: happened + waiting.length + evaluations.length + deferred.length === 0,
  };
}
