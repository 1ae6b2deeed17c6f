/** The Evaluation kind's shape (crds/evaluations.yaml is the schema). */
import type { Condition, Resource } from '../../api/types.js';
import type { JudgeEvidence, Outcome, Recommendation } from '../../llm/verdict.js';

export type EvaluationTrigger = 'SessionEnded' | 'OnDemand' | 'Sampled';

export interface EvaluationSpec {
  sessionRef: string;
  run: number;
  trigger?: EvaluationTrigger;
  projectRef?: string;
  evidence?: JudgeEvidence;
  [more: string]: unknown;
}

export interface EvaluationStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: 'Pending' | 'Judging' | 'Judged' | 'Failed';
  message?: string;
  attempts?: number;
  usage?: { inputTokens?: number; outputTokens?: number };
  score?: number;
  recommendation?: Recommendation;
  outcome?: Outcome;
  confidence?: number;
  accomplishments?: string[];
  failures?: string[];
  reasoning?: string;
  backend?: string;
  model?: string;
  evaluatedAt?: string;
  [more: string]: unknown;
}

export type Evaluation = Resource<EvaluationSpec, EvaluationStatus>;

/** The summary kept in AgentSession status.lastEvaluation. */
export interface LastEvaluation {
  name: string;
  run: number;
  score: number;
  recommendation: Recommendation;
  outcome: Outcome;
  evaluatedAt: string;
}

export const hasVerdict = (e: Evaluation) => typeof e.status?.score === 'number';
export const isFailed = (e: Evaluation) =>
  e.status?.phase === 'Failed' ||
  e.status?.conditions?.some((c) => c.type === 'JudgeFailed' && c.status === 'True') === true;

/** Deterministic name of the evaluation of an ended run: one per run, whoever creates it. */
export const runEvaluationName = (session: string, run: number) => `${session}-run-${run}`;
