/**
 * The judge's pure plan (controller/reconcilers/judge/plan.ts) on data alone: no store, no files,
 * no model. Which runs get an Evaluation, which are judged, what the session's status says, and
 * what each step of a judgement writes on the Evaluation.
 */
import { describe, expect, it } from 'vitest';
import { newEvaluation } from '../../../../controller/api/evaluation.js';
import type { AgentSession, SessionPolicy } from '../../../../controller/api/kinds.js';
import type { Verdict } from '../../../../controller/llm/verdict.js';
import {
  failedStatus,
  type JudgeObserved,
  judgedStatus,
  judgementStep,
  judgingStatus,
  MAX_ATTEMPTS,
  plan,
} from '../../../../controller/reconcilers/judge/plan.js';
import type { Evaluation, EvaluationStatus } from '../../../../controller/reconcilers/judge/types.js';

const session = (status: AgentSession['status'] = {}): AgentSession => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name: 'web', namespace: 'default', uid: 'u-web', generation: 4 },
  spec: { agent: { command: ['true'] }, prompt: 'p', projectRef: 'shop' },
  status,
});

const judging: SessionPolicy = {
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'default', namespace: 'default' },
  spec: { judge: {} },
};

const evaluation = (run: number, status?: EvaluationStatus, evidence = true): Evaluation => {
  const e = newEvaluation(session(), `web-run-${run}`, run, 'SessionEnded', evidence ? ({} as never) : undefined);
  return { ...e, metadata: { ...e.metadata, generation: 1 }, ...(status ? { status } : {}) };
};

const verdict = (score: number, recommendation: Verdict['recommendation'], at: string): EvaluationStatus => ({
  phase: 'Judged',
  score,
  recommendation,
  outcome: score >= 3 ? 'success' : 'failure',
  backend: 'heuristic',
  reasoning: 'tests fail\nand more',
  evaluatedAt: at,
});

const observed = (o: Partial<JudgeObserved> = {}): JudgeObserved => ({
  session: session(),
  policy: judging,
  evaluations: [],
  endedRuns: [],
  evaluationsSoFar: 0,
  existing: new Set(),
  decided: new Set(),
  ...o,
});

describe('judge plan: which runs, which Evaluations', () => {
  it('creates an Evaluation for each ended run that has none, and writes nothing else', () => {
    const p = plan(observed({ endedRuns: [2, 1], existing: new Set(['web-run-1']) }));
    expect(p.create).toEqual([2]);
    expect(p.judge).toEqual([]);
    expect(p.status).toBeUndefined();
  });

  it('creates none without a judge section in the policy (judged on demand only)', () => {
    expect(plan(observed({ policy: undefined, endedRuns: [1] })).create).toEqual([]);
    const off = { ...judging, spec: { judge: { enabled: false } } };
    expect(plan(observed({ policy: off, endedRuns: [1] })).create).toEqual([]);
  });

  it('judges the undecided Evaluations not already decided by a job, and forgets the decided ones', () => {
    const pending = evaluation(3);
    const raced = evaluation(2);
    const done = evaluation(1, verdict(4, 'continue', '2026-03-01T10:00:00Z'));
    const p = plan(
      observed({ evaluations: [pending, raced, done], decided: new Set(['default/web-run-2', 'default/web-run-1']) }),
    );
    expect(p.judge.map((e) => e.metadata.name)).toEqual(['web-run-3']);
    expect(p.caughtUp).toEqual(['default/web-run-1']);
  });
});

