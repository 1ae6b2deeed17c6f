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
import { isApiError } from '../../api/errors.js';
import { newEvaluation } from '../../api/evaluation.js';
import { type AgentSession, keyOfKind, type SessionPolicy } from '../../api/kinds.js';
import type { JudgeMetricsHooks } from '../../api/metrics-hooks.js';
import { ACTIVE_PHASES, type Phase } from '../../api/phases.js';
import { resolvePolicy } from '../../api/policy.js';
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
import { retryOnConflict } from '../../store/retry.js';
import type { Store } from '../../store/store.js';
import { endedPhase } from './evidence.js';
import {
  failedStatus,
  type JudgeObserved,
  judgedStatus,
  judgementStep,
  judgingStatus,
  plan,
  type VerdictInfo,
} from './plan.js';
import { buildJudgePrompt } from './prompt.js';
import { judgeConfigOf, shouldJudge } from './should-judge.js';
import { gatherEvidence, readRunState } from './sources.js';
import { type Evaluation, hasVerdict, isFailed, runEvaluationName } from './types.js';

export { escalates, MAX_ATTEMPTS } from './plan.js';
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
  policies: Pick<Informer<'SessionPolicy'>, 'list'>;
  evaluations: Pick<Informer<'Evaluation'>, 'list'>;
  /** The cache of sessions: a session it shows with nothing to judge costs no store read. */
  sessions: Pick<Informer<'AgentSession'>, 'get'>;
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

  /**
   * Whether a resync should queue the session: not one its pass would skip (nothingToJudge). The
   * resync queued every session to have most of them return at once: 1000 reconciles every 30 s
   * at 1000 idle sessions, each a queue entry, a worker turn and its promises.
   */
  needsPass(key: string): boolean {
    return !this.nothingToJudge(key);
  }

  /** Observe → plan (plan.ts, pure) → create and start what it asks → one status write. */
  async reconcile(key: string): Promise<Result | undefined> {
    if (this.stopping) return;
    if (this.nothingToJudge(key)) return;
    const o = await this.observe(key);
    if (!o) return; // its Evaluations go with it (ownerReferences)
    const p = plan(o);
    for (const id of p.caughtUp) this.decided.delete(id); // the cache has caught up
    const judge = [...p.judge];
    for (const run of p.create) {
      const created = await this.createEvaluation(o.session, run, o.policy);
      // Judged at once: the cache may not have it yet.
      if (created && !o.evaluations.some((e) => e.metadata.name === created.metadata.name)) judge.push(created);
    }
    for (const ev of judge) this.start(ev, key);
    if (!p.status) return; // most passes: nothing of ours to write
    // The Events in the transaction of the status they tell of: never lost to a crash, never told twice.
    const { lastEvaluation, conditions, events } = p.status;
    await writeOwnedStatus(this.d.store, o.session, 'judge', { lastEvaluation, conditions }, 8, {
      recorder: this.d.recorder,
      events,
    });
  }

  /**
   * The cache shows the session with no Evaluation and no judging policy: the pass would do
   * nothing (no run to judge, no status of ours to write), so the store is not read (issue 29:
   * the 30 s resync read every session, ~80 µs each). A newer version in the store comes with a
   * change that queues the session again, and an Evaluation's arrival queues it from the same cache.
   */
  private nothingToJudge(key: string): boolean {
    const [namespace, name] = key.split('/');
    const cached = this.d.sessions.get(namespace, name);
    if (!cached?.metadata.uid) return false;
    return !this.evaluationsOf(cached).length && !shouldJudge(cached, resolvePolicy(cached, this.d.policies.list()));
  }

  /** Everything a pass decides on: the session, its policy and Evaluations, its ended runs. */
  private async observe(key: string): Promise<JudgeObserved | undefined> {
    const [namespace, name] = key.split('/');
    const session = await this.d.store.get({ kind: 'AgentSession', namespace, name });
    if (!session?.metadata.uid) return undefined;
    const policy = resolvePolicy(session, this.d.policies.list());
    const all = this.d.evaluations.list(namespace);
    return {
      session,
      policy,
      evaluations: this.evaluationsOf(session),
      // The run workspaces are read only for a session whose ended runs are judged at all.
      endedRuns: shouldJudge(session, policy) ? this.endedRuns(session) : [],
      evaluationsSoFar: all.length,
      existing: new Set(all.map((e) => e.metadata.name)),
      decided: this.decided,
    };
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
    return this.d.evaluations
      .list(session.metadata.namespace ?? '')
      .filter(
        (e) =>
          e.spec?.sessionRef === session.metadata.name &&
          !e.metadata.deletionTimestamp &&
          (!e.metadata.ownerReferences?.length || e.metadata.ownerReferences.some((r) => r.uid === uid)),
      );
  }

  /**
   * Creates the run's Evaluation with its evidence unless the store has it (the cache the plan read
   * may lag); returns it when this call created it.
   */
  private async createEvaluation(
    session: AgentSession,
    run: number,
    policy: SessionPolicy | undefined,
  ): Promise<Evaluation | undefined> {
    const ns = session.metadata.namespace ?? 'default';
    const name = runEvaluationName(session.metadata.name, run);
    if (await this.d.store.get({ kind: 'Evaluation', namespace: ns, name })) return undefined;
    const evidence = gatherEvidence(this.d.home, session, run, 'SessionEnded', policy);
    try {
      const created = await this.d.store.create(
        newEvaluation(session, name, run, 'SessionEnded', JSON.parse(JSON.stringify(evidence))),
      );
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
    const job = { backend: 'unknown' };
    try {
      return await this.judgeOnce(ns, name, t0, job);
    } catch (e) {
      if (this.stopping) return false; // an aborted call at shutdown is not a failure; the next controller judges it
      const err = e instanceof LlmError ? e : undefined;
      if (!err) throw e;
      const ev = await this.d.store.get({ kind: 'Evaluation', namespace: ns, name });
      const session = ev && (await this.sessionOf(ev));
      if (ev && session) await this.fail(ev, session, REASONS[err.kind], err.message, job.backend, t0);
      return true;
    } finally {
      limiter.release();
      this.d.metrics?.onInFlight?.(limiter.inFlight);
    }
  }

  private async sessionOf(ev: Evaluation): Promise<AgentSession | undefined> {
    const namespace = ev.metadata.namespace ?? 'default';
    return this.d.store.get({ kind: 'AgentSession', namespace, name: ev.spec!.sessionRef });
  }

  /** Observe the Evaluation and its session, take the step plan.ts names, write each step's status. */
  private async judgeOnce(ns: string, name: string, t0: number, job: { backend: string }): Promise<boolean> {
    let ev = await this.d.store.get({ kind: 'Evaluation', namespace: ns, name });
    if (!ev || hasVerdict(ev) || isFailed(ev)) return true;
    if (this.stopping) return false;
    const session = await this.sessionOf(ev);
    if (!session) return true;
    const policy = resolvePolicy(session, this.d.policies.list());
    const config = resolveJudgeConfig(judgeConfigOf(policy));
    job.backend = config.backend;
    const step = judgementStep(ev, session);
    if (step.kind === 'done') return true;
    if (step.kind === 'fail') {
      await this.fail(ev, session, step.reason, step.message, job.backend, t0);
      return true;
    }
    if (step.needsEvidence) {
      const evidence = gatherEvidence(this.d.home, session, ev.spec!.run, ev.spec!.trigger ?? 'OnDemand', policy);
      ev = await this.d.store.update({
        ...ev,
        spec: { ...ev.spec!, evidence: JSON.parse(JSON.stringify(evidence)) },
      });
    }
    ev = await this.writeEvaluationStatus(ev, (s) => judgingStatus(s, step.attempt, config.backend));
    if (!ev) return true;
    const backend = this.backendFor(config);
    const r = await this.ask(backend, ev, config);
    if (this.stopping) return false;
    const v = r.value;
    const info: VerdictInfo = {
      backend: backend.name,
      model: r.response.model ?? backend.model,
      requests: r.requests,
      repaired: !!r.repaired,
      usage: r.response.usage,
      now: new Date().toISOString(),
      generation: ev.metadata.generation,
    };
    if (await this.writeEvaluationStatus(ev, (s) => judgedStatus(s, v, info))) {
      this.d.metrics?.onEvaluated?.(backend.name, v.recommendation, v.score, (performance.now() - t0) / 1000);
      this.d.log.info(`evaluation ${ns}/${name}: ${v.score}/5 ${v.outcome}, ${v.recommendation} (${backend.name})`);
    }
    return true;
  }

  private backendFor(config: ResolvedJudgeConfig): LlmBackend {
    try {
      return (this.d.backendFor ?? ((c) => createBackend(c)))(config);
    } catch (e) {
      throw e instanceof LlmError ? e : new LlmError('config', (e as Error).message);
    }
  }

  /** The model's verdict on the Evaluation's evidence (bounded retries and one repair in completeStructured). */
  private ask(backend: LlmBackend, ev: Evaluation, config: ResolvedJudgeConfig) {
    const p = buildJudgePrompt(ev.spec!.evidence!);
    return completeStructured<Verdict>(
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
  }

  /** JudgeFailed on the Evaluation (never a score), a Warning event; the session's condition follows in a pass. */
  private async fail(
    ev: Evaluation,
    session: AgentSession,
    reason: string,
    message: string,
    backend: string,
    t0: number,
  ): Promise<void> {
    const f = failedStatus(ev, reason, message, backend);
    // In the transaction of the Evaluation's Failed status: a failed Evaluation is never judged again,
    // so the Event must not be lost to a kill after that write, nor told twice by one before it.
    const written = await this.writeEvaluationStatus(ev, f.change, { about: session, events: [f.event] });
    if (!written || hasVerdict(written)) return;
    this.d.metrics?.onFailed?.(backend, reason, (performance.now() - t0) / 1000);
    this.d.log.warn(`evaluation ${ev.metadata.namespace}/${ev.metadata.name}: judge failed (${reason}): ${f.message}`);
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
    const key = keyOfKind('Evaluation', ev);
    // Written meanwhile (the Evaluation, or the same Event by another writer): read again.
    return retryOnConflict(
      async (i) => {
        const cur = i === 0 ? ev : await this.d.store.get(key);
        if (!cur || hasVerdict(cur) || isFailed(cur)) return undefined;
        const status = structuredClone(cur.status ?? {});
        change(status);
        status.observedGeneration = cur.metadata.generation;
        const object = { ...cur, status: JSON.parse(JSON.stringify(status)) };
        const events = told ? await this.d.recorder.ops(told.about, told.events) : [];
        // A txn returns plain Resources (ops of any kind); its first result is this updateStatus of the Evaluation.
        return (await this.d.store.txn([{ op: 'updateStatus', object }, ...events]))[0] as Evaluation;
      },
      { attempts: 8, retryOn: (e) => isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists') },
    ).catch((e: unknown) => {
      if (isApiError(e, 'NotFound') || isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists')) return undefined;
      throw e;
    });
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
export function policyLimiter(policies: Pick<Informer<'SessionPolicy'>, 'list'>): Semaphore {
  return new Semaphore(() => globalConcurrency(policies.list().map((p) => judgeConfigOf(p))));
}
