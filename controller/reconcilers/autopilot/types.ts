/**
 * What a planner sees and what it proposes. The reconciler builds the view from its caches (one
 * snapshot per think), a planner turns it into proposals, and the guardrails and the gate
 * (plan.ts, gate.ts) turn proposals into Decisions. A planner never writes anything.
 */
import type { AutonomyLevel, AutopilotAction, ErrorClass } from '../../api/autopilot.js';
import type { Phase } from '../../api/phases.js';

/** One session of a project, as far as planning goes. */
export interface SessionView {
  name: string;
  phase: Phase;
  run: number;
  startTime?: string;
  /** Minutes since the current run started (active sessions). */
  runningMinutes?: number;
  /** idle, busy, waiting... when the agent reports it. */
  agentState?: string;
  /** Created by this autopilot. */
  ours: boolean;
  /** Held by orchctl: RateLimited or BudgetExceeded (status.pause; resumes by itself), or Frozen (orchctl freeze). */
  paused?: string;
}

/** A failed run the autopilot has not dealt with yet, classified (classify.ts). */
export interface FailureView {
  session: string;
  run: number;
  phase: Phase;
  exitCode?: number;
  endedAt?: string;
  class: ErrorClass;
  /** The line(s) the class was read from (agent-written: untrusted, fenced in an LLM prompt). */
  evidence: string;
  /** The session's own Escalated condition (its restart policy gave up): not retried again. */
  sessionEscalated?: string;
}

export interface ProjectView {
  name: string;
  priority: number;
  /** Goals text (person-written, but fenced in an LLM prompt like any free text). */
  notes?: string;
  blocked?: string;
  /** spec.protected or matched by guardrails.protectedProjects. */
  protected: boolean;
  stale: boolean;
  /** Days since lastActivity (or creation), one decimal. */
  idleDays: number;
  lastActivity?: string;
  sessions: SessionView[];
  /** The newest run's end, when the project has no active session. */
  lastRun?: { session: string; run: number; phase: Phase; endedAt?: string; summary?: string };
  failure?: FailureView;
  /** Newest first: score 1-5 and the judge's recommendation. */
  recentOutcomes: { score: number; recommendation: string; time: string; summary?: string }[];
  /** timeBoxes / maxTimeBoxes: continuations of runs stopped at their time box, counted apart. */
  errorRetries: { count: number; max: number; timeBoxes: number; maxTimeBoxes: number; escalated?: string };
}

export interface PlannerInput {
  autopilot: string;
  namespace: string;
  level: AutonomyLevel;
  now: number;
  /** The think interval (spec.interval), for the planner's nextThinkIn and its bounds. */
  intervalMs?: number;
  allowedActions: AutopilotAction[];
  projects: ProjectView[];
  capacity: {
    activeSessions: number;
    maxActiveSessions: number;
    freeMemoryMB?: number;
    minFreeMemoryMB: number;
    /** How many starts this think may still make. */
    startsLeft: number;
  };
}

export interface Proposal {
  action: AutopilotAction;
  project?: string;
  session?: string;
  reason: string;
  /** 1 (most urgent) .. 5. */
  priority: number;
  prompt?: string;
  message?: string;
}

export interface PlanResult {
  proposals: Proposal[];
  summary?: string;
  /** When the planner wants to think again (a Go duration); absent keeps the interval. Bounded by nextThinkDelay. */
  nextThinkIn?: string;
}

export interface Planner {
  /** heuristic | command | openai | anthropic */
  readonly name: string;
  readonly model?: string;
  plan(input: PlannerInput, signal?: AbortSignal): Promise<PlanResult>;
}
