/**
 * The Autopilot's planner from its spec.planner: the heuristic one (offline, deterministic) when no
 * backend or `heuristic` is set, else an LLM planner on the configured backend.
 */
import type { PlannerSpec } from '../../../api/autopilot.js';
import { resolveJudgeConfig } from '../../../llm/config.js';
import type { Planner } from '../types.js';
import { HeuristicPlanner } from './heuristic.js';
import { LlmPlanner, type PlannerOptions } from './llm.js';

export { HeuristicPlanner } from './heuristic.js';
export { LlmPlanner, type PlannerOptions } from './llm.js';

export function createPlanner(spec: PlannerSpec | undefined, opts: PlannerOptions = {}): Planner {
  return resolveJudgeConfig(spec).backend === 'heuristic' ? new HeuristicPlanner() : new LlmPlanner(spec, opts);
}
