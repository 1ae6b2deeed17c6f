/**
 * The autopilot reconciler (key: an Autopilot). Each reconcile:
 *  1. settles Decisions a person approved or rejected (`orchctl approve|reject decision`);
 *  2. thinks when one is due — the interval, or something happened since the last think (a run of a
 *     selected project ended, an Evaluation was judged, a session escalated), or its spec changed:
 *     read the caches (plan.ts view), ask the planner (one think at a time: one worker), add the
 *     deterministic recovery proposals, run guardrails and the gate (plan.ts decide);
 *  3. writes the think in ONE transaction: the Decisions, what the executable ones change (rechecked
 *     against a fresh read, execute.ts), the Projects' error-retry counts and the Autopilot's status,
 *     guarded by the Autopilot's resourceVersion. A crash before it leaves nothing; after it, all. A
 *     second controller thinking the same think loses the compare-and-swap and writes nothing;
 *  4. deletes Decisions past the history bounds.
 * It writes its own status, Decisions, Project status.errorRetries, AgentSessions and Events — never
 * its own spec, so it cannot raise its own autonomy level.
 */
import { AutopilotReason } from '../../api/event-reasons.js';
import {
  type Autopilot,
  type DecisionCounts,
  type DecisionPhase,
  DECISION_PHASES,
  DEFAULTS,
  type ErrorRetries,
  type ThinkTrigger,
} from '../../api/autopilot.js';
import { setCondition } from '../../api/conditions.js';
import { formatDuration } from '../../api/duration.js';
import { registry } from '../../api/crds.js';
import { isApiError } from '../../api/errors.js';
import type { Evaluation } from '../../api/evaluation.js';
import type { AutopilotMetricsHooks } from '../../api/metrics-hooks.js';
import type { Node } from '../../api/node.js';
import { frozenMark } from '../../api/freeze.js';
import { resolvePolicy } from '../../api/policy.js';
import type { Project } from '../../api/project.js';
import type { AgentSession } from '../../api/session.js';
import type { SessionPolicy } from '../../api/session-policy.js';
import type { ObjectKey } from '../../api/types.js';
import { newEvent } from '../../client/events.js';
import type { EventObject } from '../../api/event.js';
import { objectErrors } from '../../client/validating-store.js';
import type { Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Store, WriteOp } from '../../store/store.js';
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
import {
  type Dec,
  decide,
  type Draft,
  endSeenAt,
  expired,
  isActive,
  nextThinkDelay,
  type RecoveryProposal,
  recoveryProposals,
  retryBudget,
  selectedProjects,
  type Settings,
  settings,
  type View,
  view,
  type World,
} from './plan.js';
import { createPlanner } from './planner/index.js';
import { recoveryPrompt, resumePrompt } from './prompts.js';
import type { Planner, Proposal } from './types.js';

/** Thinks are at least this far apart, however many sessions end at once. */
export const MIN_THINK_GAP_MS = 1000;
/** Attempts at the think's transaction when a session changed under the recheck. */
const WRITE_ATTEMPTS = 6;
/** Decisions deleted per reconcile at most (the rest next time). */
const PRUNE_BATCH = 100;

export interface AutopilotDeps {
  store: Store;
  autopilots: Pick<Informer, 'get' | 'list'>;
  projects: Pick<Informer, 'list'>;
  sessions: Pick<Informer, 'list'>;
  evaluations: Pick<Informer, 'list'>;
  decisions: Pick<Informer, 'list'>;
  policies: Pick<Informer, 'list'>;
  nodes: Pick<Informer, 'list'>;
  log: Logger;
  metrics?: AutopilotMetricsHooks;
  now?: () => number;
  /** The planner for an Autopilot (default: from its spec.planner). Tests pass their own. */
  plannerFor?: (ap: Autopilot) => Planner;
  /** Called between the planner's answer and the write (tests use it to race the execution). */
  beforeWrite?: (ap: Autopilot) => Promise<void>;
}

const lostRace = (e: unknown) =>
  isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') || isApiError(e, 'NotFound');

export class AutopilotReconciler {
  private readonly planners = new Map<string, { generation: number; planner: Planner }>();
  /** Aborted on shutdown: a think waiting for an LLM ends at once (and writes nothing). */
  private readonly stopping = new AbortController();

  constructor(private readonly d: AutopilotDeps) {}

