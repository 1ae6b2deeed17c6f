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
import type { Evaluation } from '../../api/evaluation.js';
import type { AgentSession } from '../../api/kinds.js';
import type { NotificationPolicy, NotificationRoute } from '../../api/notification.js';
import type { ChannelType, NotificationTier } from '../../api/notification-channel.js';
import type { Notification, NotificationChannelStatus } from '../../api/outbox.js';
import type { Decision } from '../../api/autopilot.js';
import { RunEndReason, SessionReason } from '../../api/event-reasons.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { Condition } from '../../api/types.js';
import type { Pipeline } from '../../api/pipeline.js';
import type { Project } from '../../api/project.js';
import type { SessionPolicy } from '../../api/session-policy.js';
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
  /** The namespace's Decisions (pending ones are "needs you now"), Projects, Pipelines, SessionPolicies. */
  decisions?: Decision[];
  projects?: Project[];
  pipelines?: Pipeline[];
  sessionPolicies?: SessionPolicy[];
};

/** A Decision waiting for a person, with the commands that answer it. */
export type DigestDecision = {
  name: string;
  what: string;
  reason: string;
  at: string;
  expiresAt?: string;
  approve: string;
  reject: string;
};

/** Something blocked (a pipeline phase, an agent's report) or escalated, open now whatever its age. */
export type DigestOpen = { object: string; message: string; since?: string };

/** What happened to one project in the window, counted from the same Notifications as its lines. */
export type DigestProject = {
  project: string;
  runs: { started: number; succeeded: number; failed: number };
  /** Failed runs grouped by how they ended (the run's reason, its error class), most first. */
  failures: { reason: string; count: number; sessions: string[] }[];
  phasesDone: string[];
  pauses: number;
  resumes: number;
  /** Commits of its sessions that ran in the window (their git status now). */
  commits: number;
  /** Escalations in the window that are no longer open (open ones are under needs you now). */
  escalationsResolved: number;
};

export type DigestCost = {
  sessions: { session: string; project: string; tokens: number; costUSD?: number }[];
  projects: { project: string; tokens: number; costUSD?: number }[];
  budgets: { policy: string; display: string; exceeded: boolean }[];
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
  /**
   * Names of every Notification in phase Digest, and of every tier-3 one still Batched: the notifier
   * marks them Digested once the digest is recorded, so a batch does not send them again.
   */
  digestItems: string[];
  /** Needs you now: pending decisions, blocked work, open escalations whatever their age (waiting: above). */
  decisions: DigestDecision[];
  blocked: DigestOpen[];
  open: DigestOpen[];
  /** What happened, per project (sessions without one under NO_PROJECT). */
  projects: DigestProject[];
  cost: DigestCost;
  /** Nothing happened, nobody waits, nothing is held back. */
  empty: boolean;
};

export const RUN_STARTED_REASONS: ReadonlySet<string> = new Set(['Started']);
export const RUN_SUCCEEDED_REASONS: ReadonlySet<string> = new Set(['Completed']);
/** How a run ends badly (reconcilers/session/plan.ts endReason; `Failed` as the issue names it). */
export const RUN_FAILED_REASONS: ReadonlySet<string> = new Set([
  'Failed',
  ...Object.values(RunEndReason).filter((r) => r !== RunEndReason.Stopped),
  SessionReason.BudgetStopped,
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
    // A tier-3 message the batch still holds is told here and marked Digested with the rest.
    if (phase === 'Batched' && n.spec!.source === 'event') digestItems.push(n.metadata.name);
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

  const night = nightSections(input, [...occurrences.values()], from, to);
  const happened =
    runs.started + runs.succeeded + runs.failed + escalations.length + autopilot.length + night.projects.length;
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
    ...night,
    empty:
      happened +
        waiting.length +
        evaluations.length +
        deferred.length +
        night.decisions.length +
        night.blocked.length +
        night.open.length ===
      0,
  };
}

