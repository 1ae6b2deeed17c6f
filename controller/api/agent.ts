/** The Agent kind (crds/agents.yaml is the schema): how one agent CLI is launched, fed a prompt and read. */
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
  /**
   * Variables of the controller's environment the agent is given besides the base: names, or
   * prefixes ending in `*` (api/environment.ts). Nothing else is inherited.
   */
  inheritEnv?: string[];
  promptDelivery?: PromptDelivery;
  promptFlag?: string;
  systemPromptFile?: string;
  readyTimeout?: string;
  submitKeys?: string[];
  stop?: { keys?: string[]; gracePeriod?: string };
  /** tmux keys that interrupt the agent's current turn without ending it (a Hard budget; default [C-c]). */
  interruptKeys?: string[];
  /** Detection patterns keyed by CLI version: free-form data, checked by agents/ when applied. */
  detection?: Record<string, unknown>;
  autoAnswer?: string[];
  /** Hooks the controller installs for the agent: free-form, read by the agent's driver. */
  hooks?: Record<string, unknown>;
  /** Prices for status.usage.costUSD, first match wins (an exact name before any glob). */
  pricing?: ModelPrice[];
};

/** USD per million tokens for the models matching `model` (exact, or a glob where `*` is any text). */
export type ModelPrice = {
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number;
  cacheWritePerMTok: number;
};

export type AgentStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  version?: string;
  installed?: boolean;
};

export type Agent = Resource<AgentSpec, AgentStatus>;
