/**
 * The driver for any agent CLI orchctl has no special knowledge of (Codex, Gemini CLI, Aider, a
 * shell): the launch adds nothing and delivery is confirmed on the screen (the Agent's detection
 * data). An agent that reports through `orchctl hook` itself and announces a transcript there
 * (a SessionStart payload's `transcript_path`) is read as the JSONL transcript shape Claude Code
 * established — the one shape hook-reporting tools share today.
 */
import { jsonlTranscript } from './claude-code.js';
import type { AgentDriver } from './driver.js';

export const genericDriver: AgentDriver = {
  name: 'generic',
  launch: () => ({ args: [], files: {} }),
  hooks: () => false,
  transcript: jsonlTranscript,
};
