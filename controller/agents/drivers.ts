/** Which driver runs an Agent (agents/driver.ts says what a driver is). */
import type { AgentSpec } from '../api/kinds.js';
import { claudeCodeDriver } from './claude-code.js';
import { codexDriver } from './codex.js';
import type { AgentDriver } from './driver.js';
import { geminiCliDriver } from './gemini-cli.js';
import { genericDriver } from './generic.js';

export type { AgentCheck, AgentDriver } from './driver.js';

/** Drivers chosen by the CLI the Agent's detection data names (`detection.agent`). */
const BY_DETECTION: Record<string, AgentDriver> = { codex: codexDriver, 'gemini-cli': geminiCliDriver };

/**
 * Claude Code when the Agent's hooks say so (`hooks: {kind: claude-code}`), Codex or Gemini CLI
 * when its detection data is theirs, else the generic driver.
 */
export function driverFor(agent: AgentSpec | undefined): AgentDriver {
  if (claudeCodeDriver.hooks(agent)) return claudeCodeDriver;
  const named = agent?.detection?.agent;
  return (typeof named === 'string' && Object.hasOwn(BY_DETECTION, named) && BY_DETECTION[named]) || genericDriver;
}
