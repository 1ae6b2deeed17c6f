/**
 * The judge's contract, shared by every backend: the evidence it is given (built by
 * controller/reconcilers/judge/evidence.ts, bounded in size) and the JSON Schema its verdict must
 * match (seed 000's EVALUATION_SCHEMA plus outcome and confidence). The schema is written to be
 * accepted by OpenAI's strict structured outputs (every property required, no extra ones).
 */

import { OUTCOMES, RECOMMENDATIONS } from '../api/evaluation.js';

// The verdict's vocabulary is part of the Evaluation API (its status holds the verdict).
export { OUTCOMES, RECOMMENDATIONS };
export type { JudgeEvidence, Outcome, Recommendation, TestSignal, Verdict } from '../api/evaluation.js';

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
