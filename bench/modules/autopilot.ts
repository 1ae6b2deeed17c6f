/**
 * The autopilot (issue 13): think + execute with the heuristic planner over 100 Projects (goal
 * ≤ 100 ms per think), and an executed start Decision → its session Running through a real
 * controller (goal ≤ 0.5 s). Each against a baseline measured in the same run: see
 * autopilot-think.ts and autopilot-start.ts.
 */
import type { Bench } from '../types.js';
import { thinkAndExecute } from './autopilot-think.js';
import { decisionToRunning } from './autopilot-start.js';

export const autopilotBench: Bench = {
  name: 'autopilot',
  description: 'autopilot think+execute over 100 projects (p50/p99), executed Decision → session Running',
  async run() {
    const think = await thinkAndExecute();
    const start = await decisionToRunning();
    const r = think.reconcileMs;
    const d = start.decisionToRunningMs;
    const p = start.personApplyToRunningMs;
    return {
      thinkAndExecute: think,
      decisionToRunning: start,
      goals: {
        think: `reconcile (think + one transaction) p50 ${r.median} ms, p99 ${r.p99} ms (goal ≤ 100 ms)`,
        start: `executedAt → Running p50 ${d.median} ms, p99 ${d.p99} ms (goal ≤ 500 ms)`,
      },
      summary:
        `think+execute over ${think.projects} projects p50 ${r.median} ms, p99 ${r.p99} ms ` +
        `(same I/O alone p50 ${think.baselineMs.median} ms, p99 ${think.baselineMs.p99}; ` +
        `${think.p50Ratio}× / ${think.p99Ratio}×; goal ≤ 100 ms); ` +
        `decision → Running p50 ${d.median} ms, p99 ${d.p99} ms (person's apply → Running p50 ${p.median}, ` +
        `p99 ${p.p99}; ${start.p50Ratio}× / ${start.p99Ratio}×; goal ≤ 500 ms)`,
    };
  },
};
