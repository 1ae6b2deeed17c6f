/** TypeScript shapes of the built-in kinds' specs and statuses (the CRDs in crds/ are the schema). */
import type { LabelSelectorSpec } from './labels.js';
import type { Condition, Resource } from './types.js';

export type EnvVar = {
  name: string;
  value?: string;
  /** Read when a run starts: a variable of the controller's environment, or a file. */
  valueFrom?: { env?: string; file?: string };
};

export type PromptDelivery = 'paste' | 'argument' | 'stdin' | 'none';

export type AgentSpec = {
  command: string[];
  args?: string[];
  env?: EnvVar[];
  promptDelivery?: PromptDelivery;
  promptFlag?: string;
  systemPromptFile?: string;
  readyTimeout?: string;
  submitKeys?: string[];
  stop?: { keys?: string[]; gracePeriod?: string };
  detection?: Record<string, unknown>;
  autoAnswer?: string[];
  hooks?: Record<string, unknown>;
};

export type ProjectSpec = {
  path: string;
  priority?: number;
  blocked?: boolean;
  protected?: boolean;
  description?: string;
  staleAfter?: string;
};

export type AgentSessionSpec = {
  agentRef?: string;
  agent?: AgentSpec;
  projectRef?: string;
  workdir?: string;
  prompt?: string;
  promptFile?: string;
  desiredState?: 'Running' | 'Stopped';
  maxDuration?: string;
  timeoutAction?: 'Stop' | 'Warn';
  restartPolicy?: 'Never' | 'OnFailure' | 'Always';
  maxRestarts?: number;
  restartBackoff?: { initialDelay?: string; maxDelay?: string };
  worktree?: { enabled?: boolean; branch?: string; baseRef?: string };
  policyRef?: string;
  env?: EnvVar[];
};

export type GitStatus = {
  head?: string;
  branch?: string;
  commits?: number;
  insertions?: number;
  deletions?: number;
  filesChanged?: number;
  lastCommit?: { sha: string; subject: string; time: string };
};

export type AgentSessionStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: string;
  run?: number;
  restarts?: number;
  tmuxSession?: string;
  workspace?: string;
  workdir?: string;
  startTime?: string;
  completionTime?: string;
  nextRestartTime?: string;
  deadlineTime?: string;
  stopRequestTime?: string;
  exitCode?: number;
  reason?: string;
  message?: string;
  lastOutput?: string;
  headBefore?: string;
  git?: GitStatus;
  result?: Record<string, unknown>;
  lifecycle?: Record<string, unknown>;
  [more: string]: unknown;
};

export type SessionPolicySpec = {
  selector?: LabelSelectorSpec;
  priority?: number;
  maxConcurrentSessions?: number;
  minFreeMemoryMB?: number;
  minFreeDiskMB?: number;
  maxLoadPerCPU?: number;
  maxSessionDuration?: string;
  timeoutAction?: 'Stop' | 'Warn';
  maxRestarts?: number;
  cooldown?: string;
  autonomy?: string;
  [more: string]: unknown;
};

export type Agent = Resource<AgentSpec>;
export type Project = Resource<ProjectSpec>;
export type AgentSession = Resource<AgentSessionSpec, AgentSessionStatus>;
export type SessionPolicy = Resource<SessionPolicySpec>;
