/**
 * The autopilot's pure plan. Two halves around the planner call:
 *  - `view()`: the world as read from the caches → what a planner sees (PlannerInput), with the
 *    failed runs classified (classify.ts) and the objects read (the snapshot);
 *  - `decide()`: proposals (the planner's, plus the deterministic recovery of recovery.ts) → Decision
 *    drafts, each through the guardrails in a fixed order and then the autonomy gate (gate.ts).
 * No clock, no I/O: `now` is an input. Execution (execute.ts) re-checks each draft against a fresh
 * read of the store before it writes.
 */
import { frozenMark } from '../../api/freeze.js';
import { currentPause } from '../../api/pause.js';
import {
  ACTION_LABEL,
  AUTOPILOT_ACTIONS,
  AUTOPILOT_LABEL,
  type Autopilot,
  type AutopilotAction,
  type AutopilotSpec,
  type Decision,
  type DecisionPhase,
  type DecisionSpec,
  APPROVAL_DEFAULTS,
  type ApprovalDefault,
  DEFAULTS,
  type ErrorClass,
  type Guardrail,
  PROJECT_LABEL,
  type SnapshotRef,
} from '../../api/autopilot.js';
import { parseDuration } from '../../api/duration.js';
import type { Evaluation } from '../../api/evaluation.js';
import { isKind } from '../../api/kinds.js';
import { fromLabelSelector, matches } from '../../api/labels.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import { DEFAULT_STALE_AFTER, type Project } from '../../api/project.js';
import type { AgentSession } from '../../api/session.js';
import type { SessionPolicy } from '../../api/session-policy.js';
import { API_VERSION } from '../../api/types.js';
import { classifyFailure } from './classify.js';
import { gate } from './gate.js';
import type { FailureView, PlannerInput, ProjectView, Proposal, SessionView } from './types.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const ms = (d: string | undefined, fallback: string) => parseDuration(d ?? fallback);

/** The spec with every default filled in (durations in ms). */
export interface Settings {
  level: NonNullable<AutopilotSpec['autonomyLevel']>;
  intervalMs: number;
  actions: AutopilotAction[];
  sameProjectMs: number;
  sameActionMs: number;
  youngMs: number;
  maxErrorRetries: number;
  maxTimeBoxContinuations: number;
  errorRetryWindowMs: number;
  /** Set only when the Autopilot overrides the projects' own staleness. */
  stalenessDays?: number;
  minFreeMemoryMB: number;
  maxActiveSessions: number;
  maxStartsPerThink: number;
  keep: number;
  ttlMs: number;
  approvalTimeoutMs: number;
  onTimeout: Record<AutopilotAction, ApprovalDefault>;
}

export function settings(spec: AutopilotSpec | undefined, policy?: SessionPolicy): Settings {
  const s = spec ?? {};
  const g = s.guardrails ?? {};
  return {
    level: s.autonomyLevel ?? 'observe',
    intervalMs: ms(s.interval, DEFAULTS.interval),
    actions: g.actions ?? [...AUTOPILOT_ACTIONS],
    sameProjectMs: ms(g.cooldowns?.sameProject, DEFAULTS.sameProject),
    sameActionMs: ms(g.cooldowns?.sameAction, DEFAULTS.sameAction),
    youngMs: ms(g.youngSessionWindow, DEFAULTS.youngSessionWindow),
    maxErrorRetries: g.maxErrorRetries ?? DEFAULTS.maxErrorRetries,
    maxTimeBoxContinuations: g.maxTimeBoxContinuations ?? DEFAULTS.maxTimeBoxContinuations,
    errorRetryWindowMs: ms(g.errorRetryWindow, DEFAULTS.errorRetryWindow),
    stalenessDays: g.stalenessDays,
    minFreeMemoryMB: g.minFreeMemoryMB ?? policy?.spec?.minFreeMemoryMB ?? DEFAULTS.minFreeMemoryMB,
    maxActiveSessions: g.maxActiveSessions ?? DEFAULTS.maxActiveSessions,
    maxStartsPerThink: g.maxStartsPerThink ?? DEFAULTS.maxStartsPerThink,
    keep: s.history?.keep ?? DEFAULTS.keep,
    ttlMs: ms(s.history?.ttl, DEFAULTS.ttl),
    approvalTimeoutMs: ms(s.approval?.timeout, APPROVAL_DEFAULTS.timeout),
    onTimeout: { ...APPROVAL_DEFAULTS.onTimeout, ...s.approval?.onTimeout },
  };
}

