/**
 * The judge's decisions, pure: what a pass over a session does (which runs get an Evaluation, which
 * Evaluations are judged, what the session's status says of them) and what each step of one
 * judgement writes on its Evaluation. Observed objects in, status and effects as data out — no
 * store, no files, no model, no clock (`now` is passed in).
 */
import { getCondition, setCondition } from '../../api/conditions.js';
import { AssessmentReason } from '../../api/event-reasons.js';
import type { AgentSession, AgentSessionStatus, SessionPolicy } from '../../api/kinds.js';
import { clip } from '../../api/text.js';
import type { Condition } from '../../api/types.js';
import type { EventNote } from '../../client/events.js';
import type { Verdict } from '../../llm/verdict.js';
import { shouldJudge } from './should-judge.js';
import {
  type Evaluation,
  type EvaluationStatus,
  hasVerdict,
  isFailed,
  type LastEvaluation,
  runEvaluationName,
} from './types.js';

export const MAX_ATTEMPTS = 3;

/** Score ≤ 2 or recommendation escalate: a person should look. */
export const escalates = (s: { score?: number; recommendation?: string } | undefined) =>
  !!s && ((s.score !== undefined && s.score <= 2) || s.recommendation === 'escalate');

const evaluationId = (e: Evaluation) => `${e.metadata.namespace ?? ''}/${e.metadata.name}`;

/** What one pass over a session sees. */
export interface JudgeObserved {
  session: AgentSession;
  policy: SessionPolicy | undefined;
  /** The session's own Evaluations (the cache). */
  evaluations: Evaluation[];
  /** Ended runs that started (judge/reconciler.ts endedRuns). */
  endedRuns: number[];
  /** Evaluations in the namespace (sampling's burn-in counter). */
  evaluationsSoFar: number;
  /** Names of run Evaluations that exist (in the cache or, when the cache lags, in the store). */
  existing: ReadonlySet<string>;
  /** Evaluations (namespace/name) a job of this process found decided before the cache showed it. */
  decided: ReadonlySet<string>;
}

/** The session's fields the judge owns, with the Events that tell of their change. */
export interface JudgeStatus {
  lastEvaluation: AgentSessionStatus['lastEvaluation'];
  conditions: Condition[];
  events: EventNote[];
}

export interface JudgePlan {
  /** Runs whose Evaluation `<session>-run-<run>` is created (and then judged). */
  create: number[];
  /** Evaluations without a decision to judge in the background. */
  judge: Evaluation[];
  /** Evaluations the cache now shows decided: forgotten from `decided`. */
  caughtUp: string[];
  /** The session's judge fields when they change (one status write), else undefined. */
  status?: JudgeStatus;
}

export function plan(o: JudgeObserved): JudgePlan {
  const create: number[] = [];
  if (shouldJudge(o.session, o.policy))
    for (const run of o.endedRuns) {
      // Sampling (api/sampling.ts) picks which ended runs are judged; burn-in counts the namespace's Evaluations.
      if (!shouldJudge(o.session, o.policy, run, o.evaluationsSoFar)) continue;
      if (!o.existing.has(runEvaluationName(o.session.metadata.name, run))) create.push(run);
    }
  const judge: Evaluation[] = [];
  const caughtUp: string[] = [];
  for (const ev of o.evaluations) {
    const id = evaluationId(ev);
    if (hasVerdict(ev) || isFailed(ev)) caughtUp.push(id);
    else if (!o.decided.has(id)) judge.push(ev);
  }
  return { create, judge, caughtUp, status: sessionStatus(o.session, o.evaluations) };
}

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

/**
 * status.lastEvaluation, Escalated (on the arrival of a new verdict only: the session controller
 * may clear it later, for a new run) and JudgeFailed, from the session's Evaluations; undefined
 * when nothing of the judge's changes (most passes).
 */
export function sessionStatus(session: AgentSession, mine: Evaluation[]): JudgeStatus | undefined {
  if (!mine.length) return undefined; // nothing of the judge's to change (and no copy of the status to make)
  const judged = mine.filter(hasVerdict).sort(newestFirst);
  const finished = mine.filter((e) => hasVerdict(e) || isFailed(e)).sort(newestFirst);
  const st: AgentSessionStatus = structuredClone(session.status ?? {});
  st.conditions ??= [];
  const conditions = st.conditions;
  const gen = session.metadata.generation;
  const events: EventNote[] = [];
  let changed = false;
  const latest = judged[0];
  if (latest && (st.lastEvaluation as Partial<LastEvaluation> | undefined)?.name !== latest.metadata.name) {
    st.lastEvaluation = lastEvaluationOf(latest);
    changed = true;
    events.push(verdictArrived(conditions, latest, gen));
  }
  const last = finished[0];
  if (last && isFailed(last)) {
    const c = getCondition(last.status?.conditions, 'JudgeFailed');
    changed =
      setCondition(conditions, {
        type: 'JudgeFailed',
        status: 'True',
        reason: c?.reason ?? 'JudgeFailed',
        message: clip(`Evaluation ${last.metadata.name}: ${c?.message ?? last.status?.message ?? ''}`, 1000),
        observedGeneration: gen,
      }) || changed;
  } else if (last && getCondition(conditions, 'JudgeFailed')?.status === 'True') {
    changed =
      setCondition(conditions, {
        type: 'JudgeFailed',
        status: 'False',
        reason: 'VerdictRecorded',
        message: `Evaluation ${last.metadata.name} has a verdict`,
        observedGeneration: gen,
      }) || changed;
  }
  return changed ? { lastEvaluation: st.lastEvaluation, conditions, events } : undefined;
}

