/** The Evaluation kind's types and vocabulary live in api/evaluation.ts; re-exported for the judge's modules. */
export {
  hasVerdict,
  isFailed,
  runEvaluationName,
  type Evaluation,
  type EvaluationSpec,
  type EvaluationStatus,
  type EvaluationTrigger,
  type LastEvaluation,
} from '../../api/evaluation.js';
