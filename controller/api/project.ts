/** The Project kind (crds/projects.yaml is the schema): a directory sessions work in, and what planners read. */
import type { ProjectSchemaSpec, ProjectSchemaStatus } from './generated/project.js';
import type { Recommendation } from './evaluation.js';
import type { Resource } from './types.js';

export type ProjectSpec = ProjectSchemaSpec;

/** One judged run of a session of this project (from its Evaluation). */
export type ProjectOutcome = {
  evaluation: string;
  session: string;
  score: number;
  recommendation: Recommendation;
  time: string;
};

export type ProjectStatus = ProjectSchemaStatus;

export type Project = Resource<ProjectSpec, ProjectStatus>;

/** How many Evaluation outcomes status.recentOutcomes keeps. */
export const PROJECT_OUTCOMES = 5;
/** Idle time after which a project is Stale when spec.staleAfter is unset (seed 002 §2.5: 3 days). */
export const DEFAULT_STALE_AFTER = '72h';
