/**
 * The judge reconciler, keyed by session (`namespace/name`), run by its own Controller and
 * WorkQueue. Each pass:
 *  1. if the session's policy asks for judging (should-judge.ts) and a run has ended, makes sure
 *     the Evaluation `<session>-run-<run>` exists (created with its evidence, owned by the
 *     session; AlreadyExists is success — so one Evaluation per run, whoever gets there first);
 *  2. starts a background judgement for each of the session's Evaluations that has no verdict
 *     yet (including `orchctl judge`'s OnDemand ones) — the reconcile never waits for a model;
 *  3. writes the session's own status fields: `lastEvaluation`, the `JudgeFailed` condition and,
 *     when a new verdict escalates (score ≤ 2 or recommendation escalate), `Escalated=True` with
 *     reason JudgeEscalated and a Warning event. Only through writeOwnedStatus as the `judge` writer.
 *
 * Crash-only: a judgement records `phase: Judging` and bumps `attempts` before it calls the
 * backend; a controller killed mid-call leaves an Evaluation without a verdict, which the next
 * controller judges again (after 3 attempts it fails instead). A verdict is written with
 * compare-and-swap and never over an existing one, so a run gets one verdict.
 */
import { AssessmentReason } from '../../api/event-reasons.js';
import { setCondition, getCondition } from '../../api/conditions.js';
import { isApiError } from '../../api/errors.js';
import type { AgentSession, AgentSessionStatus, SessionPolicy } from '../../api/kinds.js';
import { newEvaluation } from '../../api/evaluation.js';
import type { JudgeMetricsHooks } from '../../api/metrics-hooks.js';
import type { EventNote, EventRecorder } from '../../client/events.js';
import { writeOwnedStatus } from '../../client/status.js';
import { LlmError, type LlmBackend, type LlmErrorKind } from '../../llm/backend.js';
import { globalConcurrency, resolveJudgeConfig, type ResolvedJudgeConfig } from '../../llm/config.js';
import { createBackend } from '../../llm/index.js';
import { Semaphore } from '../../llm/limiter.js';
import { completeStructured } from '../../llm/structured.js';
import { VERDICT_SCHEMA, VERDICT_SCHEMA_NAME, type Verdict } from '../../llm/verdict.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { resolvePolicy } from '../../api/policy.js';
import { ACTIVE_PHASES, type Phase } from '../../api/phases.js';
import { endedPhase } from './evidence.js';
import { clip } from '../../api/text.js';
import { buildJudgePrompt } from './prompt.js';
import { judgeConfigOf, shouldJudge } from './should-judge.js';
import { gatherEvidence, readRunState } from './sources.js';
import { hasVerdict, isFailed, runEvaluationName, type Evaluation, type LastEvaluation } from './types.js';

export const MAX_ATTEMPTS = 3;
const RETRY_LATER_MS = 5000;
// The Evaluation vocabulary and the metrics hooks live in api/ (the CLI and metrics use them too).
export { newEvaluation, RUN_LABEL, SESSION_LABEL, TRIGGER_LABEL } from '../../api/evaluation.js';
export type { JudgeMetricsHooks } from '../../api/metrics-hooks.js';

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export interface JudgeDeps {
  store: Store;
  policies: Pick<Informer, 'list'>;
  evaluations: Pick<Informer, 'list'>;
  recorder: EventRecorder;
  home: string;
  log: Logger;
  /** Brings a session key back (when a background judgement finishes). */
  enqueue: (key: string) => void;
  /** The controller-wide concurrency limit for judgements. */
  limiter: Semaphore;
  metrics?: JudgeMetricsHooks;
  /** Backend for a configuration (tests inject; default createBackend). */
  backendFor?: (c: ResolvedJudgeConfig) => LlmBackend;
  /** First retry backoff in ms (default 500; tests make it small). */
  backoffMs?: number;
}

const REASONS: Record<LlmErrorKind, string> = {
  timeout: 'Timeout',
  rate_limited: 'RateLimited',
  server: 'BackendError',
  network: 'NetworkError',
  bad_output: 'InvalidOutput',
  config: 'ConfigError',
  client: 'RequestRejected',
};

