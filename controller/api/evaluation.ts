/**
 * The Evaluation kind (crds/evaluations.yaml is the schema): one judged run of an AgentSession,
 * owned by it. Also the judge's part of the session's status (status.lastEvaluation) and the
 * verdict vocabulary every judge backend answers in.
 */
import type { EvaluationSchemaStatus } from './generated/evaluation.js';
import { API_VERSION, type ObjectMeta, type Resource } from './types.js';

export const RECOMMENDATIONS = ['continue', 'retry', 'escalate', 'complete'] as const;
export const OUTCOMES = ['success', 'partial', 'failure', 'abandoned'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];
export type Outcome = (typeof OUTCOMES)[number];

export type Verdict = {
  score: number;
  recommendation: Recommendation;
  outcome: Outcome;
  confidence: number;
  accomplishments: string[];
  failures: string[];
  reasoning: string;
};

export type EvaluationTrigger = 'SessionEnded' | 'OnDemand' | 'Sampled';

export type TestSignal = 'passing' | 'failing' | 'none';

/** Objective facts about one run, plus a few bounded excerpts of untrusted text. */
export type JudgeEvidence = {
  /** namespace/name */
  session: string;
  run: number;
  trigger: EvaluationTrigger;
  /** The phase the run ended in (Succeeded, Failed, Killed, TimedOut), or the current one for a run still going. */
  phase: string;
  /** status.reason when it ended: Completed, Error, TimedOut, Stopped, TmuxSessionLost, ... */
  reason?: string;
  exitCode?: number;
  durationSeconds?: number;
  maxDurationSeconds?: number;
  restarts?: number;
  /** The task prompt (user-written), shortened. */
  task?: string;
  /** Git progress headBefore..head; absent when the workdir is not a git repository. */
  git?: {
    headBefore?: string;
    head?: string;
    commits: number;
    insertions: number;
    deletions: number;
    filesChanged: number;
    /** Agent-written: untrusted. */
    lastCommitSubject?: string;
  };
  /** From the session's event log (tool results of this run). */
  tools?: {
    calls: number;
    failures: number;
    /** Failures in a row at the end of the run. */
    consecutiveFailures: number;
    /** The command that failed most often, when it failed at least twice. */
    repeatedFailure?: { command: string; count: number };
  };
  tests?: { signal: TestSignal; passed?: number; failed?: number; source?: string };
  /** Circuit-breaker summary from status.breaker (issue #6), when present. */
  breaker?: { state?: string; openings?: number; reason?: string };
  /** Detector summary from status.detector (issue #6): its scalar fields, when present. */
  detector?: Record<string, string | number | boolean>;
  /** result.json as the agent wrote it (untrusted), as bounded JSON text, and its status word. */
  result?: { status?: string; text: string };
  /** Untrusted. */
  lastAssistantMessage?: string;
  /** Untrusted, ANSI-stripped. */
  outputTail?: string;
  /** Fields that were shortened to fit the limits. */
  truncated?: string[];
};

export type EvaluationSpec = {
  sessionRef: string;
  run: number;
  trigger?: EvaluationTrigger;
  projectRef?: string;
  evidence?: JudgeEvidence;
};

export type EvaluationPhase = 'Pending' | 'Judging' | 'Judged' | 'Failed';

export type EvaluationStatus = EvaluationSchemaStatus;

export type Evaluation = Resource<EvaluationSpec, EvaluationStatus>;

/** The summary kept in AgentSession status.lastEvaluation (written by the judge only). */
export type LastEvaluation = {
  name: string;
  run: number;
  score: number;
  recommendation: Recommendation;
  outcome: Outcome;
  /** The verdict's confidence, when the writer copied it (`orchctl assess history` shows it). */
  confidence?: number;
  evaluatedAt: string;
};

/** Labels on every Evaluation: which session and run it judges, and why it was created. */
export const SESSION_LABEL = 'orchctl.io/session';
export const RUN_LABEL = 'orchctl.io/run';
export const TRIGGER_LABEL = 'orchctl.io/trigger';

export const hasVerdict = (e: Evaluation) => typeof e.status?.score === 'number';
export const isFailed = (e: Evaluation) =>
  e.status?.phase === 'Failed' ||
  e.status?.conditions?.some((c) => c.type === 'JudgeFailed' && c.status === 'True') === true;

/** Deterministic name of the evaluation of an ended run: one per run, whoever creates it. */
export const runEvaluationName = (session: string, run: number) => `${session}-run-${run}`;

/**
 * An Evaluation object for one run of a session, owned by it (deleted with it). The session is
 * taken by shape (its metadata and projectRef), so the Evaluation types need not import the session's.
 */
export function newEvaluation(
  session: { metadata: ObjectMeta; spec?: { projectRef?: string } },
  name: string,
  run: number,
  trigger: EvaluationTrigger,
  evidence?: JudgeEvidence,
): Evaluation {
  const projectRef = session.spec?.projectRef;
  return {
    apiVersion: API_VERSION,
    kind: 'Evaluation',
    metadata: {
      name,
      namespace: session.metadata.namespace ?? 'default',
      labels: { [SESSION_LABEL]: session.metadata.name, [RUN_LABEL]: String(run), [TRIGGER_LABEL]: trigger },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'AgentSession',
          name: session.metadata.name,
          uid: session.metadata.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      sessionRef: session.metadata.name,
      run,
      trigger,
      ...(projectRef ? { projectRef } : {}),
      ...(evidence ? { evidence } : {}),
    },
  };
}