/** Where the sessions without a Project are counted. */
export const NO_PROJECT = '(no project)';
const qualified = (o: { metadata: { namespace?: string; name: string } }) =>
  `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
const nsFlag = (ns: string | undefined) => (ns && ns !== 'default' ? ` -n ${ns}` : '');
const add = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a + b);

/** The sections seed 002 §2.6 and issue 25 ask for, from the objects and the window's occurrences. */
function nightSections(input: DigestInput, occurrences: Notification[], from: number, to: number) {
  const decisions: DigestDecision[] = (input.decisions ?? [])
    .filter((d) => d.status?.phase === 'PendingApproval' && !d.spec?.approval)
    .map((d) => {
      const t = d.spec!.target;
      const obj = t.session ? `session ${t.session}` : `project ${t.project}`;
      const ns = nsFlag(d.metadata.namespace);
      return {
        name: d.metadata.name,
        what: `${d.spec!.action} ${obj}`,
        reason: d.spec!.reason,
        at: d.status?.decidedAt ?? d.metadata.creationTimestamp ?? '',
        ...(d.status?.expiresAt ? { expiresAt: d.status.expiresAt } : {}),
        approve: `orchctl approve decision ${d.metadata.name}${ns}`,
        reject: `orchctl reject decision ${d.metadata.name}${ns}`,
      };
    })
    .sort((a, b) => a.at.localeCompare(b.at) || a.name.localeCompare(b.name));

  const blocked: DigestOpen[] = [];
  const inBlockedPhase = new Set<string>();
  for (const p of input.pipelines ?? [])
    for (const ph of p.status?.phases ?? []) {
      if (ph.state !== 'Blocked') continue;
      if (ph.session) inBlockedPhase.add(ph.session);
      blocked.push({
        object: `pipeline ${qualified(p)} phase ${ph.name}`,
        message: ph.message ?? ph.reason ?? 'blocked',
        ...(ph.finishedAt || ph.startedAt ? { since: ph.finishedAt ?? ph.startedAt } : {}),
      });
    }
  for (const s of input.sessions)
    if (s.status?.report?.status === 'blocked' && !inBlockedPhase.has(s.metadata.name))
      blocked.push({ object: `session ${qualified(s)}`, message: s.status.report.blocker || 'blocked' });
  // A run a budget with action Stop ended: nothing restarts it, only a person (a raised budget, a restart).
  // Listed after the blocked work, each group by time, so that the order does not hang on a race.
  const stopped: DigestOpen[] = [];
  for (const s of input.sessions) {
    const st = s.status;
    if (st?.reason !== SessionReason.BudgetExceeded || !TERMINAL_PHASES.has(st.phase as Phase)) continue;
    stopped.push({
      object: `session ${qualified(s)}`,
      message: st.message ?? 'stopped by its budget',
      ...(st.completionTime ? { since: st.completionTime } : {}),
    });
  }

  // Open escalations, whatever their age: the session's controller or judge, the project's autopilot.
  const open: DigestOpen[] = [];
  for (const o of [...input.sessions, ...(input.projects ?? [])]) {
    const c = (o.status as { conditions?: Condition[] } | undefined)?.conditions?.find(
      (x) => x.type === 'Escalated' && x.status === 'True',
    );
    if (c)
      open.push({
        object: `${o.kind === 'Project' ? 'project' : 'session'} ${qualified(o)}`,
        message: c.message ?? 'escalated',
        ...(c.lastTransitionTime ? { since: c.lastTransitionTime } : {}),
      });
  }
  const bySince = (a: DigestOpen, b: DigestOpen) =>
    (a.since ?? '').localeCompare(b.since ?? '') || a.object.localeCompare(b.object);
  blocked.sort(bySince);
  blocked.push(...stopped.sort(bySince));

  // What happened per project: the same occurrences the run counts come from.
  const projectOf = new Map(input.sessions.map((s) => [qualified(s), s.spec?.projectRef ?? NO_PROJECT]));
  const pipelineProject = new Map(
    (input.pipelines ?? []).map((p) => [qualified(p), p.spec?.phases?.[0]?.template.projectRef ?? NO_PROJECT]),
  );
  const projects = new Map<string, DigestProject>();
  const of = (name: string) => {
    let p = projects.get(name);
    if (!p) {
      p = {
        project: name,
        runs: { started: 0, succeeded: 0, failed: 0 },
        failures: [],
        phasesDone: [],
        pauses: 0,
        resumes: 0,
        commits: 0,
        escalationsResolved: 0,
      };
      projects.set(name, p);
    }
    return p;
  };
  const ranInWindow = new Set<string>();
  for (const n of occurrences) {
    const e = n.spec!.event!;
    const obj = objectOf(n);
    if (e.involvedObject.kind === 'AgentSession') {
      const p = of(projectOf.get(obj) ?? NO_PROJECT);
      const run = RUN_STARTED_REASONS.has(e.reason) || RUN_SUCCEEDED_REASONS.has(e.reason);
      if (run || RUN_FAILED_REASONS.has(e.reason)) ranInWindow.add(obj);
      if (RUN_STARTED_REASONS.has(e.reason)) p.runs.started++;
      else if (RUN_SUCCEEDED_REASONS.has(e.reason)) p.runs.succeeded++;
      else if (RUN_FAILED_REASONS.has(e.reason)) {
        p.runs.failed++;
        const g = p.failures.find((x) => x.reason === e.reason) ?? { reason: e.reason, count: 0, sessions: [] };
        if (!g.count) p.failures.push(g);
        g.count++;
        if (!g.sessions.includes(e.involvedObject.name)) g.sessions.push(e.involvedObject.name);
      } else if (e.reason === ESCALATION_REASON) {
        const known = input.sessions.find((x) => qualified(x) === obj);
        const still = known?.status?.conditions?.some((c) => c.type === 'Escalated' && c.status === 'True');
        // A session the store no longer has cannot say it recovered: told as open.
        if (!known) open.push({ object: `session ${obj}`, message: e.message, since: e.lastTimestamp ?? '' });
        else if (!still) p.escalationsResolved++;
      } else if (e.reason === 'Paused') p.pauses++;
      else if (e.reason === 'Resumed') p.resumes++;
    } else if (e.involvedObject.kind === 'Pipeline' && e.reason === 'PhaseSucceeded') {
      of(pipelineProject.get(obj) ?? NO_PROJECT).phasesDone.push(`${e.involvedObject.name}: ${e.message}`);
    }
  }
  for (const s of input.sessions)
    if (ranInWindow.has(qualified(s))) of(s.spec?.projectRef ?? NO_PROJECT).commits += s.status?.git?.commits ?? 0;
  open.sort(bySince);
  for (const p of projects.values()) p.failures.sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));

  // Cost: the hours of each session's usage inside the window.
  const sessions: DigestCost['sessions'] = [];
  for (const s of input.sessions) {
    let tokens = 0;
    let costUSD: number | undefined = 0;
    for (const h of s.status?.usage?.hourly ?? []) {
      const t = Date.parse(h.hour);
      if (t < from || t >= to) continue;
      tokens += h.tokens;
      costUSD = add(costUSD, h.costUSD);
    }
    if (tokens)
      sessions.push({
        session: qualified(s),
        project: s.spec?.projectRef ?? NO_PROJECT,
        tokens,
        ...(costUSD !== undefined ? { costUSD } : {}),
      });
  }
  sessions.sort((a, b) => b.tokens - a.tokens || a.session.localeCompare(b.session));
  const perProject = new Map<string, { tokens: number; costUSD?: number }>();
  for (const x of sessions) {
    const cur = perProject.get(x.project) ?? { tokens: 0, costUSD: 0 };
    perProject.set(x.project, { tokens: cur.tokens + x.tokens, costUSD: add(cur.costUSD, x.costUSD) });
  }
  const cost: DigestCost = {
    sessions,
    projects: [...perProject]
      .map(([project, v]) => ({
        project,
        tokens: v.tokens,
        ...(v.costUSD !== undefined ? { costUSD: v.costUSD } : {}),
      }))
      .sort((a, b) => b.tokens - a.tokens || a.project.localeCompare(b.project)),
    budgets: (input.sessionPolicies ?? [])
      .filter((p) => p.status?.budget)
      .map((p) => ({
        policy: qualified(p),
        display: p.status!.budget!.display ?? '',
        exceeded: !!p.status!.budget!.exceeded,
      }))
      .sort((a, b) => a.policy.localeCompare(b.policy)),
  };
  return {
    decisions,
    blocked,
    open,
    projects: [...projects.values()].sort((a, b) => a.project.localeCompare(b.project)),
    cost,
  };
}