/** Score ≤ 2 or recommendation escalate: a person should look. */
export const escalates = (s: { score?: number; recommendation?: string } | undefined) =>
  !!s && ((s.score !== undefined && s.score <= 2) || s.recommendation === 'escalate');

/** When an Evaluation was decided: its verdict's time, else when JudgeFailed was set, else its creation. */
const decidedAt = (e: Evaluation) => {
  const t =
    e.status?.evaluatedAt ??
    e.status?.conditions?.find((c) => c.type === 'JudgeFailed' && c.status === 'True')?.lastTransitionTime ??
    e.metadata.creationTimestamp;
  const n = Date.parse(String(t ?? ''));
  return Number.isNaN(n) ? 0 : n;
};
const newestFirst = (a: Evaluation, b: Evaluation) =>
  (b.spec?.run ?? 0) - (a.spec?.run ?? 0) || decidedAt(b) - decidedAt(a);

export class JudgeReconciler implements Reconciler {
  /** Evaluations (namespace/name) with a judgement under way in this process. */
  private readonly inFlight = new Set<string>();
  /** Evaluations a job found decided (verdict or failure) before the informer showed it. */
  private readonly decided = new Set<string>();
  private readonly jobs = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private stopping = false;

  constructor(private readonly d: JudgeDeps) {}

  /** Judgements started and not finished (queued for a slot or calling a backend). */
  get pending(): number {
    return this.inFlight.size;
  }

  async reconcile(key: string): Promise<Result | undefined> {
    if (this.stopping) return;
    const [namespace, name] = key.split('/');
    const session = (await this.d.store.get({ kind: 'AgentSession', namespace, name })) as AgentSession | undefined;
    if (!session?.metadata.uid) return; // its Evaluations go with it (ownerReferences)
    const policy = resolvePolicy(session, this.d.policies.list() as SessionPolicy[]);
    const mine = this.evaluationsOf(session);
    if (shouldJudge(session, policy))
      for (const run of this.endedRuns(session)) {
        // Sampling (assessment/sampling.ts) picks which ended runs are judged; burn-in counts the
        // namespace's Evaluations.
        if (!shouldJudge(session, policy, run, this.d.evaluations.list(namespace).length)) continue;
        const created = await this.ensureEvaluation(session, run, policy);
        // Pushed here as well: the cache may not have it yet.
        if (created && !mine.some((e) => e.metadata.name === created.metadata.name)) mine.push(created);
      }
    for (const ev of mine) {
      const id = `${ev.metadata.namespace ?? ''}/${ev.metadata.name}`;
      if (hasVerdict(ev) || isFailed(ev))
        this.decided.delete(id); // the cache has caught up
      else if (!this.decided.has(id)) this.start(ev, key);
    }
    await this.summarise(session, mine);
  }

  // ---- which runs, which Evaluations ------------------------------------------------------

  /**
   * The current run if it has ended, and the one before it: with a restart policy the session
   * passes through its ended phase and into Backoff within one reconcile of the session
   * controller, and a run can end while no controller runs — so the previous run is looked at too
   * (from its workspace). A run that never started (no state.json) has nothing to judge.
   */
  endedRuns(session: AgentSession): number[] {
    const st = session.status ?? {};
    const run = st.run ?? 0;
    const ns = session.metadata.namespace ?? 'default';
    const out: number[] = [];
    const phase = (st.phase ?? 'Pending') as Phase;
    const started = (r: number) => readRunState(this.d.home, ns, session.metadata.name, r);
    if (run >= 1 && !ACTIVE_PHASES.has(phase) && endedPhase(st) && started(run)) out.push(run);
    if (run >= 2) {
      const prev = started(run - 1);
      if (prev && ['SUCCEEDED', 'FAILED', 'KILLED', 'TIMEDOUT'].includes(String(prev.status))) out.push(run - 1);
    }
    return out;
  }

