/** The Agent kind (crds/agents.yaml is the schema): how one agent CLI is launched, fed a prompt and read. */
import type { AgentSchemaSpec, AgentSchemaStatus } from './generated/agent.js';
import type { Resource } from './types.js';

export type EnvVar = {
  name: string;
  value?: string;
  /** Read when a run starts: a variable of the controller's environment, or a file. */
  valueFrom?: { env?: string; file?: string };
};

export type PromptDelivery = 'paste' | 'argument' | 'stdin' | 'none';

export type AgentSpec = AgentSchemaSpec;

/** USD per million tokens for the models matching `model` (exact, or a glob where `*` is any text). */
export type ModelPrice = {
  model: string;
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok: number;
  cacheWritePerMTok: number;
};

export type AgentStatus = AgentSchemaStatus;

export type Agent = Resource<AgentSpec, AgentStatus>;