  stop(): void {
    this.stopping.abort();
  }

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const ap = this.d.autopilots.get(namespace, name) as Autopilot | undefined;
    if (!ap || ap.metadata.deletionTimestamp) {
      this.planners.delete(key);
      return;
    }
    // Frozen (orchctl freeze): it neither thinks nor carries out approved Decisions until thawed.
    if (frozenMark(ap)) return;
    const decisions = this.decisionsOf(ap);
    const s = settings(ap.spec, this.templatePolicy(ap));
    let expiry = Number.POSITIVE_INFINITY;
    for (const dec of decisions) {
      if (dec.status?.phase !== 'PendingApproval') continue;
      if (dec.spec?.approval) await this.settle(ap, dec);
      else {
        const at = Date.parse(dec.status.expiresAt ?? '');
        if (at <= this.now()) await this.expire(ap, dec, s);
        else if (at) expiry = Math.min(expiry, at);
      }
    }
    const now = this.now();
    // A pending Decision's expiry wakes the reconcile even when no think is due (suspended too).
    const until = (ms: number) => ({ requeueAfterMs: Math.max(1, Math.min(ms, expiry - now)) });
    await this.prune(decisions, s, now);
    if (ap.spec?.suspend) return Number.isFinite(expiry) ? until(expiry - now) : undefined;
    const trigger = this.trigger(ap, now);
    const last = Date.parse(ap.status?.lastThink?.time ?? '') || 0;
    if (!trigger) {
      const next = Date.parse(ap.status?.nextThinkTime ?? '') || now;
      return until(Math.max(MIN_THINK_GAP_MS, next - now));
    }
    if (now - last < MIN_THINK_GAP_MS) return until(MIN_THINK_GAP_MS - (now - last));
    await this.think(ap, decisions, s, trigger, now);
    return until(s.intervalMs);
  }

  // ---- when to think ------------------------------------------------------------------------------

  private trigger(ap: Autopilot, now: number): ThinkTrigger | undefined {
    const st = ap.status ?? {};
    if (!st.lastThink) return 'start';
    if (st.observedGeneration !== ap.metadata.generation) return 'spec';
    const last = Date.parse(st.lastThink.time);
    const ns = ap.metadata.namespace ?? 'default';
    const selected = new Set(
      selectedProjects({ autopilot: ap, projects: this.d.projects.list(ns) as Project[] }).map((p) => p.metadata.name),
    );
    const ours = (this.d.sessions.list(ns) as AgentSession[]).filter((s) => selected.has(s.spec?.projectRef ?? ''));
    const after = (t: string | undefined) => !!t && Date.parse(t) > last;
    if (ours.some((s) => after(endSeenAt(s)))) return 'session-ended';
    if (
      ours.some((s) =>
        s.status?.conditions?.some((c) => c.type === 'Escalated' && c.status === 'True' && after(c.lastTransitionTime)),
      )
    )
      return 'escalation';
    const names = new Set(ours.map((s) => s.metadata.name));
    if (
      (this.d.evaluations.list(ns) as Evaluation[]).some(
        (e) => names.has(e.spec?.sessionRef ?? '') && after(e.status?.evaluatedAt),
      )
    )
      return 'evaluation';
    const next = Date.parse(st.nextThinkTime ?? '');
    if (!Number.isFinite(next) || now >= next) return 'interval';
    return undefined;
  }

  // ---- think ------------------------------------------------------------------------------------

  private world(ap: Autopilot, decisions: Dec[], now: number): World {
    const ns = ap.metadata.namespace ?? 'default';
    const sessions = this.d.sessions.list(ns) as AgentSession[];
    const policy = this.templatePolicy(ap);
    const nodes = this.d.nodes.list() as Node[];
    const free = nodes
      .map((n) => n.status?.free?.memoryBytes)
      .filter((b): b is number => typeof b === 'number')
      .map((b) => Math.floor(b / 1048576));
    const activeUnderPolicy = policy
      ? sessions.filter(
          (x) => isActive(x) && resolvePolicy(x, this.policiesIn(ns))?.metadata.name === policy.metadata.name,
        ).length
      : undefined;
    return {
      autopilot: ap,
      projects: this.d.projects.list(ns) as Project[],
      sessions,
      evaluations: this.d.evaluations.list(ns) as Evaluation[],
      decisions,
      ...(free.length ? { freeMemoryMB: Math.max(...free) } : {}),
      ...(policy ? { policy, activeUnderPolicy } : {}),
      now,
    };
  }

  private policiesIn(ns: string): SessionPolicy[] {
    return this.d.policies.list(ns) as SessionPolicy[];
  }

  /** The SessionPolicy the sessions it starts will run under (named by the template), if any. */
  private templatePolicy(ap: Autopilot): SessionPolicy | undefined {
    const name = ap.spec?.sessionTemplate?.policyRef;
    if (!name) return undefined;
    return this.policiesIn(ap.metadata.namespace ?? 'default').find((p) => p.metadata.name === name);
  }

  private planner(ap: Autopilot): Planner {
    if (this.d.plannerFor) return this.d.plannerFor(ap);
    const key = `${ap.metadata.namespace}/${ap.metadata.name}`;
    const generation = ap.metadata.generation ?? 0;
    const cached = this.planners.get(key);
    if (cached?.generation === generation) return cached.planner;
    const planner = createPlanner(ap.spec?.planner);
    this.planners.set(key, { generation, planner });
    return planner;
  }

  private async think(ap: Autopilot, decisions: Dec[], s: Settings, trigger: ThinkTrigger, now: number) {
    const w = this.world(ap, decisions, now);
    const v = view(w, s);
    const t0 = performance.now();
    let planner: Planner | undefined;
    let proposals: Proposal[] = [];
    let nextThinkIn: string | undefined;
    let error: string | undefined;
    // No Project selected: nothing to plan for, so no request (an LLM planner costs money and time).
    const idle = v.input.projects.length === 0;
    if (!idle)
      try {
        planner = this.planner(ap);
        const result = await planner.plan(v.input, this.stopping.signal);
        proposals = result.proposals;
        nextThinkIn = result.nextThinkIn;
      } catch (e) {
        error = (e as Error).message || String(e);
      }
    if (this.stopping.signal.aborted) return; // shutting down: the next controller thinks again
    const seconds = (performance.now() - t0) / 1000;
    const plannerName = planner?.name ?? ap.spec?.planner?.backend ?? 'heuristic';
    this.d.metrics?.onThink?.(ap.metadata.name, plannerName, seconds, error ? 'error' : 'ok');
    if (error) this.d.log.warn(`autopilot ${ap.metadata.name}: the planner failed, no action: ${error}`);
    const recovery = recoveryProposals(v.input, (p) => {
      const f = p.failure;
      if (!f) return '';
      const { used, max } = retryBudget(p, f.class);
      return recoveryPrompt(f.class, used + 1, max, f.run, f.evidence);
    });
    const think = (ap.status?.thinks ?? 0) + 1;
    const drafts = decide({
      world: w,
      settings: s,
      view: v,
      think,
      planner: plannerName,
      model: planner?.model,
      proposals: [...recovery, ...proposals],
    });
    await this.d.beforeWrite?.(ap);
    const status = structuredClone(ap.status ?? {});
    status.thinks = think;
    status.lastThink = {
      time: new Date(now).toISOString(),
      trigger,
      planner: plannerName,
      ...(planner?.model ? { model: planner.model } : {}),
      durationMs: Math.round(seconds * 1000),
      decisions: drafts.length,
      ...(error ? { error: error.slice(0, 500) } : {}),
    };
    status.nextThinkTime = new Date(now + nextThinkDelay(s.intervalMs, nextThinkIn)).toISOString();
    status.level = s.level;
    status.observedGeneration = ap.metadata.generation;
    status.selectedProjects = v.input.projects.length;
    status.staleProjects = v.input.projects.filter((p) => p.stale).length;
    status.conditions ??= [];
    setCondition(
      status.conditions,
      error
        ? { type: 'Ready', status: 'False', reason: 'PlannerFailed', message: error.slice(0, 500) }
        : idle
          ? {
              type: 'Ready',
              status: 'True',
              reason: 'NoProjects',
              message: 'no Project matches spec.projectSelector: the planner is not asked',
            }
          : { type: 'Ready', status: 'True', reason: 'Thinking', message: `planner ${plannerName}` },
      new Date(now).toISOString(),
    );
    // A Warning when thinking starts to fail (not on every failed think): people hear of it through the notifier.
    const wasFailing = ap.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'PlannerFailed');
    const extra: WriteOp[] =
      error && !wasFailing
        ? [{ op: 'create', object: plannerFailedEvent(ap, think, error, status.lastThink.time) }]
        : [];
    await this.write(ap, drafts, v, status, decisions, extra);
  }

  /**
   * One transaction per think. Retried when a session changed between the fresh read and the write
   * (the recheck runs again); abandoned when the Autopilot itself changed (another controller took
   * this think, or a person edited it: the next reconcile thinks again).
   */
  private async write(
    ap: Autopilot,
    drafts: Draft[],
    v: View,
    status: NonNullable<Autopilot['status']>,
    decisions: Dec[],
    extra: WriteOp[],
  ): Promise<void> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const fresh = await this.fresh(ap);
      const now = new Date(this.now()).toISOString();
      const ops: WriteOp[] = [];
      const retries = new Map<string, ErrorRetries | undefined>();
      const written: Dec[] = [];
      for (const [name, reset] of v.resets) {
        const cur = fresh.projects.get(name)?.status?.errorRetries;
        if (!cur) continue;
        retries.set(name, reset === 'clear' ? undefined : { count: 0, windowStart: now, lastFailure: cur.lastFailure });
      }
      let guard = false;
      for (const draft of drafts) {
        if (draft.update) {
          // Compare-and-swap on the version read: a person's answer in between wins.
          ops.push({ op: 'updateStatus', object: draft.decision });
          continue;
        }
        const dec = structuredClone(draft.decision);
        const st = dec.status ?? {};
        if (draft.execute) {
          const r = this.carryOut(ap, dec, fresh, now, ops, (name) => resumeFrom(v, name));
          record(st, r, now);
          guard ||= r.ok && dec.spec.action === 'start';
        }
        dec.status = st;
        this.bookRetries(dec, fresh, retries, now);
        ops.push({ op: 'create', object: dec }, { op: 'updateStatus', object: dec });
        // Told in the Decision's own transaction: a pending one is never without its Event.
        if (st.phase === 'PendingApproval')
          ops.push({
            op: 'create',
            object: pendingEvent(ap, dec, fresh.projects.get(dec.spec.target.project ?? ''), now),
          });
        written.push(dec);
      }
      const advice = recommendationsEvent(ap, status.thinks ?? 0, written, now);
      if (advice) ops.push({ op: 'create', object: advice });
      ops.push(...this.projectWrites(fresh, retries), ...extra);
      status.counts = counts([...decisions, ...written]);
      ops.push({ op: 'updateStatus', object: { ...ap, status } });
      if (guard)
        ops.push({ op: 'unchanged', kind: 'AgentSession', namespace: ap.metadata.namespace, since: fresh.revision });
      try {
        await this.d.store.txn(ops);
      } catch (e) {
        if (!lostRace(e)) throw e;
        const now = (await this.d.store.get(keyOf(ap))) as Autopilot | undefined;
        if (!now || now.metadata.resourceVersion !== ap.metadata.resourceVersion) return; // the next reconcile re-plans
        continue;
      }
      for (const dec of written)
        this.d.metrics?.onDecision?.(ap.metadata.name, dec.spec.action, dec.status?.phase as DecisionPhase);
      return;
    }
    this.d.log.warn(`autopilot ${ap.metadata.name}: sessions kept changing under the recheck; thinking again`);
  }

  /** The effects of one executable Decision, appended to `ops`; or why it does not execute. */
  private carryOut(
    ap: Autopilot,
    dec: Dec,
    fresh: Fresh,
    now: string,
    ops: WriteOp[],
    resume: (project: string) => string,
  ): CarryOut {
    const r = recheck(dec, fresh);
    if (!r.ok) return { ok: false, message: r.message };
    const project = fresh.projects.get(dec.spec.target.project ?? '');
    if (dec.spec.action === 'start') {
      const prompt = dec.spec.prompt ?? resume(dec.spec.target.project ?? '');
      const session = newSession(ap, dec, ap.spec?.sessionTemplate, prompt);
      // Seed 002 §2.7: an autopilot session is time-boxed, by its template, else its policy, else 45m.
      if (
        !session.spec?.maxDuration &&
        !resolvePolicy(session, this.policiesIn(ap.metadata.namespace ?? 'default'))?.spec?.maxSessionDuration
      )
        session.spec = { ...session.spec, maxDuration: DEFAULTS.maxDuration };
      const kind = registry().resolve('AgentSession');
      const errors = objectErrors(session, kind, 'program');
      if (errors.length)
        return {
          ok: false,
          failed: true,
          message: `the session it would create is invalid: ${errors
            .map((e) => `${e.path.join('.')}: ${e.message}`)
            .join('; ')}`,
        };
      ops.push(...effects(dec, fresh, now, session));
      if (dec.status?.notifyAfter && project)
        ops.push({ op: 'create', object: afterNotice(dec, project, session.metadata.name, now) });
      return { ok: true, session: session.metadata.name };
    }
    if (dec.spec.action === 'notify') {
      const about = project ?? ap;
      const warning = !!dec.spec.recovery;
      const ev = noticeEvent(
        dec,
        about,
        warning ? 'Warning' : 'Normal',
        dec.spec.message ?? dec.spec.reason,
        'notice',
        now,
      );
      ops.push({ op: 'create', object: ev });
      return { ok: true, event: ev.metadata.name };
    }
    if (dec.spec.action === 'skip') return { ok: true };
    ops.push(...effects(dec, fresh, now));
    // A run that ran out of time goes on: the person hears of it (whatever the gate's "notify after").
    if (dec.spec.action === 'restart' && dec.spec.recovery?.class === 'TimeBox' && project)
      ops.push({ op: 'create', object: timeBoxNotice(dec, project, now) });
    else if (dec.status?.notifyAfter && project)
      ops.push({ op: 'create', object: afterNotice(dec, project, dec.spec.target.session ?? '', now) });
    return { ok: true, session: dec.spec.target.session };
  }

  /** The error-retry count a Decision changes: a recovery restart that executed, an escalation recorded. */
  private bookRetries(dec: Dec, fresh: Fresh, retries: Map<string, ErrorRetries | undefined>, now: string) {
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

  private projectWrites(fresh: Fresh, retries: Map<string, ErrorRetries | undefined>): WriteOp[] {
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
      const at = value?.escalated?.at ?? new Date(this.now()).toISOString();
      setCondition(
        st.conditions,
        value?.escalated
          ? { type: 'Escalated', status: 'True', reason: 'AutopilotEscalated', message: value.escalated.reason }
          : { type: 'Escalated', status: 'False', reason: 'Recovered', message: '' },
        at,
      );
      ops.push({ op: 'updateStatus', object: next });
    }
    return ops;
  }

  /** A fresh read of what the recheck needs (not the caches, which may lag a person's write). */
  private async fresh(ap: Autopilot): Promise<Fresh> {
    const namespace = ap.metadata.namespace ?? 'default';
    const [projects, sessions] = await Promise.all([
      this.d.store.list('Project', { namespace }),
      this.d.store.list('AgentSession', { namespace }),
    ]);
    return {
      projects: new Map((projects.items as Project[]).map((p) => [p.metadata.name, p])),
      sessions: sessions.items as AgentSession[],
      revision: sessions.revision,
    };
  }

  // ---- approvals ----------------------------------------------------------------------------------

  /** A PendingApproval Decision a person answered: execute it (rechecked) or record the rejection. */
  private async settle(ap: Autopilot, dec: Dec): Promise<void> {
    const approval = dec.spec.approval;
    if (!approval) return;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const cur = (await this.d.store.get(keyOf(dec))) as Dec | undefined;
      if (cur?.status?.phase !== 'PendingApproval') return;
      const next = structuredClone(cur);
      next.status ??= {};
      const st = next.status;
      const now = new Date(this.now()).toISOString();
      const ops: WriteOp[] = [];
      let guard = false;
      const retries = new Map<string, ErrorRetries | undefined>();
      let fresh: Fresh | undefined;
      if (approval.verdict === 'Rejected') {
        st.phase = 'Rejected';
        st.guardrail = 'Person';
        const by = approval.by ? ` by ${approval.by}` : '';
        st.message = `rejected${by}${approval.message ? `: ${approval.message}` : ''}`;
      } else {
        fresh = await this.fresh(ap);
        // The view only for a start's resume prompt, built from the caches as a think would.
        const resume = (project: string) =>
          resumeFrom(view(this.world(ap, this.decisionsOf(ap), this.now()), settings(ap.spec)), project);
        const r = this.carryOut(ap, next, fresh, now, ops, resume);
        record(st, r, now);
        if (r.ok) st.message = `approved${approval.by ? ` by ${approval.by}` : ''}`;
        guard = r.ok && next.spec.action === 'start';
        this.bookRetries(next, fresh, retries, now);
      }
      ops.push({ op: 'updateStatus', object: next });
      if (fresh) ops.push(...this.projectWrites(fresh, retries));
      if (guard && fresh)
        ops.push({ op: 'unchanged', kind: 'AgentSession', namespace: ap.metadata.namespace, since: fresh.revision });
      try {
        await this.d.store.txn(ops);
        this.d.metrics?.onDecision?.(ap.metadata.name, next.spec.action, st.phase as DecisionPhase);
        return;
      } catch (e) {
        if (!lostRace(e)) throw e;
      }
    }
  }

  /**
   * A PendingApproval Decision nobody answered within spec.approval.timeout: Expired, its default
   * action taken (proceed: executed, rechecked as an approval is; reject: dropped), and told with a
   * DecisionExpired Event in the same transaction.
   */
  private async expire(ap: Autopilot, dec: Dec, s: Settings): Promise<void> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const cur = (await this.d.store.get(keyOf(dec))) as Dec | undefined;
      if (cur?.status?.phase !== 'PendingApproval' || cur.spec.approval) return;
      const next = structuredClone(cur);
      next.status ??= {};
      const st = next.status;
      const now = new Date(this.now()).toISOString();
      const ops: WriteOp[] = [];
      const retries = new Map<string, ErrorRetries | undefined>();
      const fresh = await this.fresh(ap);
      const waited = `nobody answered within ${formatDuration(s.approvalTimeoutMs)}`;
      const action = s.onTimeout[next.spec.action];
      let guard = false;
      if (action === 'proceed') {
        const resume = (project: string) =>
          resumeFrom(view(this.world(ap, this.decisionsOf(ap), this.now()), settings(ap.spec)), project);
        const r = this.carryOut(ap, next, fresh, now, ops, resume);
        record(st, r, now);
        st.message = r.ok
          ? `${waited}: proceeded (onTimeout proceed)`
          : `${waited}; proceeding was not possible: ${r.message}`;
        guard = r.ok && next.spec.action === 'start';
      } else st.message = `${waited}: dropped (onTimeout reject)`;
      st.phase = 'Expired';
      this.bookRetries(next, fresh, retries, now);
      const about = fresh.projects.get(next.spec.target.project ?? '') ?? ap;
      ops.push({ op: 'updateStatus', object: next }, ...this.projectWrites(fresh, retries), {
        op: 'create',
        object: expiredEvent(next, about, st.message, now),
      });
      if (guard)
        ops.push({ op: 'unchanged', kind: 'AgentSession', namespace: ap.metadata.namespace, since: fresh.revision });
      try {
        await this.d.store.txn(ops);
        this.d.metrics?.onDecision?.(ap.metadata.name, next.spec.action, 'Expired');
        return;
      } catch (e) {
        if (!lostRace(e)) throw e;
      }
    }
  }

  // ---- history ------------------------------------------------------------------------------------

  private decisionsOf(ap: Autopilot): Dec[] {
    return (this.d.decisions.list(ap.metadata.namespace ?? 'default') as Dec[]).filter(
      (x) => x.spec?.autopilot === ap.metadata.name,
    );
  }

  private async prune(decisions: Dec[], s: Settings, now: number): Promise<void> {
    const old = expired(decisions, s, now).slice(0, PRUNE_BATCH);
    if (!old.length) return;
    try {
      await this.d.store.txn(
        old.map((x) => ({
          op: 'delete' as const,
          key: keyOf(x),
          options: { resourceVersion: x.metadata.resourceVersion },
        })),
      );
    } catch (e) {
      if (!lostRace(e)) throw e; // a stale cache: the next reconcile prunes what is left
    }
  }
}