  private evaluationsOf(session: AgentSession): Evaluation[] {
    const uid = session.metadata.uid;
    return (this.d.evaluations.list(session.metadata.namespace ?? '') as Evaluation[]).filter(
      (e) =>
        e.spec?.sessionRef === session.metadata.name &&
        !e.metadata.deletionTimestamp &&
        (!e.metadata.ownerReferences?.length || e.metadata.ownerReferences.some((r) => r.uid === uid)),
    );
  }

  /** Creates the run's Evaluation unless it exists; returns it when this call created it. */
  private async ensureEvaluation(
    session: AgentSession,
    run: number,
    policy: SessionPolicy | undefined,
  ): Promise<Evaluation | undefined> {
    const ns = session.metadata.namespace ?? 'default';
    const name = runEvaluationName(session.metadata.name, run);
    if ((this.d.evaluations.list(ns) as Evaluation[]).some((e) => e.metadata.name === name)) return undefined;
    if (await this.d.store.get({ kind: 'Evaluation', namespace: ns, name })) return undefined;
    const evidence = gatherEvidence(this.d.home, session, run, 'SessionEnded', policy);
    try {
      const created = (await this.d.store.create(
        newEvaluation(session, name, run, 'SessionEnded', JSON.parse(JSON.stringify(evidence))),
      )) as Evaluation;
      this.d.log.info(`evaluation ${ns}/${name} created for run ${run} of ${session.metadata.name}`);
      return created;
    } catch (e) {
      if (!isApiError(e, 'AlreadyExists')) throw e;
      return undefined;
    }
  }

  // ---- judging, in the background ---------------------------------------------------------

  private start(ev: Evaluation, sessionKey: string): void {
    const id = `${ev.metadata.namespace ?? ''}/${ev.metadata.name}`;
    if (this.inFlight.has(id) || this.stopping) return;
    this.inFlight.add(id);
    let later = false;
    const job = this.judge(ev.metadata.namespace ?? 'default', ev.metadata.name)
      .then((decided) => {
        if (decided) this.decided.add(id);
      })
      .catch((e) => {
        // Not the backend's failure (that is JudgeFailed) but ours, e.g. the store: try again later, not in a loop.
        later = true;
        this.d.log.error(`judging evaluation ${id} failed; retrying in ${RETRY_LATER_MS / 1000} s`, e);
      })
      .finally(() => {
        this.inFlight.delete(id);
        this.jobs.delete(job);
        if (this.stopping) return;
        if (later) setTimeout(() => !this.stopping && this.d.enqueue(sessionKey), RETRY_LATER_MS).unref();
        else this.d.enqueue(sessionKey);
      });
    this.jobs.add(job);
  }

