/**
 * The driver for OpenAI's Codex CLI (`codex`, npm @openai/codex; Agent `detection.agent: codex`).
 * Codex keeps its records in CODEX_HOME (default ~/.codex): `history.jsonl` gains one line per
 * prompt the TUI submitted (`{"session_id","ts","text"}`, recorded from 0.171.0 in
 * docs/notes/codex.md) — that, not the screen, confirms a delivery: Codex's paste-burst detection
 * can take an Enter that follows typed text as part of the paste.
 */
import path from 'node:path';
import type { AgentDriver } from './driver.js';
import { genericDriver } from './generic.js';

/** CODEX_HOME as the agent will see it, else ~/.codex of its HOME. */
export function codexHome(env: Record<string, string | undefined>): string | undefined {
  if (env.CODEX_HOME) return env.CODEX_HOME;
  return env.HOME ? path.join(env.HOME, '.codex') : undefined;
}

export const codexDriver: AgentDriver = {
  ...genericDriver,
  name: 'codex',
  launch: (_agent, facts) => {
    const records = codexHome(facts.env);
    return { args: [], files: {}, ...(records ? { records } : {}) };
  },
  promptRecords: (records) => ({
    files: () => [path.join(records, 'history.jsonl')],
    texts: (line) => (typeof line.text === 'string' ? [line.text] : []),
  }),
};
