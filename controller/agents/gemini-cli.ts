/**
 * The driver for Google's Gemini CLI (`gemini`, npm @google/gemini-cli; Agent `detection.agent:
 * gemini-cli`). Each run gets its own `--session-id`, so its chat record is known:
 * `<home>/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`, where home is
 * GEMINI_CLI_HOME or HOME (0.61.0's Storage) and <project> a short name Gemini CLI picks per
 * directory. A submitted prompt is appended there as `{"type":"user","content":[{"text":…}]}`
 * before the model is called — that, not the screen, confirms a delivery: Gemini CLI turns an
 * Enter that it reads within 40 ms of a paste into a newline (its paste protection), which on a
 * loaded machine is an Enter sent 200 ms later, and the screen moves all the same.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AgentDriver } from './driver.js';
import { genericDriver } from './generic.js';

/** Flags with which the Agent already chooses the session (then orchctl does not). */
const SESSION_FLAGS = new Set(['--session-id', '--resume', '-r', '--session-file']);

/** The .gemini directory the agent will use. */
export function geminiDir(env: Record<string, string | undefined>): string | undefined {
  const home = env.GEMINI_CLI_HOME || env.HOME;
  return home ? path.join(home, '.gemini') : undefined;
}

const listDir = (dir: string): string[] => {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
};

/** The chat files of `sessionId` (any, without one) under `<records>/tmp/<project>/chats/`. */
export function geminiChatFiles(records: string, sessionId?: string): string[] {
  const tail = sessionId ? `-${sessionId.slice(0, 8)}.jsonl` : '.jsonl';
  const tmp = path.join(records, 'tmp');
  return listDir(tmp).flatMap((project) => {
    const chats = path.join(tmp, project, 'chats');
    return listDir(chats)
      .filter((f) => f.startsWith('session-') && f.endsWith(tail))
      .map((f) => path.join(chats, f));
  });
}

export const geminiCliDriver: AgentDriver = {
  ...genericDriver,
  name: 'gemini-cli',
  launch: (agent, facts) => {
    const records = geminiDir(facts.env);
    if ((agent.args ?? []).some((a) => SESSION_FLAGS.has(a.split('=')[0]!)))
      return { args: [], files: {}, ...(records ? { records } : {}) };
    const sessionId = randomUUID();
    return { args: ['--session-id', sessionId], files: {}, sessionId, ...(records ? { records } : {}) };
  },
  promptRecords: (records, sessionId) => ({
    files: () => geminiChatFiles(records, sessionId),
    texts: (line) =>
      line.type === 'user' && Array.isArray(line.content)
        ? (line.content as { text?: unknown }[]).flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
        : [],
  }),
};