  /** Judges one Evaluation; true when it is decided afterwards (verdict or failure, by this job or before it). */
  private async judge(ns: string, name: string): Promise<boolean> {
    const limiter = this.d.limiter;
    try {
      await limiter.acquire(this.abort.signal);
    } catch {
      return false; // shutting down
    }
    this.d.metrics?.onInFlight?.(limiter.inFlight);
    const t0 = performance.now();
    let backendName = 'unknown';
    try {
      let ev = (await this.d.store.get({ kind: 'Evaluation', namespace: ns, name })) as Evaluation | undefined;
      if (!ev || hasVerdict(ev) || isFailed(ev)) return true;
      if (this.stopping) return false;
      const session = (await this.d.store.get({ kind: 'AgentSession', namespace: ns, name: ev.spec!.sessionRef })) as
        | AgentSession
        | undefined;
      if (!session) return true;
      const policy = resolvePolicy(session, this.d.policies.list() as SessionPolicy[]);
      const config = resolveJudgeConfig(judgeConfigOf(policy));
      backendName = config.backend;
      const attempts = ev.status?.attempts ?? 0;
      if (attempts >= MAX_ATTEMPTS) {
        await this.fail(
          ev,
          session,
          'TooManyAttempts',
          `${attempts} judgements were started and none finished (the controller restarted during each)`,
          backendName,
          t0,
        );
        return true;
      }
      if (!ev.spec?.evidence) {
        const evidence = gatherEvidence(this.d.home, session, ev.spec!.run, ev.spec!.trigger ?? 'OnDemand', policy);
        ev = (await this.d.store.update({
          ...ev,
          spec: { ...ev.spec!, evidence: JSON.parse(JSON.stringify(evidence)) },
        })) as Evaluation;
      }
      // Recorded before the call: a controller killed now leaves the attempt counted.
      ev = await this.writeEvaluationStatus(ev, (s) => {
        s.phase = 'Judging';
        s.attempts = attempts + 1;
        s.message = `judging with the ${config.backend} backend (attempt ${attempts + 1})`;
      });
      if (!ev) return true;
      let backend: LlmBackend;
      try {
        backend = (this.d.backendFor ?? ((c) => createBackend(c)))(config);
      } catch (e) {
        throw e instanceof LlmError ? e : new LlmError('config', (e as Error).message);
      }
      const p = buildJudgePrompt(ev.spec!.evidence!);
      const r = await completeStructured<Verdict>(
        backend,
        {
          purpose: 'judge',
          system: p.system,
          prompt: p.prompt,
          schema: VERDICT_SCHEMA,
          schemaName: VERDICT_SCHEMA_NAME,
          evidence: ev.spec!.evidence,
          timeoutMs: config.timeoutMs,
          maxTokens: 1024,
          signal: this.abort.signal,
        },
        {
          maxRetries: config.maxRetries,
          backoffMs: this.d.backoffMs,
          onRequest: (result, secs) => this.d.metrics?.onRequest?.(backend.name, 'judge', result, secs),
        },
      );
      if (this.stopping) return false;
      const v = r.value;
      const written = await this.writeEvaluationStatus(ev, (s) => {
        Object.assign(s, {
          phase: 'Judged',
          message: clip(`${v.score}/5 ${v.outcome}: ${v.reasoning.split('\n')[0]}`, 200),
          score: v.score,
          recommendation: v.recommendation,
          outcome: v.outcome,
          confidence: v.confidence,
          accomplishments: v.accomplishments,
          failures: v.failures,
          reasoning: v.reasoning,
          backend: backend.name,
          ...((r.response.model ?? backend.model) ? { model: r.response.model ?? backend.model } : {}),
          evaluatedAt: new Date().toISOString(),
          ...(r.response.usage &&
          (r.response.usage.inputTokens !== undefined || r.response.usage.outputTokens !== undefined)
            ? { usage: JSON.parse(JSON.stringify(r.response.usage)) }
            : {}),
        });
        s.conditions ??= [];
        setCondition(s.conditions, {
          type: 'Judged',
          status: 'True',
          reason: 'VerdictRecorded',
          message:
            `score ${v.score}/5 from the ${backend.name} backend ` +
            `after ${r.requests} request${r.requests === 1 ? '' : 's'}${r.repaired ? ' (one repaired answer)' : ''}`,
          observedGeneration: ev!.metadata.generation,
        });
        if (getCondition(s.conditions, 'JudgeFailed'))
          setCondition(s.conditions, {
            type: 'JudgeFailed',
            status: 'False',
            reason: 'VerdictRecorded',
            message: '',
            observedGeneration: ev!.metadata.generation,
          });
      });
      if (written) {
        this.d.metrics?.onEvaluated?.(backend.name, v.recommendation, v.score, (performance.now() - t0) / 1000);
        this.d.log.info(`evaluation ${ns}/${name}: ${v.score}/5 ${v.outcome}, ${v.recommendation} (${backend.name})`);
      }
      return true;
    } catch (e) {
      if (this.stopping) return false; // an aborted call at shutdown is not a failure; the next controller judges it
      const err = e instanceof LlmError ? e : undefined;
      if (!err) throw e;
      const ev = (await this.d.store.get({ kind: 'Evaluation', namespace: ns, name })) as Evaluation | undefined;
      const session =
        ev &&
        ((await this.d.store.get({ kind: 'AgentSession', namespace: ns, name: ev.spec!.sessionRef })) as
          | AgentSession
          | undefined);
      if (ev && session) await this.fail(ev, session, REASONS[err.kind], err.message, backendName, t0);
      return true;
    } finally {
      limiter.release();
      this.d.metrics?.onInFlight?.(limiter.inFlight);
    }
  }

