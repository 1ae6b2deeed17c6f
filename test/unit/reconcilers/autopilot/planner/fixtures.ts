/** Planner inputs for the planner tests: a small world as the autopilot's view() would see it. */
import type { PlannerInput, ProjectView } from '../../../../../controller/reconcilers/autopilot/types.js';

export const NOW = Date.parse('2026-06-02T07:00:00Z');

export function project(name: string, over: Partial<ProjectView> = {}): ProjectView {
  return {
    name,
    priority: 1,
    protected: false,
    stale: false,
    idleDays: 0.5,
    sessions: [],
    recentOutcomes: [],
    errorRetries: { count: 0, max: 3, timeBoxes: 0, maxTimeBoxes: 3 },
    ...over,
  };
}

export function plannerInput(projects: ProjectView[], over: Partial<PlannerInput> = {}): PlannerInput {
  return {
    autopilot: 'pilot',
    namespace: 'default',
    level: 'moderate',
    now: NOW,
    allowedActions: ['start', 'stop', 'restart', 'notify', 'skip'],
    projects,
    capacity: { activeSessions: 1, maxActiveSessions: 4, freeMemoryMB: 8192, minFreeMemoryMB: 2048, startsLeft: 1 },
    ...over,
  };
}

/** Four projects: a stale one, a busy one, a failed one and a protected one. */
export function world(notes = 'Ship the CSV export; then tidy the docs.'): PlannerInput {
  return plannerInput([
    project('alpha', { priority: 5, stale: true, idleDays: 4.5, notes, lastActivity: '2026-05-28T19:00:00Z' }),
    project('beta', {
      priority: 3,
      sessions: [{ name: 'beta-1', phase: 'Running', run: 2, runningMinutes: 12, agentState: 'busy', ours: true }],
    }),
    project('gamma', {
      priority: 2,
      sessions: [{ name: 'gamma-1', phase: 'Failed', run: 1, ours: true }],
      lastRun: {
        session: 'gamma-1',
        run: 1,
        phase: 'Failed',
        endedAt: '2026-06-02T06:30:00Z',
        summary: 'Stuck on npm.',
      },
      failure: {
        session: 'gamma-1',
        run: 1,
        phase: 'Failed',
        exitCode: 1,
        class: 'Transient',
        evidence: 'Error: connect ETIMEDOUT 203.0.113.7:443',
      },
      errorRetries: { count: 1, max: 3, timeBoxes: 0, maxTimeBoxes: 3 },
      recentOutcomes: [{ score: 2, recommendation: 'retry', time: '2026-06-02T06:31:00Z', summary: 'Network failed.' }],
    }),
    project('prod', { priority: 4, protected: true, stale: true, idleDays: 9 }),
  ]);
}
