/** The Project kind (crds/projects.yaml is the schema): a directory sessions work in, and what planners read. */
import type { ErrorRetries } from './autopilot.js';
import type { Recommendation } from './evaluation.js';
import type { Condition, Resource } from './types.js';

export type ProjectSpec = {
  path: string;
  /** Higher first; bounded in the CRD. */
  priority?: number;
  /** Goals and context for whoever (a person or a planner) picks work for this project. */
  notes?: string;
  /** Present means blocked: no new sessions start here, and the project is never Stale. */
  blocked?: { reason: string };
  /** Planners leave it alone (no start, stop or restart); people still can. */
  protected?: boolean;
  description?: string;
  /** Idle longer than this (a duration, default 72h) makes the project Stale. */
  staleAfter?: string;
  /** Nodes that have this project's repository (its sessions go only there); none = any node. */
  nodeSelector?: Record<string, string>;
};

/** One judged run of a session of this project (from its Evaluation). */
export type ProjectOutcome = {
  evaluation: string;
  session: string;
  score: number;
  recommendation: Recommendation;
  time: string;
};

export type ProjectStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  exists?: boolean;
  isGitRepo?: boolean;
  git?: { branch?: string; head?: string; dirty?: boolean; lastCommitTime?: string; lastCommitSubject?: string };
  activeSessions?: number;
  /** The later of the last commit and the last run end of its sessions. */
  lastActivity?: string;
  /** Newest first, at most PROJECT_OUTCOMES. */
  recentOutcomes?: ProjectOutcome[];
  /** Recovery restarts of failed runs and whether they escalated (written by the Autopilot). */
  errorRetries?: ErrorRetries;
};

export type Project = Resource<ProjectSpec, ProjectStatus>;

/** How many Evaluation outcomes status.recentOutcomes keeps. */
export const PROJECT_OUTCOMES = 5;
/** Idle time after which a project is Stale when spec.staleAfter is unset (seed 002 §2.5: 3 days). */
export const DEFAULT_STALE_AFTER = '72h';
