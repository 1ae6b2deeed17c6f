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
import type { Autopilot, DecisionPhase, ThinkTrigger } from '../../api/autopilot.js';
import { setCondition } from '../../api/conditions.js';
import { registry } from '../../config/crds.js';
import { isApiError } from '../../api/errors.js';
import { frozenMark } from '../../api/freeze.js';
import type { AutopilotMetricsHooks } from '../../api/metrics-hooks.js';
import { resolvePolicy } from '../../api/policy.js';
import type { SessionPolicy } from '../../api/session-policy.js';
import type { KindMap, KindName } from '../../api/kinds.js';
import type { ObjectKey } from '../../api/types.js';
import type { Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import { retryOnConflict } from '../../store/retry.js';
import type { Store, WriteOp } from '../../store/store.js';
import type { Fresh } from './execute.js';
import {
  type Dec,
  decide,
  expired,
  isActive,
  nextThinkDelay,
  type RecoveryProposal,
  recoveryProposals,
  retryBudget,
  type Settings,
  settings,
  type View,
  view,
  type World,
} from './plan.js';
import { createPlanner } from './planner/index.js';
import { recoveryPrompt } from './prompts.js';
import type { Planner, Proposal } from './types.js';
import {
  planExpire,
  plannerFailedEvent,
  planSettle,
  planThinkWrite,
  type CarryOutInput,
  resumeFrom,
  type ThinkDecided,
  thinkTrigger,
} from './writes.js';

/** Thinks are at least this far apart, however many sessions end at once. */
export const MIN_THINK_GAP_MS = 1000;
/** Attempts at the think's transaction when a session changed under the recheck. */
const WRITE_ATTEMPTS = 6;
/** Decisions deleted per reconcile at most (the rest next time). */
const PRUNE_BATCH = 100;

export interface AutopilotDeps {
  store: Store;
  autopilots: Pick<Informer<'Autopilot'>, 'get' | 'list'>;
  projects: Pick<Informer<'Project'>, 'list'>;
  sessions: Pick<Informer<'AgentSession'>, 'list'>;
  evaluations: Pick<Informer<'Evaluation'>, 'list'>;
  decisions: Pick<Informer<'Decision'>, 'list'>;
  policies: Pick<Informer<'SessionPolicy'>, 'list'>;
  nodes: Pick<Informer<'Node'>, 'list'>;
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
    const ap = this.d.autopilots.get(namespace, name);
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
    const ns = ap.metadata.namespace ?? 'default';
    const observed = {
      projects: this.d.projects.list(ns),
      sessions: this.d.sessions.list(ns),
      evaluations: this.d.evaluations.list(ns),
    };
    return thinkTrigger(ap, observed, now);
  }

  // ---- think ------------------------------------------------------------------------------------

  private world(ap: Autopilot, decisions: Dec[], now: number): World {
    const ns = ap.metadata.namespace ?? 'default';
    const sessions = this.d.sessions.list(ns);
    const policy = this.templatePolicy(ap);
    const nodes = this.d.nodes.list();
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
      projects: this.d.projects.list(ns),
      sessions,
      evaluations: this.d.evaluations.list(ns),
      decisions,
      ...(free.length ? { freeMemoryMB: Math.max(...free) } : {}),
      ...(policy ? { policy, activeUnderPolicy } : {}),
      now,
    };
  }

  private policiesIn(ns: string): SessionPolicy[] {
    return this.d.policies.list(ns);
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
    await this.write({ ap, drafts, resets: v.resets, status, decisions, extra }, v);
  }

  /**
   * One transaction per think (writes.ts planThinkWrite). Retried when a session changed between the
   * fresh read and the write (the recheck runs again); abandoned when the Autopilot itself changed
   * (another controller took this think, or a person edited it: the next reconcile thinks again).
   */
  private async write(t: ThinkDecided, v: View): Promise<void> {
    const ap = t.ap;
    try {
      await retryOnConflict(
        async () => {
          const r = await this.recheckInput(ap, (name) => resumeFrom(v, name));
          const p = planThinkWrite(t, r);
          try {
            await this.d.store.txn(p.ops);
          } catch (e) {
            // The next reconcile re-plans.
            if (lostRace(e) && !(await this.unchanged(ap))) return;
            throw e;
          }
          for (const dec of p.written)
            this.d.metrics?.onDecision?.(ap.metadata.name, dec.spec.action, dec.status?.phase as DecisionPhase);
        },
        { attempts: WRITE_ATTEMPTS, retryOn: lostRace },
      );
    } catch (e) {
      if (!lostRace(e)) throw e;
      this.d.log.warn(`autopilot ${ap.metadata.name}: sessions kept changing under the recheck; thinking again`);
    }
  }

  /** Whether the Autopilot is still at the version this think was planned from. */
  private async unchanged(ap: Autopilot): Promise<boolean> {
    const now = await this.d.store.get(keyOf('Autopilot', ap));
    return !!now && now.metadata.resourceVersion === ap.metadata.resourceVersion;
  }

  /** The fresh read and the rest a Decision is rechecked and carried out against. */
  private async recheckInput(ap: Autopilot, resume: (project: string) => string): Promise<CarryOutInput> {
    return {
      fresh: await this.fresh(ap),
      policies: this.policiesIn(ap.metadata.namespace ?? 'default'),
      sessionKind: registry().resolve('AgentSession'),
      resume,
      now: new Date(this.now()).toISOString(),
    };
  }

  /** The resume prompt of a start the planner wrote no prompt for, built from the caches as a think would. */
  private resumeFromCaches(ap: Autopilot): (project: string) => string {
    return (project) => resumeFrom(view(this.world(ap, this.decisionsOf(ap), this.now()), settings(ap.spec)), project);
  }

  /** A fresh read of what the recheck needs (not the caches, which may lag a person's write). */
  private async fresh(ap: Autopilot): Promise<Fresh> {
    const namespace = ap.metadata.namespace ?? 'default';
    const [projects, sessions] = await Promise.all([
      this.d.store.list('Project', { namespace }),
      this.d.store.list('AgentSession', { namespace }),
    ]);
    return {
      projects: new Map(projects.items.map((p) => [p.metadata.name, p])),
      sessions: sessions.items,
      revision: sessions.revision,
    };
  }

  // ---- approvals ----------------------------------------------------------------------------------

  /** A PendingApproval Decision a person answered: execute it (rechecked) or record the rejection. */
  private async settle(ap: Autopilot, dec: Dec): Promise<void> {
    const approval = dec.spec.approval;
    if (!approval) return;
    await retryOnConflict(
      async () => {
        // A Decision's schema requires its spec (crds/decisions.yaml), which Dec states.
        const cur = (await this.d.store.get(keyOf('Decision', dec))) as Dec | undefined;
        if (cur?.status?.phase !== 'PendingApproval') return;
        const r = approval.verdict === 'Rejected' ? undefined : await this.recheckInput(ap, this.resumeFromCaches(ap));
        const p = planSettle(ap, cur, approval, r, new Date(this.now()).toISOString());
        if (!p) return;
        await this.d.store.txn(p.ops);
        this.d.metrics?.onDecision?.(
          ap.metadata.name,
          p.decision.spec.action,
          p.decision.status?.phase as DecisionPhase,
        );
      },
      { attempts: WRITE_ATTEMPTS, retryOn: lostRace },
    ).catch((e: unknown) => {
      if (!lostRace(e)) throw e;
    });
  }

  /**
   * A PendingApproval Decision nobody answered within spec.approval.timeout: Expired, its default
   * action taken (writes.ts planExpire), told with a DecisionExpired Event in the same transaction.
   */
  private async expire(ap: Autopilot, dec: Dec, s: Settings): Promise<void> {
    await retryOnConflict(
      async () => {
        // A Decision's schema requires its spec (crds/decisions.yaml), which Dec states.
        const cur = (await this.d.store.get(keyOf('Decision', dec))) as Dec | undefined;
        if (cur?.status?.phase !== 'PendingApproval' || cur.spec.approval) return;
        const p = planExpire(ap, cur, s, await this.recheckInput(ap, this.resumeFromCaches(ap)));
        if (!p) return;
        await this.d.store.txn(p.ops);
        this.d.metrics?.onDecision?.(ap.metadata.name, p.decision.spec.action, 'Expired');
      },
      { attempts: WRITE_ATTEMPTS, retryOn: lostRace },
    ).catch((e: unknown) => {
      if (!lostRace(e)) throw e;
    });
  }

  // ---- history ------------------------------------------------------------------------------------

  private decisionsOf(ap: Autopilot): Dec[] {
    return this.d.decisions
      .list(ap.metadata.namespace ?? 'default')
      .filter((x): x is Dec => x.spec?.autopilot === ap.metadata.name);
  }

  private async prune(decisions: Dec[], s: Settings, now: number): Promise<void> {
    const old = expired(decisions, s, now).slice(0, PRUNE_BATCH);
    if (!old.length) return;
    try {
      await this.d.store.txn(
        old.map((x) => ({
          op: 'delete' as const,
          key: keyOf('Decision', x),
          options: { resourceVersion: x.metadata.resourceVersion },
        })),
      );
    } catch (e) {
      if (!lostRace(e)) throw e; // a stale cache: the next reconcile prunes what is left
    }
  }
}

/** The key of `o`, an object of kind `kind` (its own): the store reads it back as that kind's type. */
function keyOf<K extends KindName>(kind: K, o: KindMap[K]): ObjectKey<K> {
  return { kind, namespace: o.metadata.namespace ?? 'default', name: o.metadata.name };
}

export type { RecoveryProposal };
