/**
 * The SessionPolicy kind (crds/sessionpolicies.yaml is the schema): limits and automation settings
 * for the AgentSessions it selects by label. Which policy governs a session: api/policy.ts.
 */
import type { InterventionType } from './assessment.js';
import type { LabelSelectorSpec } from './labels.js';
import type { TimeoutAction } from './session.js';
import type { Condition, Resource } from './types.js';

export type Autonomy = 'observe' | 'suggest' | 'act';

export type BreakerPolicy = {
  enabled?: boolean;
  failureThreshold?: number;
  correctionThreshold?: number;
  correctionWindow?: string;
  frustrationThreshold?: number;
  noProgressTurns?: number;
  cooldown?: string;
  /** The text sent for each intervention type, replacing the default. */
  interventions?: Partial<Record<InterventionType, string>>;
};

export type CheckpointPolicy = {
  enabled?: boolean;
  messageThreshold?: number;
  interval?: string;
  onCommit?: boolean;
  taskBoundaryPatterns?: string[];
  summarizer?: 'offline' | 'judge';
};

export const JUDGE_BACKENDS = ['heuristic', 'command', 'openai', 'anthropic'] as const;
export type JudgeBackend = (typeof JUDGE_BACKENDS)[number];

export type JudgePolicy = {
  enabled?: boolean;
  backend?: JudgeBackend;
  model?: string;
  endpoint?: string;
  command?: string[];
  /** The name of the environment variable holding the API key (never the key). */
  apiKeyEnv?: string;
  timeout?: string;
  maxRetries?: number;
  maxConcurrent?: number;
};

export type SamplingPolicy = {
  burnIn?: number;
  baseRate?: number;
  longSessionMessages?: number;
  onBreaker?: boolean;
  onFeedback?: boolean;
};

export type DetectorPolicy = {
  enabled?: boolean;
  frustrationPatterns?: string[];
  satisfactionPatterns?: string[];
  correctionPatterns?: string[];
  emaAlpha?: number;
  stalledAfter?: string;
};

export type SessionPolicySpec = {
  selector?: LabelSelectorSpec;
  priority?: number;
  maxConcurrentSessions?: number;
  minFreeMemoryMB?: number;
  minFreeDiskMB?: number;
  maxLoadPerCPU?: number;
  maxSessionDuration?: string;
  timeoutAction?: TimeoutAction;
  maxRestarts?: number;
  cooldown?: string;
  autonomy?: Autonomy;
  breaker?: BreakerPolicy;
  checkpoints?: CheckpointPolicy;
  judge?: JudgePolicy;
  sampling?: SamplingPolicy;
  detector?: DetectorPolicy;
  /** Free-form until notifications land. */
  notifications?: Record<string, unknown>;
};

export type SessionPolicyStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  matchedSessions?: number;
};

export type SessionPolicy = Resource<SessionPolicySpec, SessionPolicyStatus>;