  /** JudgeFailed on the Evaluation (never a score), a Warning event; the session's condition follows in summarise(). */
  private async fail(
    ev: Evaluation,
    session: AgentSession,
    reason: string,
    message: string,
    backend: string,
    t0: number,
  ): Promise<void> {
    const msg = clip(message, 900);
    // In the transaction of the Evaluation's Failed status: a failed Evaluation is never judged again,
    // so the Event must not be lost to a kill after that write, nor told twice by one before it.
    const told: EventNote = {
      type: 'Warning',
      reason: AssessmentReason.JudgeFailed,
      message: `Evaluation ${ev.metadata.name} of run ${ev.spec?.run} failed (${reason}, ${backend} backend): ${msg}`,
    };
    const written = await this.writeEvaluationStatus(
      ev,
      (s) => {
        s.phase = 'Failed';
        s.message = clip(`${reason}: ${msg}`, 1000);
        s.backend = backend;
        s.conditions ??= [];
        setCondition(s.conditions, {
          type: 'JudgeFailed',
          status: 'True',
          reason,
          message: msg,
          observedGeneration: ev.metadata.generation,
        });
        setCondition(s.conditions, {
          type: 'Judged',
          status: 'False',
          reason,
          message: 'no verdict',
          observedGeneration: ev.metadata.generation,
        });
      },
      { about: session, events: [told] },
    );
    if (!written || hasVerdict(written)) return;
    this.d.metrics?.onFailed?.(backend, reason, (performance.now() - t0) / 1000);
    this.d.log.warn(`evaluation ${ev.metadata.namespace}/${ev.metadata.name}: judge failed (${reason}): ${msg}`);
  }

  /**
   * Compare-and-swap status write of an Evaluation; never touches one that already has a verdict
   * or has failed. Returns the stored object, or undefined when it is gone or already decided.
   */
  private async writeEvaluationStatus(
    ev: Evaluation,
    change: (s: NonNullable<Evaluation['status']>) => void,
    told?: { about: AgentSession; events: EventNote[] },
  ): Promise<Evaluation | undefined> {
    let cur: Evaluation | undefined = ev;
    for (let i = 0; i < 8 && cur; i++) {
      if (hasVerdict(cur) || isFailed(cur)) return undefined;
      const status = structuredClone(cur.status ?? {});
      change(status);
      status.observedGeneration = cur.metadata.generation;
      const object = { ...cur, status: JSON.parse(JSON.stringify(status)) };
      const events = told ? await this.d.recorder.ops(told.about, told.events) : [];
      try {
        return (await this.d.store.txn([{ op: 'updateStatus', object }, ...events]))[0] as Evaluation;
      } catch (e) {
        // Written meanwhile (the Evaluation, or the same Event by another writer): read again.
        if (!isApiError(e, 'Conflict') && !isApiError(e, 'AlreadyExists')) {
          if (isApiError(e, 'NotFound')) return undefined;
          throw e;
        }
        cur = (await this.d.store.get({
          kind: 'Evaluation',
          namespace: ev.metadata.namespace ?? '',
          name: ev.metadata.name,
        })) as Evaluation | undefined;
      }
    }
    return undefined;
  }

  // ---- the session's status ---------------------------------------------------------------

