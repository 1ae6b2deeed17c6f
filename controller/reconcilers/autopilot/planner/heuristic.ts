/**
 * The default planner: offline and deterministic (the same view gives the same plan).
 *  - start the highest-priority stale project that is not blocked, protected or escalated, while
 *    capacity allows (seed 002 §2.5), longest idle first among equals;
 *  - stop this autopilot's own active sessions in a project that became blocked;
 *  - record a skip for a stale project it leaves alone because it is protected (so `get decisions`
 *    says why nothing happened there).
 * Failed runs are not its business: recovery (plan.ts) proposes those restarts and escalations
 * before any planner is asked. It reads no free text, so nothing an agent writes can steer it.
 * It gives no nextThinkIn: its thinks cost nothing, so the interval (and the events) decide when.
 */
import type { PlannerInput, PlanResult, Planner, Proposal } from '../types.js';

export class HeuristicPlanner implements Planner {
  readonly name = 'heuristic';
  readonly model = undefined;

  async plan(input: PlannerInput): Promise<PlanResult> {
    return planHeuristic(input);
  }
}

export function planHeuristic(input: PlannerInput): PlanResult {
  const proposals: Proposal[] = [];
  for (const p of input.projects) {
    if (!p.blocked) continue;
    for (const s of p.sessions)
      if (s.ours && (s.phase === 'Running' || s.phase === 'Starting'))
        proposals.push({
          action: 'stop',
          project: p.name,
          session: s.name,
          reason: `project ${p.name} is blocked`,
          priority: 2,
        });
  }
  for (const p of input.projects)
    if (p.stale && p.protected)
      proposals.push({
        action: 'skip',
        project: p.name,
        reason: `stale (idle ${p.idleDays} days) but protected: left alone`,
        priority: 5,
      });
  const candidates = input.projects
    .filter((p) => p.stale && !p.blocked && !p.protected && !p.errorRetries.escalated && !p.failure)
    .sort((a, b) => b.priority - a.priority || b.idleDays - a.idleDays || a.name.localeCompare(b.name));
  for (const p of candidates.slice(0, input.capacity.startsLeft))
    proposals.push({
      action: 'start',
      project: p.name,
      reason: `stale: idle ${p.idleDays} days, priority ${p.priority}`,
      priority: 3,
    });
  const summary = candidates.length
    ? `${candidates.length} stale project(s); ${Math.min(candidates.length, input.capacity.startsLeft)} to start`
    : 'nothing stale to start';
  return { proposals, summary };
}