/** What the autopilot reads for one think (from the informer caches). */
export interface World {
  autopilot: Autopilot;
  /** Every Project, Session and Evaluation of the autopilot's namespace. */
  projects: Project[];
  sessions: AgentSession[];
  evaluations: Evaluation[];
  /** This autopilot's Decisions. */
  decisions: Dec[];
  /** Free memory the Node reports (undefined: no Node object yet). */
  freeMemoryMB?: number;
  /** The session template's policy and how many sessions run under it now. */
  policy?: SessionPolicy;
  activeUnderPolicy?: number;
  now: number;
}

export const isActive = (s: AgentSession) => !TERMINAL_PHASES.has((s.status?.phase ?? 'Pending') as Phase);

/**
 * When an ended session's end was seen: completionTime is when the run ended, which for a run that
 * ended while no controller ran is before a think that still saw it running; the Ready condition
 * turned False when the end was recorded. The later of the two (undefined while it is active).
 */
export function endSeenAt(s: AgentSession): string | undefined {
  if (isActive(s)) return undefined;
  const st = s.status;
  const ready = st?.conditions?.find((c) => c.type === 'Ready' && c.status === 'False')?.lastTransitionTime;
  const t = [st?.completionTime, ready].filter((x): x is string => !!x && !Number.isNaN(Date.parse(x)));
  return t.sort((a, b) => Date.parse(b) - Date.parse(a))[0];
}
const ref = (o: Project | AgentSession): SnapshotRef => ({
  kind: o.kind,
  name: o.metadata.name,
  resourceVersion: o.metadata.resourceVersion ?? '0',
  ...(o.metadata.generation !== undefined ? { generation: o.metadata.generation } : {}),
  ...(isKind(o, 'AgentSession') ? { run: o.status?.run ?? 0 } : {}),
});