  private async summarise(session: AgentSession, mine: Evaluation[]): Promise<void> {
    const judged = mine.filter(hasVerdict).sort(newestFirst);
    const finished = mine.filter((e) => hasVerdict(e) || isFailed(e)).sort(newestFirst);
    const st: AgentSessionStatus = structuredClone(session.status ?? {});
    st.conditions ??= [];
    let changed = false;
    const gen = session.metadata.generation;
    const events: [type: 'Normal' | 'Warning', reason: string, message: string][] = [];
    const latest = judged[0];
    const prev = st.lastEvaluation as Partial<LastEvaluation> | undefined;
    if (latest && prev?.name !== latest.metadata.name) {
      const s = latest.status!;
      st.lastEvaluation = {
        name: latest.metadata.name,
        run: latest.spec!.run,
        score: s.score!,
        recommendation: s.recommendation!,
        outcome: s.outcome!,
        evaluatedAt: s.evaluatedAt!,
      } satisfies LastEvaluation;
      changed = true;
      // On the arrival of a new verdict only: the session controller may clear Escalated later (a new run).
      if (escalates(s)) {
        const msg =
          `run ${latest.spec!.run} judged ${s.score}/5 (${s.outcome}, recommendation ${s.recommendation}) ` +
          `by the ${s.backend} judge: ${clip(s.reasoning ?? '', 300)}`;
        setCondition(st.conditions, {
          type: 'Escalated',
          status: 'True',
          reason: 'JudgeEscalated',
          message: msg,
          observedGeneration: gen,
        });
        events.push(['Warning', AssessmentReason.JudgeEscalated, `Evaluation ${latest.metadata.name}: ${msg}`]);
      } else {
        const esc = getCondition(st.conditions, 'Escalated');
        if (esc?.status === 'True' && esc.reason === 'JudgeEscalated')
          setCondition(st.conditions, {
            type: 'Escalated',
            status: 'False',
            reason: 'JudgeSatisfied',
            message: `run ${latest.spec!.run} judged ${s.score}/5 (${s.recommendation})`,
            observedGeneration: gen,
          });
        events.push([
          'Normal',
          AssessmentReason.Evaluated,
          `Evaluation ${latest.metadata.name}: run ${latest.spec!.run} judged ${s.score}/5 ` +
            `(${s.outcome}, recommendation ${s.recommendation}) by the ${s.backend} judge`,
        ]);
      }
    }
    const last = finished[0];
    if (last && isFailed(last)) {
      const c = getCondition(last.status?.conditions, 'JudgeFailed');
      changed =
        setCondition(st.conditions, {
          type: 'JudgeFailed',
          status: 'True',
          reason: c?.reason ?? 'JudgeFailed',
          message: clip(`Evaluation ${last.metadata.name}: ${c?.message ?? last.status?.message ?? ''}`, 1000),
          observedGeneration: gen,
        }) || changed;
    } else if (last && getCondition(st.conditions, 'JudgeFailed')?.status === 'True') {
      changed =
        setCondition(st.conditions, {
          type: 'JudgeFailed',
          status: 'False',
          reason: 'VerdictRecorded',
          message: `Evaluation ${last.metadata.name} has a verdict`,
          observedGeneration: gen,
        }) || changed;
    }
    if (!changed) return; // most passes: nothing of ours to write
    // The Events in the transaction of the status they tell of: never lost to a crash, never told twice.
    const notes = events.map(([type, reason, message]): EventNote => ({ type, reason, message }));
    await writeOwnedStatus(
      this.d.store,
      session,
      'judge',
      { lastEvaluation: st.lastEvaluation, conditions: st.conditions },
      8,
      { recorder: this.d.recorder, events: notes },
    );
  }

  /**
   * Stops starting judgements and cancels the ones in flight (their Evaluations stay unjudged for
   * the next controller).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort(new LlmError('timeout', 'the controller is stopping'));
    await Promise.allSettled([...this.jobs]);
  }

  /** Resolves when no judgement is in flight (--once and tests). */
  async idle(): Promise<void> {
    while (this.jobs.size) await Promise.allSettled([...this.jobs]);
  }
}

/** The controller-wide limit: the smallest judge.maxConcurrent of the policies (read on every acquire), else 2. */
export function policyLimiter(policies: Pick<Informer, 'list'>): Semaphore {
  return new Semaphore(() => globalConcurrency(policies.list().map((p) => judgeConfigOf(p as SessionPolicy))));
}
