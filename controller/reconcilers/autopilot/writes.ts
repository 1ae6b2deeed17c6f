/**
 * What the autopilot reconciler writes, decided purely: when a think is due, and the one
 * transaction of a think, of a person's answer to a Decision and of a Decision's expiry — the
 * Decisions, what the executable ones change (rechecked against a fresh read, execute.ts), the
 * Projects' error-retry counts, the Autopilot's status and the Events. Observed objects and `now`
 * in, write operations out: no store, no clock, no planner (plan.ts decides what to propose).
 */
import {
  type Autopilot,
  type DecisionCounts,
  DECISION_PHASES,
  DEFAULTS,
  type ErrorRetries,
  type ThinkTrigger,
} from '../../api/autopilot.js';
import { setCondition } from '../../api/conditions.js';
import type { KindInfo } from '../../api/crds.js';
import { formatDuration } from '../../api/duration.js';
import type { EventObject } from '../../api/event.js';
import { AutopilotReason } from '../../api/event-reasons.js';
import type { Evaluation } from '../../api/evaluation.js';
import { resolvePolicy } from '../../api/policy.js';
import type { Project } from '../../api/project.js';
import type { AgentSession } from '../../api/session.js';
import type { SessionPolicy } from '../../api/session-policy.js';
import { newEvent } from '../../client/events.js';
import type { WriteOp } from '../../store/store.js';
import {
  AUTOPILOT_COMPONENT,
  afterNotice,
  effects,
  type Fresh,
  newSession,
  noticeEvent,
  recheck,
  timeBoxNotice,
} from './execute.js';
import { type Dec, type Draft, endSeenAt, selectedProjects, type Settings, type View } from './plan.js';
import { resumePrompt } from './prompts.js';
import { objectErrors } from '../../client/spec-checks.js';

// ---- when to think ------------------------------------------------------------------------------

/** The caches a trigger is read from. */
export interface TriggerObserved {
  projects: Project[];
  sessions: AgentSession[];
  evaluations: Evaluation[];
}

/**
 * Why a think is due now, if it is: never thought, the spec changed, since the last think a run of
 * a selected project ended, a session escalated or an Evaluation was judged, or the interval is up.
 */
export function thinkTrigger(ap: Autopilot, o: TriggerObserved, now: number): ThinkTrigger | undefined {
  const st = ap.status ?? {};
  if (!st.lastThink) return 'start';
  if (st.observedGeneration !== ap.metadata.generation) return 'spec';
  const last = Date.parse(st.lastThink.time);
  const selected = new Set(selectedProjects({ autopilot: ap, projects: o.projects }).map((p) => p.metadata.name));
  const ours = o.sessions.filter((s) => selected.has(s.spec?.projectRef ?? ''));
  const after = (t: string | undefined) => !!t && Date.parse(t) > last;
  if (ours.some((s) => after(endSeenAt(s)))) return 'session-ended';
  const escalated = (s: AgentSession) =>
    s.status?.conditions?.some((c) => c.type === 'Escalated' && c.status === 'True' && after(c.lastTransitionTime));
  if (ours.some(escalated)) return 'escalation';
  const names = new Set(ours.map((s) => s.metadata.name));
  if (o.evaluations.some((e) => names.has(e.spec?.sessionRef ?? '') && after(e.status?.evaluatedAt)))
    return 'evaluation';
  const next = Date.parse(st.nextThinkTime ?? '');
  if (!Number.isFinite(next) || now >= next) return 'interval';
  return undefined;
}

// ---- carrying a Decision out --------------------------------------------------------------------

/** What an executable Decision is rechecked and carried out against. */
export interface CarryOutInput {
  /** A fresh read of the Projects and sessions (not the caches, which may lag a person's write). */
  fresh: Fresh;
  /** The namespace's SessionPolicies (a started session's time box may come from its policy). */
  policies: SessionPolicy[];
  /** The AgentSession kind, for validating a session before it is created. */
  sessionKind: KindInfo;
  /** The resume prompt for a start without one (built from the caches only when asked). */
  resume: (project: string) => string;
  now: string;
}