function lastEvaluationOf(e: Evaluation): LastEvaluation {
  const s = e.status!;
  return {
    name: e.metadata.name,
    run: e.spec!.run,
    score: s.score!,
    recommendation: s.recommendation!,
    outcome: s.outcome!,
    evaluatedAt: s.evaluatedAt!,
  };
}

/** Escalated set (or cleared when the judge's own) for a new verdict, and the Event telling of it. */
function verdictArrived(conditions: Condition[], latest: Evaluation, gen: number | undefined): EventNote {
  const s = latest.status!;
  const run = latest.spec!.run;
  if (escalates(s)) {
    const msg =
      `run ${run} judged ${s.score}/5 (${s.outcome}, recommendation ${s.recommendation}) ` +
      `by the ${s.backend} judge: ${clip(s.reasoning ?? '', 300)}`;
    setCondition(conditions, {
      type: 'Escalated',
      status: 'True',
      reason: 'JudgeEscalated',
      message: msg,
      observedGeneration: gen,
    });
    return {
      type: 'Warning',
      reason: AssessmentReason.JudgeEscalated,
      message: `Evaluation ${latest.metadata.name}: ${msg}`,
    };
  }
  const esc = getCondition(conditions, 'Escalated');
  if (esc?.status === 'True' && esc.reason === 'JudgeEscalated')
    setCondition(conditions, {
      type: 'Escalated',
      status: 'False',
      reason: 'JudgeSatisfied',
      message: `run ${run} judged ${s.score}/5 (${s.recommendation})`,
      observedGeneration: gen,
    });
  return {
    type: 'Normal',
    reason: AssessmentReason.Evaluated,
    message:
      `Evaluation ${latest.metadata.name}: run ${run} judged ${s.score}/5 ` +
      `(${s.outcome}, recommendation ${s.recommendation}) by the ${s.backend} judge`,
  };
}

// ---- one judgement ------------------------------------------------------------------------------

/** The next step of a judgement, from the Evaluation and its session as stored. */
export type JudgementStep =
  /** Gone, or decided already (by this job or before it): nothing to do. */
  | { kind: 'done' }
  /** Started too often without finishing (a controller killed during each): fail it. */
  | { kind: 'fail'; reason: string; message: string }
  /** Judge it: record attempt `attempt` first, gather its evidence first when it has none. */
  | { kind: 'judge'; attempt: number; needsEvidence: boolean };

export function judgementStep(ev: Evaluation | undefined, session: AgentSession | undefined): JudgementStep {
  if (!ev || hasVerdict(ev) || isFailed(ev) || !session) return { kind: 'done' };
  const attempts = ev.status?.attempts ?? 0;
  if (attempts >= MAX_ATTEMPTS)
    return {
      kind: 'fail',
      reason: 'TooManyAttempts',
      message: `${attempts} judgements were started and none finished (the controller restarted during each)`,
    };
  return { kind: 'judge', attempt: attempts + 1, needsEvidence: !ev.spec?.evidence };
}

/** Recorded before the call: a controller killed during it leaves the attempt counted. */
export function judgingStatus(s: EvaluationStatus, attempt: number, backend: string): void {
  s.phase = 'Judging';
  s.attempts = attempt;
  s.message = `judging with the ${backend} backend (attempt ${attempt})`;
}

/** How the verdict was had: the backend, the model, the requests made and the tokens used. */
export interface VerdictInfo {
  backend: string;
  model?: string;
  requests: number;
  repaired: boolean;
  usage?: { inputTokens?: number; outputTokens?: number };
  now: string;
  generation?: number;
}

/** The verdict on the Evaluation: Judged, its fields, and JudgeFailed cleared if it was set. */
export function judgedStatus(s: EvaluationStatus, v: Verdict, i: VerdictInfo): void {
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
    backend: i.backend,
    ...(i.model ? { model: i.model } : {}),
    evaluatedAt: i.now,
    ...(i.usage && (i.usage.inputTokens !== undefined || i.usage.outputTokens !== undefined)
      ? { usage: JSON.parse(JSON.stringify(i.usage)) }
      : {}),
  });
  s.conditions ??= [];
  setCondition(s.conditions, {
    type: 'Judged',
    status: 'True',
    reason: 'VerdictRecorded',
    message:
      `score ${v.score}/5 from the ${i.backend} backend ` +
      `after ${i.requests} request${i.requests === 1 ? '' : 's'}${i.repaired ? ' (one repaired answer)' : ''}`,
    observedGeneration: i.generation,
  });
  if (getCondition(s.conditions, 'JudgeFailed'))
    setCondition(s.conditions, {
      type: 'JudgeFailed',
      status: 'False',
      reason: 'VerdictRecorded',
      message: '',
      observedGeneration: i.generation,
    });
}

/** JudgeFailed on the Evaluation (never a score), and the Warning told in the same write. */
export function failedStatus(
  ev: Evaluation,
  reason: string,
  message: string,
  backend: string,
): { change: (s: EvaluationStatus) => void; event: EventNote; message: string } {
  const msg = clip(message, 900);
  const gen = ev.metadata.generation;
  return {
    message: msg,
    event: {
      type: 'Warning',
      reason: AssessmentReason.JudgeFailed,
      message: `Evaluation ${ev.metadata.name} of run ${ev.spec?.run} failed (${reason}, ${backend} backend): ${msg}`,
    },
    change: (s) => {
      s.phase = 'Failed';
      s.message = clip(`${reason}: ${msg}`, 1000);
      s.backend = backend;
      s.conditions ??= [];
      setCondition(s.conditions, {
        type: 'JudgeFailed',
        status: 'True',
        reason,
        message: msg,
        observedGeneration: gen,
      });
      setCondition(s.conditions, {
        type: 'Judged',
        status: 'False',
        reason,
        message: 'no verdict',
        observedGeneration: gen,
      });
    },
  };
}
