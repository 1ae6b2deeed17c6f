/** The Project kind (crds/projects.yaml is the schema): a directory sessions work in. */
import type { Condition, Resource } from './types.js';

export type ProjectSpec = {
  path: string;
  priority?: number;
  blocked?: boolean;
  protected?: boolean;
  description?: string;
  staleAfter?: string;
};

export type ProjectStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  exists?: boolean;
  isGitRepo?: boolean;
  git?: { branch?: string; head?: string; dirty?: boolean; lastCommitTime?: string; lastCommitSubject?: string };
  activeSessions?: number;
};

export type Project = Resource<ProjectSpec, ProjectStatus>;
