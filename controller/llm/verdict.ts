/**
 * The judge's contract, shared by every backend: the evidence it is given (built by
 * controller/reconcilers/judge/evidence.ts, bounded in size) and the JSON Schema its verdict must
 * match (seed 000's EVALUATION_SCHEMA plus outcome and confidence). The schema is written to be
 * accepted by OpenAI's strict structured outputs (every property required, no extra ones).
 */

export const RECOMMENDATIONS = ['continue', 'retry', 'escalate', 'complete'] as const;
export const OUTCOMES = ['success', 'partial', 'failure', 'abandoned'] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];
export type Outcome = (typeof OUTCOMES)[number];

export interface Verdict {
  score: number;
  recommendation: Recommendation;
  outcome: Outcome;
  confidence: number;
  accomplishments: string[];
  failures: string[];
  reasoning: string;
}

export const VERDICT_SCHEMA_NAME = 'session_evaluation';

export const VERDICT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['score', 'recommendation', 'outcome', 'confidence', 'accomplishments', 'failures', 'reasoning'],
  properties: {
    score: { type: 'integer', minimum: 1, maximum: 5, description: 'Rubric score, 1 (failed) to 5 (excellent).' },
    recommendation: { type: 'string', enum: [...RECOMMENDATIONS], description: 'What to do next.' },
    outcome: { type: 'string', enum: [...OUTCOMES], description: 'How the run ended, judged.' },
    confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Confidence in this verdict, 0 to 1.' },
    accomplishments: {
      type: 'array',
      maxItems: 10,
      items: { type: 'string', maxLength: 300 },
      description: 'What the run achieved.',
    },
    failures: {
      type: 'array',
      maxItems: 10,
      items: { type: 'string', maxLength: 300 },
      description: 'What went wrong or is left undone.',
    },
    reasoning: { type: 'string', maxLength: 2000, description: 'Short explanation of the score.' },
  },
};

export type TestSignal = 'passing' | 'failing' | 'none';

/** Objective facts about one run, plus a few bounded excerpts of untrusted text. */
export interface JudgeEvidence {
  /** namespace/name */
  session: string;
  run: number;
  trigger: 'SessionEnded' | 'OnDemand' | 'Sampled';
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
}