function keyOf(o: { kind: string; metadata: { namespace?: string; name: string } }): ObjectKey {
  return { kind: o.kind, namespace: o.metadata.namespace ?? 'default', name: o.metadata.name };
}

/** The resume prompt for a start the planner wrote no prompt for (seed 002 §2.3). */
function resumeFrom(v: View, project: string): string {
  const pv = v.input.projects.find((p) => p.name === project);
  return pv ? resumePrompt(pv) : `Resume work on the project "${project}".`;
}

type CarryOut = { ok: true; session?: string; event?: string } | { ok: false; failed?: boolean; message: string };

/** A Decision's status after its execution was tried. */
function record(st: NonNullable<Dec['status']>, r: CarryOut, now: string): void {
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

/** PlannerFailed: recorded in the think's transaction, named after the think (so once). */
function plannerFailedEvent(ap: Autopilot, think: number, error: string, now: string): EventObject {
  const message = `the planner failed, no action taken: ${error}`;
  const name = `${ap.metadata.name}.planner-failed.${think}`;
  return newEvent(
    ap,
    { name, type: 'Warning', reason: AutopilotReason.PlannerFailed, message, now },
    AUTOPILOT_COMPONENT,
  );
}

function counts(decisions: Dec[]): DecisionCounts {
  const out: DecisionCounts = {};
  for (const p of DECISION_PHASES) {
    const n = decisions.filter((x) => x.status?.phase === p).length;
    if (n) out[p] = n;
  }
  return out;
}

export type { RecoveryProposal };

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