/** A missing projectSelector selects no project, `{}` every one (docs/controller.md, "Selectors"). */
export function selectedProjects(w: Pick<World, 'autopilot' | 'projects'>): Project[] {
  if (!w.autopilot.spec?.projectSelector) return [];
  const sel = fromLabelSelector(w.autopilot.spec.projectSelector);
  // A frozen project (orchctl freeze) is left alone: no start, stop, restart or recovery until thawed.
  return w.projects
    .filter((p) => !p.metadata.deletionTimestamp && !frozenMark(p) && matches(sel, p.metadata.labels))
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

/** A run that ended badly: Failed, TimedOut, or Killed by something other than a stop. */
function failedRun(s: AgentSession): boolean {
  const st = s.status ?? {};
  if (st.phase === 'Failed' || st.phase === 'TimedOut') return st.reason !== 'Stopped';
  return st.phase === 'Killed' && st.reason !== 'Stopped';
}

const endMs = (s: AgentSession) => Date.parse(s.status?.completionTime ?? '') || 0;

export interface View {
  input: PlannerInput;
  /** What each project's decisions are based on: the project and its sessions. */
  refs: Map<string, SnapshotRef[]>;
  /** The newest revision among the objects read. */
  revision: number;
  /** Project name → the errorRetries it should have now (window expired, or a run succeeded since). */
  resets: Map<string, 'clear' | 'window'>;
}

/** The world as a planner sees it. */
export function view(w: World, s: Settings): View {
  const protectedSel = w.autopilot.spec?.guardrails?.protectedProjects;
  const prot = protectedSel ? fromLabelSelector(protectedSel) : undefined;
  const refs = new Map<string, SnapshotRef[]>();
  const resets = new Map<string, 'clear' | 'window'>();
  let revision = Number(w.autopilot.metadata.resourceVersion ?? 0);
  const bump = (o: { metadata: { resourceVersion?: string } }) => {
    revision = Math.max(revision, Number(o.metadata.resourceVersion ?? 0));
  };
  const byProject = new Map<string, AgentSession[]>();
  for (const sess of w.sessions) {
    const p = sess.spec?.projectRef;
    if (p) byProject.set(p, [...(byProject.get(p) ?? []), sess]);
  }
  const lastEvalOf = new Map<string, Evaluation>();
  for (const e of w.evaluations) {
    const key = `${e.spec?.sessionRef}#${e.spec?.run}`;
    if (typeof e.status?.score === 'number') lastEvalOf.set(key, e);
  }
  const projects: ProjectView[] = [];
  let activeSessions = 0;
  for (const p of selectedProjects(w)) {
    bump(p);
    const sessions = (byProject.get(p.metadata.name) ?? []).sort((a, b) =>
      a.metadata.name.localeCompare(b.metadata.name),
    );
    sessions.forEach(bump);
    refs.set(p.metadata.name, [ref(p), ...sessions.map(ref)]);
    const active = sessions.filter(isActive);
    activeSessions += active.length;
    const spec = p.spec ?? { path: '' };
    const ended = sessions.filter((x) => !isActive(x) && x.status?.completionTime).sort((a, b) => endMs(b) - endMs(a));
    const newest = ended[0];
    // The later of what the project reconciler last wrote and the newest run end seen here: a run that
    // just ended makes the project recent at once, not when the project's status catches up.
    const runEnd = newest?.status?.completionTime;
    const lastActivity =
      runEnd && Date.parse(runEnd) > (Date.parse(p.status?.lastActivity ?? '') || 0) ? runEnd : p.status?.lastActivity;
    const since = Date.parse(lastActivity ?? p.metadata.creationTimestamp ?? '') || w.now;
    const idleDays = Math.max(0, Math.round(((w.now - since) / DAY_MS) * 10) / 10);
    const staleAfterMs =
      s.stalenessDays !== undefined ? s.stalenessDays * DAY_MS : parseDuration(spec.staleAfter ?? DEFAULT_STALE_AFTER);
    const stale = !spec.blocked && active.length === 0 && w.now - since > staleAfterMs;
    const evalOf = (x: AgentSession) => lastEvalOf.get(`${x.metadata.name}#${x.status?.run}`);
    const summary = (x: AgentSession) => {
      const e = evalOf(x)?.status;
      return e ? [e.reasoning, ...(e.failures ?? []).map((f) => `failure: ${f}`)].filter(Boolean).join(' ') : undefined;
    };
    const retries = p.status?.errorRetries;
    let count = retries?.count ?? 0;
    let timeBoxes = retries?.timeBoxes ?? 0;
    if (retries && w.now - Date.parse(retries.windowStart) > s.errorRetryWindowMs && !retries.escalated) {
      count = 0;
      timeBoxes = 0;
      resets.set(p.metadata.name, 'window');
    }
    let failure: FailureView | undefined;
    if (newest && active.length === 0) {
      const st = newest.status ?? {};
      const lf = retries?.lastFailure;
      const seen = lf && lf.session === newest.metadata.name && lf.run === (st.run ?? 0);
      if (failedRun(newest) && !seen) {
        const c = classifyFailure(st, evalOf(newest)?.status);
        failure = {
          session: newest.metadata.name,
          run: st.run ?? 0,
          phase: st.phase as Phase,
          exitCode: st.exitCode,
          endedAt: st.completionTime,
          class: c.class,
          evidence: c.evidence,
        };
        const held = st.conditions?.find(
          (x) => x.type === 'Escalated' && x.status === 'True' && x.reason !== 'JudgeEscalated',
        );
        if (held) failure.sessionEscalated = held.reason ?? 'Escalated';
      }
      // A run that succeeded after the last failure: the project recovered.
      if (st.phase === 'Succeeded' && retries && endMs(newest) > Date.parse(retries.lastFailure?.at ?? '')) {
        count = 0;
        timeBoxes = 0;
        resets.set(p.metadata.name, 'clear');
      }
    }
    const escalated = resets.get(p.metadata.name) === 'clear' ? undefined : retries?.escalated?.reason;
    projects.push({
      name: p.metadata.name,
      priority: spec.priority ?? 0,
      ...(spec.notes ? { notes: spec.notes } : {}),
      ...(spec.blocked ? { blocked: spec.blocked.reason } : {}),
      protected: !!spec.protected || (!!prot && matches(prot, p.metadata.labels)),
      stale,
      idleDays,
      ...(lastActivity ? { lastActivity } : {}),
      sessions: sessions.map((x) => sessionView(x, w)),
      ...(newest
        ? {
            lastRun: {
              session: newest.metadata.name,
              run: newest.status?.run ?? 0,
              phase: newest.status?.phase as Phase,
              endedAt: newest.status?.completionTime,
              summary: summary(newest),
            },
          }
        : {}),
      ...(failure ? { failure } : {}),
      recentOutcomes: (p.status?.recentOutcomes ?? []).map((o) => ({
        score: o.score,
        recommendation: o.recommendation,
        time: o.time,
      })),
      errorRetries: {
        count,
        max: s.maxErrorRetries,
        timeBoxes,
        maxTimeBoxes: s.maxTimeBoxContinuations,
        ...(escalated ? { escalated } : {}),
      },
    });
  }
  return {
    input: {
      autopilot: w.autopilot.metadata.name,
      namespace: w.autopilot.metadata.namespace ?? 'default',
      level: s.level,
      now: w.now,
      intervalMs: s.intervalMs,
      allowedActions: s.actions,
      projects,
      capacity: {
        activeSessions,
        maxActiveSessions: s.maxActiveSessions,
        ...(w.freeMemoryMB !== undefined ? { freeMemoryMB: w.freeMemoryMB } : {}),
        minFreeMemoryMB: s.minFreeMemoryMB,
        startsLeft: Math.max(0, Math.min(s.maxStartsPerThink, s.maxActiveSessions - activeSessions)),
      },
    },
    refs,
    revision,
    resets,
  };
}

function sessionView(x: AgentSession, w: World): SessionView {
  const st = x.status ?? {};
  const start = Date.parse(st.startTime ?? '');
  const pause = st.phase === 'Running' ? currentPause(st) : undefined;
  const frozen = st.frozen ? 'Frozen' : undefined;
  return {
    name: x.metadata.name,
    phase: (st.phase ?? 'Pending') as Phase,
    run: st.run ?? 0,
    ...(st.startTime ? { startTime: st.startTime } : {}),
    ...(isActive(x) && Number.isFinite(start) ? { runningMinutes: Math.round((w.now - start) / 60_000) } : {}),
    ...(st.agent?.state ? { agentState: st.agent.state } : {}),
    ...(frozen || pause ? { paused: frozen ?? pause?.reason } : {}),
    ours: x.metadata.labels?.[AUTOPILOT_LABEL] === w.autopilot.metadata.name,
  };
}

// ---- recovery (seed 002 §2.4): deterministic, whatever the planner ----------------------------------

/** A proposal that deals with a failed run: a restart with a recovery note, or an escalation notice. */
export type RecoveryProposal = Proposal & {
  recovery: { class: ErrorClass; attempt: number; session: string; run: number; evidence: string };
};

const RETRYABLE: ReadonlySet<ErrorClass> = new Set(['Transient', 'Dependency', 'Logic', 'TimeBox']);

/** The count and limit a failure of class `cls` is counted against: TimeBox continuations have their own. */
export function retryBudget(p: Pick<ProjectView, 'errorRetries'>, cls: ErrorClass): { used: number; max: number } {
  const r = p.errorRetries;
  return cls === 'TimeBox' ? { used: r.timeBoxes, max: r.maxTimeBoxes } : { used: r.count, max: r.max };
}

export function recoveryProposals(input: PlannerInput, note: (p: ProjectView) => string): RecoveryProposal[] {
  const out: RecoveryProposal[] = [];
  for (const p of input.projects) {
    const f = p.failure;
    if (!f || p.errorRetries.escalated) continue;
    const base = { project: p.name, session: f.session };
    const { used, max } = retryBudget(p, f.class);
    const attempt = used + 1;
    const recovery = { class: f.class, session: f.session, run: f.run, evidence: f.evidence };
    const what =
      f.class === 'TimeBox'
        ? `run ${f.run} of ${f.session} reached its time box (${f.evidence || 'no output'})`
        : `run ${f.run} of ${f.session} failed (${f.class}: ${f.evidence || 'no output'})`;
    const kind = f.class === 'TimeBox' ? 'continuation' : 'recovery';
    if (RETRYABLE.has(f.class) && !f.sessionEscalated && used < max) {
      out.push({
        ...base,
        action: 'restart',
        reason: `${what}; ${kind} ${attempt} of ${max}`,
        priority: 1,
        prompt: note(p),
        recovery: { ...recovery, attempt },
      });
    } else {
      const why = f.sessionEscalated
        ? `the session escalated itself (${f.sessionEscalated}) after its own restarts`
        : f.class === 'TimeBox'
          ? `${used} continuation(s) after a time box used, maxTimeBoxContinuations is ${max}`
          : RETRYABLE.has(f.class)
            ? `${used} recovery restart(s) used, maxErrorRetries is ${max}`
            : `${/^[AEIOU]/.test(f.class) ? 'an' : 'a'} ${f.class} failure is not retried`;
      out.push({
        ...base,
        action: 'notify',
        reason: `escalated: ${what}; ${why}`,
        priority: 1,
        message: `Project ${p.name} needs a person: ${what}; ${why}.`,
        recovery: { ...recovery, attempt: used },
      });
    }
  }
  return out;
}

// ---- decide: guardrails, then the gate ------------------------------------------------------------

/** A Decision with its spec (every Decision the autopilot reads or writes has one). */
export type Dec = Decision & { spec: DecisionSpec };

/** A Decision as planned, before the just-in-time check. `execute` means the gate lets it run now. */
export interface Draft {
  decision: Dec;
  execute: boolean;
  /** An existing Decision with a new status (a cooldown still being waited out), not a new one. */
  update?: boolean;
}

/** Guardrails that only make a proposal wait: waiting again updates the Decision that waits. */
const WAITS: ReadonlySet<string> = new Set(['SameProjectCooldown', 'SameActionCooldown']);

const RETRY_LATER: ReadonlySet<string> = new Set([
  'Superseded',
  'Failed',
  'SameProjectCooldown',
  'SameActionCooldown',
  'ResourceFloor',
]);
const COOLED: ReadonlySet<AutopilotAction> = new Set(['start', 'stop', 'restart']);
const TOUCHES_PROJECT: ReadonlySet<AutopilotAction> = new Set(['start', 'stop', 'restart']);
const clip = (t: string, n: number) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);
const sameTarget = (d: Dec, p: Proposal) =>
  d.spec.action === p.action &&
  d.spec.target.project === p.project &&
  (d.spec.target.session ?? '') === (p.session ?? '');