export type CarryOut =
  | { ok: true; session?: string; event?: string }
  | { ok: false; failed?: boolean; message: string };

/** The effects of one executable Decision, appended to `ops`; or why it does not execute. */
export function carryOut(ap: Autopilot, dec: Dec, r: CarryOutInput, ops: WriteOp[]): CarryOut {
  const ok = recheck(dec, r.fresh);
  if (!ok.ok) return { ok: false, message: ok.message };
  const now = r.now;
  const project = r.fresh.projects.get(dec.spec.target.project ?? '');
  if (dec.spec.action === 'start') return start(ap, dec, r, ops, project);
  if (dec.spec.action === 'notify') {
    const about = project ?? ap;
    const type = dec.spec.recovery ? 'Warning' : 'Normal';
    const ev = noticeEvent(dec, about, type, dec.spec.message ?? dec.spec.reason, 'notice', now);
    ops.push({ op: 'create', object: ev });
    return { ok: true, event: ev.metadata.name };
  }
  if (dec.spec.action === 'skip') return { ok: true };
  ops.push(...effects(dec, r.fresh, now));
  // A run that ran out of time goes on: the person hears of it (whatever the gate's "notify after").
  if (dec.spec.action === 'restart' && dec.spec.recovery?.class === 'TimeBox' && project)
    ops.push({ op: 'create', object: timeBoxNotice(dec, project, now) });
  else if (dec.status?.notifyAfter && project)
    ops.push({ op: 'create', object: afterNotice(dec, project, dec.spec.target.session ?? '', now) });
  return { ok: true, session: dec.spec.target.session };
}

function start(ap: Autopilot, dec: Dec, r: CarryOutInput, ops: WriteOp[], project: Project | undefined): CarryOut {
  const prompt = dec.spec.prompt ?? r.resume(dec.spec.target.project ?? '');
  const session = newSession(ap, dec, ap.spec?.sessionTemplate, prompt);
  // Seed 002 §2.7: an autopilot session is time-boxed, by its template, else its policy, else 45m.
  if (!session.spec?.maxDuration && !resolvePolicy(session, r.policies)?.spec?.maxSessionDuration)
    session.spec = { ...session.spec, maxDuration: DEFAULTS.maxDuration };
  const errors = objectErrors(session, r.sessionKind, 'program');
  if (errors.length)
    return {
      ok: false,
      failed: true,
      message: `the session it would create is invalid: ${errors
        .map((e) => `${e.path.join('.')}: ${e.message}`)
        .join('; ')}`,
    };
  ops.push(...effects(dec, r.fresh, r.now, session));
  if (dec.status?.notifyAfter && project)
    ops.push({ op: 'create', object: afterNotice(dec, project, session.metadata.name, r.now) });
  return { ok: true, session: session.metadata.name };
}

/** A Decision's status after its execution was tried. */
export function record(st: NonNullable<Dec['status']>, r: CarryOut, now: string): void {
  if (!r.ok) {
    st.phase = r.failed ? 'Failed' : 'Superseded';
    st.message = r.message;
    return;
  }
  st.phase = 'Executed';
  st.executedAt = now;
  if (r.session) st.result = { ...st.result, session: r.session };
  if (r.event) st.result = { ...st.result, event: r.event };
}

// ---- the Projects' error-retry counts ------------------------------------------------------------

/** The error-retry count a Decision changes: a recovery restart that executed, an escalation recorded. */
export function bookRetries(dec: Dec, fresh: Fresh, retries: Map<string, ErrorRetries | undefined>, now: string) {
  const rec = dec.spec.recovery;
  const project = dec.spec.target.project;
  if (!rec || !project || !fresh.projects.has(project)) return;
  const base = retries.has(project) ? retries.get(project) : fresh.projects.get(project)?.status?.errorRetries;
  const cur: ErrorRetries = base ? structuredClone(base) : { count: 0, windowStart: now };
  const failure = { session: rec.session, run: rec.run, class: rec.class, at: now };
  const ran = dec.status?.phase === 'Executed' || (dec.status?.phase === 'Expired' && !!dec.status.executedAt);
  if (dec.spec.action === 'restart' && ran) {
    // A continuation after a time box is counted against its own limit (maxTimeBoxContinuations).
    if (rec.class === 'TimeBox')
      retries.set(project, { ...cur, timeBoxes: (cur.timeBoxes ?? 0) + 1, lastFailure: failure });
    else retries.set(project, { ...cur, count: cur.count + 1, lastFailure: failure });
  } else if (dec.spec.action === 'notify' && dec.status?.phase !== 'Superseded' && dec.status?.phase !== 'Failed') {
    retries.set(project, {
      ...cur,
      lastFailure: failure,
      escalated: { reason: dec.spec.reason.slice(0, 500), at: now },
    });
  }
}

