/**
 * The driver for any agent CLI orchctl has no special knowledge of (Codex, Gemini CLI, Aider, a
 * shell): the launch adds nothing, there are no hooks and no transcript, so delivery is confirmed
 * on the screen (the Agent's detection data) and state comes from the pane alone.
 */
import type { AgentDriver } from './driver.js';

export const genericDriver: AgentDriver = {
  name: 'generic',
  launch: () => ({ args: [], files: {} }),
  hooks: () => false,
};