export interface DecideInput {
  world: World;
  settings: Settings;
  view: View;
  /** The think these belong to (names the Decisions). */
  think: number;
  planner: string;
  model?: string;
  /** Recovery proposals first, then the planner's. */
  proposals: (Proposal | RecoveryProposal)[];
}

/** A recommendation that was logged or refused is not recorded again within this (or the cooldown). */
export const REPEAT_MS = 3600_000;

/**
 * Whether a proposal repeats `last` (the newest decision for the same action and target): one still
 * waiting for a person always; one logged, or refused by a guardrail that does not pass with time,
 * within the repeat window. A refusal by a cooldown or the resource floor is proposed again.
 */
function repeats(last: Dec, now: number, windowMs: number): boolean {
  const phase = last.status?.phase;
  if (phase === 'PendingApproval') return true;
  const young = now - Date.parse(last.metadata.creationTimestamp ?? '') < windowMs;
  if (phase === 'Logged') return young;
  if (phase === 'Rejected') return young && !RETRY_LATER.has(last.status?.guardrail ?? '');
  return false;
}

export function decisionName(autopilot: string, think: number, i: number): string {
  return `${autopilot}-${think}-${i}`;
}

export function decide(d: DecideInput): Draft[] {
  const { world: w, settings: s, view: v } = d;
  const ns = w.autopilot.metadata.namespace ?? 'default';
  const projects = new Map(v.input.projects.map((p) => [p.name, p]));
  const executedAt = (dec: Dec) => Date.parse(dec.status?.executedAt ?? '') || 0;
  // Executed decisions, this think's included as they are planned (a cooldown covers them too).
  const executed: { action: AutopilotAction; project?: string; at: number }[] = w.decisions
    .filter((x) => x.status?.phase === 'Executed')
    .map((x) => ({ action: x.spec.action, project: x.spec.target.project, at: executedAt(x) }));
  const dedupeMs = Math.max(s.sameProjectMs, s.intervalMs, REPEAT_MS);
  const recent = [...w.decisions].sort(
    (a, b) => Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? ''),
  );
  // A failed run is dealt with once a decision about it stands; one that was superseded, failed, or
  // refused by a guardrail that passes with time (a cooldown, the resource floor) is tried again.
  const handled = new Set(
    w.decisions
      .filter((x) => x.spec.recovery && !RETRY_LATER.has(x.status?.guardrail ?? x.status?.phase ?? ''))
      .map((x) => `${x.spec.recovery?.session}#${x.spec.recovery?.run}`),
  );
  let active = v.input.capacity.activeSessions;
  let starts = 0;
  const touched = new Set<string>();
  const out: Draft[] = [];
  for (const prop of d.proposals) {
    const rec = 'recovery' in prop ? prop.recovery : undefined;
    if (rec && handled.has(`${rec.session}#${rec.run}`)) continue;
    // The same recommendation again, while the last one still waits or was just recorded: not news.
    const last = recent.find((x) => sameTarget(x, prop));
    if (!rec && last && repeats(last, w.now, dedupeMs)) continue;
    const project = prop.project ? projects.get(prop.project) : undefined;
    const target = prop.session ? project?.sessions.find((x) => x.name === prop.session) : undefined;
    const refuse = (guardrail: Guardrail, message: string) => ({ guardrail, message });
    const check = (): { guardrail: Guardrail; message: string } | undefined => {
      if (!s.actions.includes(prop.action))
        return refuse('Allowlist', `action ${prop.action} is not in guardrails.actions (${s.actions.join(', ')})`);
      if (prop.action === 'skip') return undefined;
      if (prop.project !== undefined && !project)
        return refuse('UnknownTarget', `project "${clip(prop.project, 80)}" is not one this autopilot selects`);
      if (prop.action === 'notify') return undefined;
      if (!project) return refuse('UnknownTarget', `${prop.action} needs a project`);
      if ((prop.action === 'stop' || prop.action === 'restart') && !target)
        return refuse(
          'UnknownTarget',
          prop.session
            ? `session "${clip(prop.session, 80)}" is not a session of project ${project.name}`
            : `${prop.action} needs a session`,
        );
      if (project.protected) return refuse('ProtectedProject', `project ${project.name} is protected`);
      if (prop.action === 'start' && project.blocked)
        return refuse('Blocked', `project ${project.name} is blocked: ${clip(project.blocked, 200)}`);
      if (touched.has(project.name))
        return refuse('SameProjectCooldown', `this think already acts on project ${project.name}`);
      const recentProject = executed.find(
        (e) => COOLED.has(e.action) && e.project === project.name && w.now - e.at < s.sameProjectMs,
      );
      if (recentProject)
        return refuse(
          'SameProjectCooldown',
          `project ${project.name} was acted on ${ago(w.now - recentProject.at)} ago ` +
            `(cooldown ${fmt(s.sameProjectMs)})`,
        );
      const recentAction = executed.find((e) => e.action === prop.action && w.now - e.at < s.sameActionMs);
      if (recentAction)
        return refuse(
          'SameActionCooldown',
          `a ${prop.action} was executed ${ago(w.now - recentAction.at)} ago (cooldown ${fmt(s.sameActionMs)})`,
        );
      if (prop.action === 'start') {
        const running = project.sessions.find((x) => !TERMINAL_PHASES.has(x.phase));
        if (running) return refuse('AlreadyRunning', `session ${running.name} of ${project.name} is ${running.phase}`);
        if (starts >= s.maxStartsPerThink)
          return refuse('ResourceFloor', `at most ${s.maxStartsPerThink} start(s) per think (maxStartsPerThink)`);
        if (active >= s.maxActiveSessions)
          return refuse('ResourceFloor', `${active} sessions active, maxActiveSessions is ${s.maxActiveSessions}`);
        const free = v.input.capacity.freeMemoryMB;
        if (free !== undefined && free < s.minFreeMemoryMB)
          return refuse('ResourceFloor', `${free} MB memory free on the node, the floor is ${s.minFreeMemoryMB} MB`);
        const limit = w.policy?.spec?.maxConcurrentSessions;
        if (limit !== undefined && (w.activeUnderPolicy ?? 0) + starts >= limit)
          return refuse(
            'ResourceFloor',
            `SessionPolicy ${w.policy?.metadata.name} runs ${(w.activeUnderPolicy ?? 0) + starts} of ` +
              `maxConcurrentSessions ${limit}`,
          );
        return undefined;
      }
      // stop / restart of a session
      const t = target as SessionView;
      const failed = !!rec || ['Failed', 'TimedOut', 'Killed'].includes(t.phase);
      if (prop.action === 'stop' && TERMINAL_PHASES.has(t.phase))
        return refuse('NotRunning', `session ${t.name} is already ${t.phase}`);
      if (t.paused) return refuse('Paused', `session ${t.name} is paused (${t.paused}): it resumes by itself`);
      if (!failed && t.runningMinutes !== undefined && t.runningMinutes * 60_000 < s.youngMs)
        return refuse(
          'YoungSession',
          `session ${t.name} has run ${t.runningMinutes} min, under youngSessionWindow ${fmt(s.youngMs)}`,
        );
      const budget = rec && retryBudget(project, rec.class);
      if (prop.action === 'restart' && failed && rec && budget && budget.used >= budget.max)
        return refuse(
          'MaxErrorRetries',
          rec.class === 'TimeBox'
            ? `${budget.used} continuation(s) of ${project.name} after a time box already ` +
                `(maxTimeBoxContinuations ${budget.max})`
            : `${budget.used} recovery restart(s) of ${project.name} already (maxErrorRetries ${budget.max})`,
        );
      return undefined;
    };
    const refused = check();
    // Still in the same cooldown as the last time: that Decision says so again (one, not one a think).
    if (refused && WAITS.has(refused.guardrail) && last?.status?.phase === 'Rejected') {
      if (last.status.guardrail === refused.guardrail && last.spec.level === s.level) {
        const status = { ...last.status, message: `${refused.message} (still waiting at think ${d.think})` };
        out.push({ decision: { ...last, status }, execute: false, update: true });
        continue;
      }
    }
    const g = gate(s.level, prop.action);
    let phase: DecisionPhase | undefined;
    if (refused) phase = 'Rejected';
    else if (g.result === 'approval') phase = 'PendingApproval';
    else if (g.result === 'log') phase = 'Logged';
    const willRun = !refused && g.result === 'execute';
    if (!refused && TOUCHES_PROJECT.has(prop.action) && project) {
      touched.add(project.name);
      if (willRun) executed.push({ action: prop.action, project: project.name, at: w.now });
    }
    if (!refused && prop.action === 'start' && g.result !== 'log') {
      starts++;
      active++;
    }
    const name = decisionName(w.autopilot.metadata.name, d.think, out.length);
    const decision: Dec = {
      apiVersion: API_VERSION,
      kind: 'Decision',
      metadata: {
        name,
        namespace: ns,
        labels: {
          [AUTOPILOT_LABEL]: w.autopilot.metadata.name,
          [ACTION_LABEL]: prop.action,
          ...(project ? { [PROJECT_LABEL]: project.name } : {}),
        },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: 'Autopilot',
            name: w.autopilot.metadata.name,
            uid: w.autopilot.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      spec: {
        autopilot: w.autopilot.metadata.name,
        think: d.think,
        action: prop.action,
        target: {
          ...(prop.project !== undefined ? { project: clip(prop.project, 253) } : {}),
          ...(prop.session !== undefined ? { session: clip(prop.session, 253) } : {}),
        },
        reason: clip(prop.reason || '(no reason given)', 1000),
        priority: Math.min(5, Math.max(1, Math.round(prop.priority || 3))),
        ...(prop.prompt ? { prompt: clip(prop.prompt, 8000) } : {}),
        ...(prop.message ? { message: clip(prop.message, 1000) } : {}),
        planner: rec ? 'recovery' : d.planner,
        ...(d.model && !rec ? { model: d.model } : {}),
        level: s.level,
        snapshot: { revision: v.revision, objects: project ? (v.refs.get(project.name) ?? []) : [] },
        ...(rec ? { recovery: { ...rec, evidence: clip(rec.evidence, 300) } } : {}),
      },
      status: {
        ...(phase ? { phase } : {}),
        ...(refused ? { guardrail: refused.guardrail, message: refused.message } : {}),
        ...(g.notifyAfter && willRun ? { notifyAfter: true } : {}),
        decidedAt: iso(w.now),
        ...(phase === 'PendingApproval' ? { expiresAt: iso(w.now + s.approvalTimeoutMs) } : {}),
      },
    };
    out.push({ decision, execute: willRun });
  }
  return out;
}