/** The Projects' status writes for the counts booked: errorRetries and the Escalated condition. */
export function projectWrites(fresh: Fresh, retries: Map<string, ErrorRetries | undefined>, now: string): WriteOp[] {
  const ops: WriteOp[] = [];
  for (const [name, value] of retries) {
    const p = fresh.projects.get(name);
    if (!p) continue;
    const next = structuredClone(p);
    next.status ??= {};
    const st = next.status;
    if (value) st.errorRetries = value;
    else delete st.errorRetries;
    st.conditions ??= [];
    setCondition(
      st.conditions,
      value?.escalated
        ? { type: 'Escalated', status: 'True', reason: 'AutopilotEscalated', message: value.escalated.reason }
        : { type: 'Escalated', status: 'False', reason: 'Recovered', message: '' },
      value?.escalated?.at ?? now,
    );
    ops.push({ op: 'updateStatus', object: next });
  }
  return ops;
}

/** Holds the transaction to the sessions as freshly read, so that a start never races another start. */
const unchangedSessions = (ap: Autopilot, fresh: Fresh): WriteOp => ({
  op: 'unchanged',
  kind: 'AgentSession',
  namespace: ap.metadata.namespace,
  since: fresh.revision,
});

// ---- the three transactions ---------------------------------------------------------------------

/** A think as decided (plan.ts decide) and the Autopilot's status after it. */
export interface ThinkDecided {
  ap: Autopilot;
  drafts: Draft[];
  resets: View['resets'];
  status: NonNullable<Autopilot['status']>;
  /** The Autopilot's Decisions before this think (for status.counts). */
  decisions: Dec[];
  /** Written with it (a PlannerFailed Event). */
  extra: WriteOp[];
}

/** The think's one transaction, and the Decisions it creates. */
export function planThinkWrite(t: ThinkDecided, r: CarryOutInput): { ops: WriteOp[]; written: Dec[] } {
  const { ap, status } = t;
  const { fresh, now } = r;
  const ops: WriteOp[] = [];
  const retries = new Map<string, ErrorRetries | undefined>();
  const written: Dec[] = [];
  for (const [name, reset] of t.resets) {
    const cur = fresh.projects.get(name)?.status?.errorRetries;
    if (!cur) continue;
    retries.set(name, reset === 'clear' ? undefined : { count: 0, windowStart: now, lastFailure: cur.lastFailure });
  }
  let guard = false;
  for (const draft of t.drafts) {
    if (draft.update) {
      // Compare-and-swap on the version read: a person's answer in between wins.
      ops.push({ op: 'updateStatus', object: draft.decision });
      continue;
    }
    const dec = structuredClone(draft.decision);
    const st = dec.status ?? {};
    if (draft.execute) {
      const c = carryOut(ap, dec, r, ops);
      record(st, c, now);
      guard ||= c.ok && dec.spec.action === 'start';
    }
    dec.status = st;
    bookRetries(dec, fresh, retries, now);
    ops.push({ op: 'create', object: dec }, { op: 'updateStatus', object: dec });
    // Told in the Decision's own transaction: a pending one is never without its Event.
    if (st.phase === 'PendingApproval')
      ops.push({ op: 'create', object: pendingEvent(ap, dec, fresh.projects.get(dec.spec.target.project ?? ''), now) });
    written.push(dec);
  }
  const advice = recommendationsEvent(ap, status.thinks ?? 0, written, now);
  if (advice) ops.push({ op: 'create', object: advice });
  ops.push(...projectWrites(fresh, retries, now), ...t.extra);
  const next = { ...status, counts: counts([...t.decisions, ...written]) };
  ops.push({ op: 'updateStatus', object: { ...ap, status: next } });
  if (guard) ops.push(unchangedSessions(ap, fresh));
  return { ops, written };
}

