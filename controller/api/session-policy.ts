/**
 * The SessionPolicy kind (crds/sessionpolicies.yaml is the schema): limits and automation settings
 * for the AgentSessions it selects by label. Which policy governs a session: api/policy.ts.
 */
import type { SessionPolicySchemaSpec } from './generated/sessionpolicy.js';
import type { InterventionType } from './assessment.js';
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

/** What to do when the context window fills: docs/long-running.md. */
export type ContextActionName = 'Compact' | 'ClearAndRehydrate';
export type ContextPolicy = {
  /** Record a ContextWindow Event every this many percent (default 10). */
  reportEvery?: number;
  /** Act at this percent of the window (default 50, as seed 003). */
  checkpointAt?: number;
  action?: ContextActionName;
  /** Text after `/compact` (what the summary should keep). */
  compactFocus?: string;
  /** How long to wait for the handoff file and the Stop hook (default 3m). */
  handoffTimeout?: string;
  /** At most this many context actions in one run (default 3). */
  maxActionsPerRun?: number;
};

/** A rate limit pauses the session until it resets: docs/long-running.md. */
export type RateLimitPolicy = {
  /** Default true. False: a rate limit is only reported (QuotaExhausted), as before. */
  pause?: boolean;
  /** Added at random (0..jitter) to the reset time, so sessions do not all resume at once (default 30s). */
  jitter?: string;
  /** Used when no reset time can be read (default 15m). */
  defaultWait?: string;
  /** Whether a paused session keeps its maxConcurrentSessions slot (default true). */
  holdSlot?: boolean;
  /** Sent (verified delivery) when the pause ends. */
  continueMessage?: string;
};

/** A token or cost budget across every session the policy selects. */
export type BudgetPolicy = {
  maxTokens?: number;
  maxCostUSD?: number;
  /** The window usage is summed over (default 24h). */
  window?: string;
  /** Pause: held at their next idle point until the window has room; Stop: stopped there. */
  action?: 'Pause' | 'Stop';
  /**
   * IdlePoint (default): the action waits for the agent's next idle point, never mid-turn. Hard: at
   * the limit a busy agent is interrupted (its Agent's interruptKeys) and paused or stopped at once.
   */
  enforce?: 'IdlePoint' | 'Hard';
};

export type SessionPolicySpec = SessionPolicySchemaSpec;

/** status.budget: what the selected sessions used in the window, written by the policy reconciler. */
export type BudgetStatus = {
  windowStart: string;
  usedTokens: number;
  usedCostUSD: number;
  /** Whether usedCostUSD covers every session (false when some model is not priced). */
  priced: boolean;
  exceeded: boolean;
  /** "1.2M/2M" or "$3.10/$5.00", for the USED/BUDGET column. */
  display: string;
  since?: string;
};

export type SessionPolicyStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  matchedSessions?: number;
  budget?: BudgetStatus;
};

export type SessionPolicy = Resource<SessionPolicySpec, SessionPolicyStatus>;