/** The planner may not ask for a think sooner than this (each think of an LLM planner costs a request)... */
export const MIN_NEXT_THINK_MS = 60_000;
/** ...nor later than this many intervals: a quiet autopilot still looks at its projects regularly. */
export const MAX_NEXT_THINK_INTERVALS = 4;

/**
 * The delay to the next think: the planner's nextThinkIn clamped to [min(1m, interval), 4 × interval],
 * or the interval when it gave none (or one that is not a duration). Events still trigger a think at once.
 */
export function nextThinkDelay(intervalMs: number, nextThinkIn: string | undefined): number {
  if (!nextThinkIn) return intervalMs;
  let wanted: number;
  try {
    wanted = parseDuration(nextThinkIn);
  } catch {
    return intervalMs;
  }
  const lo = Math.min(MIN_NEXT_THINK_MS, intervalMs);
  const hi = intervalMs * MAX_NEXT_THINK_INTERVALS;
  return Math.min(hi, Math.max(lo, wanted));
}

function fmt(msValue: number): string {
  if (msValue % 3_600_000 === 0 && msValue > 0) return `${msValue / 3_600_000}h`;
  if (msValue % 60_000 === 0 && msValue > 0) return `${msValue / 60_000}m`;
  return `${Math.round(msValue / 1000)}s`;
}
const ago = (msValue: number) => fmt(Math.max(0, Math.round(msValue / 1000) * 1000));

/** Decisions to delete: beyond the newest `keep`, or older than ttl — never pending, never within a cooldown. */
export function expired(decisions: Dec[], s: Settings, now: number): Dec[] {
  const keepFor = Math.max(s.sameProjectMs, s.sameActionMs);
  const sorted = [...decisions].sort(
    (a, b) => b.spec.think - a.spec.think || b.metadata.name.localeCompare(a.metadata.name, 'en', { numeric: true }),
  );
  return sorted.filter((x, i) => {
    if (x.status?.phase === 'PendingApproval') return false;
    const age = now - (Date.parse(x.metadata.creationTimestamp ?? '') || now);
    if (x.status?.phase === 'Executed' && age < keepFor) return false;
    return i >= s.keep || age > s.ttlMs;
  });
}