describe('judge plan: the session status', () => {
  it('a new low verdict sets lastEvaluation and Escalated=True, told by a JudgeEscalated Warning', () => {
    const p = plan(observed({ evaluations: [evaluation(1, verdict(2, 'retry', '2026-03-01T10:00:00Z'))] }));
    expect(p.status?.lastEvaluation).toMatchObject({ name: 'web-run-1', run: 1, score: 2, recommendation: 'retry' });
    expect(p.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Escalated', status: 'True', reason: 'JudgeEscalated', observedGeneration: 4 }),
    );
    expect(p.status?.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'Escalated' })]);
  });

  it("a good verdict clears the judge's own escalation and tells an Evaluated event", () => {
    const s = session({
      lastEvaluation: {
        name: 'web-run-1',
        run: 1,
        score: 1,
        recommendation: 'retry',
        outcome: 'failure',
        evaluatedAt: 'x',
      },
      conditions: [
        { type: 'Escalated', status: 'True', reason: 'JudgeEscalated', message: 'm', lastTransitionTime: 'T0' },
      ],
    });
    const p = plan(
      observed({ session: s, evaluations: [evaluation(2, verdict(5, 'complete', '2026-03-01T11:00:00Z'))] }),
    );
    expect(p.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Escalated', status: 'False', reason: 'JudgeSatisfied' }),
    );
    expect(p.status?.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'Evaluated' })]);
  });

  it('writes nothing when the latest verdict is already in status', () => {
    const s = session({
      lastEvaluation: {
        name: 'web-run-1',
        run: 1,
        score: 4,
        recommendation: 'continue',
        outcome: 'success',
        evaluatedAt: 'x',
      },
    });
    expect(plan(observed({ session: s, evaluations: [evaluation(1, verdict(4, 'continue', 'x'))] })).status).toBe(
      undefined,
    );
  });

  it('a failed latest Evaluation sets JudgeFailed on the session, with no Event of its own', () => {
    const failed: EvaluationStatus = {
      phase: 'Failed',
      conditions: [
        {
          type: 'JudgeFailed',
          status: 'True',
          reason: 'Timeout',
          message: 'no answer in 60s',
          lastTransitionTime: 'T0',
        },
      ],
    };
    const p = plan(observed({ evaluations: [evaluation(1, failed)] }));
    expect(p.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'JudgeFailed', status: 'True', reason: 'Timeout' }),
    );
    expect(p.status?.events).toEqual([]);
  });
});

describe('judge plan: one judgement', () => {
  it('nothing to do for a gone or decided Evaluation, or one whose session is gone', () => {
    expect(judgementStep(undefined, session())).toEqual({ kind: 'done' });
    expect(judgementStep(evaluation(1, verdict(3, 'continue', 'x')), session())).toEqual({ kind: 'done' });
    expect(judgementStep(evaluation(1), undefined)).toEqual({ kind: 'done' });
  });

  it('fails an Evaluation started MAX_ATTEMPTS times without a verdict (a controller killed during each)', () => {
    const step = judgementStep(evaluation(1, { phase: 'Judging', attempts: MAX_ATTEMPTS }), session());
    expect(step).toMatchObject({ kind: 'fail', reason: 'TooManyAttempts' });
  });

  it('judges the next attempt, gathering evidence first when the Evaluation has none (OnDemand)', () => {
    expect(judgementStep(evaluation(1, { attempts: 1 }), session())).toEqual({
      kind: 'judge',
      attempt: 2,
      needsEvidence: false,
    });
    expect(judgementStep(evaluation(1, undefined, false), session())).toEqual({
      kind: 'judge',
      attempt: 1,
      needsEvidence: true,
    });
  });

  it('the statuses of each step: Judging with its attempt, Judged clearing JudgeFailed, Failed with no score', () => {
    const s: EvaluationStatus = {
      conditions: [{ type: 'JudgeFailed', status: 'True', reason: 'Timeout', message: 'm', lastTransitionTime: 'T0' }],
    };
    judgingStatus(s, 2, 'openai');
    expect(s).toMatchObject({ phase: 'Judging', attempts: 2, message: 'judging with the openai backend (attempt 2)' });
    const v: Verdict = {
      score: 4,
      outcome: 'success',
      recommendation: 'continue',
      confidence: 0.8,
      accomplishments: ['a'],
      failures: [],
      reasoning: 'done well\nsecond line',
    } as Verdict;
    judgedStatus(s, v, { backend: 'openai', model: 'm1', requests: 1, repaired: false, now: 'T', generation: 1 });
    expect(s).toMatchObject({
      phase: 'Judged',
      score: 4,
      model: 'm1',
      evaluatedAt: 'T',
      message: '4/5 success: done well',
    });
    expect(s.conditions).toContainEqual(expect.objectContaining({ type: 'JudgeFailed', status: 'False' }));
    const f = failedStatus(evaluation(3), 'InvalidOutput', 'bad json', 'openai');
    const st: EvaluationStatus = {};
    f.change(st);
    expect(st).toMatchObject({ phase: 'Failed', message: 'InvalidOutput: bad json', backend: 'openai' });
    expect(st.score).toBeUndefined();
    expect(f.event).toMatchObject({ type: 'Warning', reason: 'JudgeFailed' });
  });
});
