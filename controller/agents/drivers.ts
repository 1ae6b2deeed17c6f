/** Which driver runs an Agent (agents/driver.ts says what a driver is). */
import type { AgentSpec } from '../api/kinds.js';
import { claudeCodeDriver } from './claude-code.js';
import type { AgentDriver } from './driver.js';
import { genericDriver } from './generic.js';

export type { AgentDriver } from './driver.js';

/** Claude Code when the Agent's hooks say so (`hooks: {kind: claude-code}`), else the generic driver. */
export function driverFor(agent: AgentSpec | undefined): AgentDriver {
  return claudeCodeDriver.hooks(agent) ? claudeCodeDriver : genericDriver;
}