/**
 * A PendingApproval Decision a person answered: executed (rechecked) or rejected. `r` is needed
 * only for an approval. Undefined when it is no longer pending.
 */
export function planSettle(
  ap: Autopilot,
  cur: Dec | undefined,
  approval: NonNullable<Dec['spec']['approval']>,
  r: CarryOutInput | undefined,
  now: string,
): { ops: WriteOp[]; decision: Dec } | undefined {
  if (cur?.status?.phase !== 'PendingApproval') return undefined;
  const next = structuredClone(cur);
  next.status ??= {};
  const st = next.status;
  const ops: WriteOp[] = [];
  let guard = false;
  const retries = new Map<string, ErrorRetries | undefined>();
  if (approval.verdict === 'Rejected') {
    st.phase = 'Rejected';
    st.guardrail = 'Person';
    const by = approval.by ? ` by ${approval.by}` : '';
    st.message = `rejected${by}${approval.message ? `: ${approval.message}` : ''}`;
  } else {
    if (!r) throw new Error(`Decision ${cur.metadata.name}: an approval is carried out against a fresh read`);
    const c = carryOut(ap, next, r, ops);
    record(st, c, now);
    if (c.ok) st.message = `approved${approval.by ? ` by ${approval.by}` : ''}`;
    guard = c.ok && next.spec.action === 'start';
    bookRetries(next, r.fresh, retries, now);
  }
  ops.push({ op: 'updateStatus', object: next });
  if (r && approval.verdict !== 'Rejected') ops.push(...projectWrites(r.fresh, retries, now));
  if (guard && r) ops.push(unchangedSessions(ap, r.fresh));
  return { ops, decision: next };
}

/**
 * A PendingApproval Decision nobody answered within spec.approval.timeout: Expired, its default
 * action taken (proceed: executed, rechecked as an approval is; reject: dropped), and told with a
 * DecisionExpired Event in the same transaction. Undefined when it is no longer pending or was answered.
 */
export function planExpire(
  ap: Autopilot,
  cur: Dec | undefined,
  s: Settings,
  r: CarryOutInput,
): { ops: WriteOp[]; decision: Dec } | undefined {
  if (cur?.status?.phase !== 'PendingApproval' || cur.spec.approval) return undefined;
  const { fresh, now } = r;
  const next = structuredClone(cur);
  next.status ??= {};
  const st = next.status;
  const ops: WriteOp[] = [];
  const retries = new Map<string, ErrorRetries | undefined>();
  const waited = `nobody answered within ${formatDuration(s.approvalTimeoutMs)}`;
  let guard = false;
  if (s.onTimeout[next.spec.action] === 'proceed') {
    const c = carryOut(ap, next, r, ops);
    record(st, c, now);
    st.message = c.ok
      ? `${waited}: proceeded (onTimeout proceed)`
      : `${waited}; proceeding was not possible: ${c.message}`;
    guard = c.ok && next.spec.action === 'start';
  } else st.message = `${waited}: dropped (onTimeout reject)`;
  st.phase = 'Expired';
  bookRetries(next, fresh, retries, now);
  const about = fresh.projects.get(next.spec.target.project ?? '') ?? ap;
  ops.push({ op: 'updateStatus', object: next }, ...projectWrites(fresh, retries, now), {
    op: 'create',
    object: expiredEvent(next, about, st.message, now),
  });
  if (guard) ops.push(unchangedSessions(ap, fresh));
  return { ops, decision: next };
}

// ---- Events and counts --------------------------------------------------------------------------

/** The resume prompt for a start the planner wrote no prompt for (seed 002 §2.3). */
export function resumeFrom(v: View, project: string): string {
  const pv = v.input.projects.find((p) => p.name === project);
  return pv ? resumePrompt(pv) : `Resume work on the project "${project}".`;
}

/** PlannerFailed: recorded in the think's transaction, named after the think (so once). */
export function plannerFailedEvent(ap: Autopilot, think: number, error: string, now: string): EventObject {
  const message = `the planner failed, no action taken: ${error}`;
  const name = `${ap.metadata.name}.planner-failed.${think}`;
  return newEvent(
    ap,
    { name, type: 'Warning', reason: AutopilotReason.PlannerFailed, message, now },
    AUTOPILOT_COMPONENT,
  );
}

export function counts(decisions: Dec[]): DecisionCounts {
  const out: DecisionCounts = {};
  for (const p of DECISION_PHASES) {
    const n = decisions.filter((x) => x.status?.phase === p).length;
    if (n) out[p] = n;
  }
  return out;
}

/** `orchctl approve decision NAME` (with -n when the namespace is not the default one). */
function answer(verb: 'approve' | 'reject', dec: Dec): string {
  const ns = dec.metadata.namespace && dec.metadata.namespace !== 'default' ? ` -n ${dec.metadata.namespace}` : '';
  return `orchctl ${verb} decision ${dec.metadata.name}${ns}`;
}

/** What a Decision would do, in a few words: `restart session web-1 (project web)`. */
function what(dec: Dec): string {
  const t = dec.spec.target;
  const obj = t.session ? `session ${t.session}${t.project ? ` (project ${t.project})` : ''}` : `project ${t.project}`;
  return `${dec.spec.action} ${obj}`;
}

/**
 * DecisionPending: a Decision waits for a person, with the commands that answer it. A Warning when
 * it holds back a recovery (the routing table makes that tier 1), else Normal (tier 2).
 */
function pendingEvent(ap: Autopilot, dec: Dec, project: Project | undefined, now: string): EventObject {
  const expires = dec.status?.expiresAt ? `; unanswered by ${dec.status.expiresAt} it expires` : '';
  const message =
    `Decision ${dec.metadata.name} waits for you: ${what(dec)}: ${dec.spec.reason}. ` +
    `Approve: ${answer('approve', dec)}; reject: ${answer('reject', dec)}${expires}`;
  return newEvent(
    project ?? ap,
    {
      name: `${dec.metadata.name}.pending`,
      type: dec.spec.recovery ? 'Warning' : 'Normal',
      reason: AutopilotReason.DecisionPending,
      message,
      now,
    },
    AUTOPILOT_COMPONENT,
  );
}

/** DecisionExpired, in the transaction of the Decision's Expired status. */
function expiredEvent(dec: Dec, about: Project | Autopilot, outcome: string, now: string): EventObject {
  return newEvent(
    about,
    {
      name: `${dec.metadata.name}.expired`,
      type: 'Warning',
      reason: AutopilotReason.DecisionExpired,
      message: `Decision ${dec.metadata.name} (${what(dec)}) expired: ${outcome}`,
      now,
    },
    AUTOPILOT_COMPONENT,
  );
}

/**
 * At the observe level the recommendations of a think reach a person as messages (seed 002 §2.1:
 * "SMS only"): one AutopilotNotice per think listing them, which the policy batches (tier 3).
 */
function recommendationsEvent(ap: Autopilot, think: number, written: Dec[], now: string): EventObject | undefined {
  const advice = written.filter(
    (d) => d.spec.level === 'observe' && d.status?.phase === 'Logged' && d.spec.action !== 'skip',
  );
  if (!advice.length) return undefined;
  const lines = advice.map((d) => `${what(d)}: ${d.spec.reason} (${d.metadata.name})`);
  return newEvent(
    ap,
    {
      name: `${ap.metadata.name}.recommendations.${think}`,
      type: 'Normal',
      reason: AutopilotReason.AutopilotNotice,
      message: `observe level, recommended (nothing done): ${lines.join('; ')}`.slice(0, 1000),
      now,
    },
    AUTOPILOT_COMPONENT,
  );
}
