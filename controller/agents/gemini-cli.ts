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
import type { NewEvent } from '../store/eventlog.js';
import { bound } from './bound.js';
import { type AgentDriver, restoreTurns, type TranscriptReader, turnCounters } from './driver.js';
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

// ---- the chat record → events ----------------------------------------------------------------

const MAX_TEXT = 4096;
const MAX_OUTPUT = 8192;
/** How many message ids are remembered to emit each message's text once (a message's line repeats). */
const MAX_IDS = 1000;

interface ChatState {
  users: number;
  assistants: number;
  /** Tool call id → tool name and shell command, to label results. */
  tools: Map<string, { tool: string; command?: string }>;
  /** Ids of messages whose text went out already. */
  said: Set<string>;
}

interface Part {
  text?: unknown;
  functionResponse?: { id?: unknown; name?: unknown; response?: { output?: unknown; error?: unknown } };
}

interface ToolCall {
  id?: unknown;
  name?: unknown;
  args?: { command?: unknown };
}

/** "Exit Code: 3" in run_shell_command's output (recorded from 0.61.0). */
const EXIT_CODE = /^Exit Code: (\d+)$/m;

const remember = <T>(set: Set<T> | Map<T, unknown>, key: T) => {
  if (set.size >= MAX_IDS) set.delete(set.keys().next().value as T);
  return key;
};

/**
 * One line of Gemini CLI's chat record (recorded from 0.61.0): `{"type":"user","content":[{text} |
 * {functionResponse}]}` for prompts and tool results; `{"type":"gemini","id","content":<text>,"tokens":
 * {input,output,cached,…},"model","toolCalls"?}` for model messages, written again as they complete
 * (the same id). Metadata lines (`$set`, session header) mean nothing here.
 */
export function geminiChatEvents(line: Record<string, unknown>, run: number, st: ChatState): NewEvent[] {
  const ts = typeof line.timestamp === 'string' ? line.timestamp : new Date().toISOString();
  const base = { ts, run, source: 'transcript' as const };
  const out: NewEvent[] = [];
  if (line.type === 'user' && Array.isArray(line.content)) {
    for (const p of line.content as Part[]) {
      if (typeof p.text === 'string' && p.text && !p.text.startsWith('<session_context>'))
        out.push({ ...base, type: 'user_message', text: bound(p.text, MAX_TEXT), index: st.users++ });
      const r = p.functionResponse;
      if (!r) continue;
      const id = typeof r.id === 'string' ? r.id : undefined;
      const known = id ? st.tools.get(id) : undefined;
      const output =
        typeof r.response?.output === 'string' ? r.response.output : JSON.stringify(r.response?.error ?? r.response);
      const m = EXIT_CODE.exec(output ?? '');
      const exitCode = m ? Number(m[1]) : undefined;
      out.push({
        ...base,
        type: 'tool_result',
        tool: known?.tool ?? (typeof r.name === 'string' ? r.name : undefined),
        ...(id ? { toolUseId: id } : {}),
        ...(known?.command ? { command: known.command } : {}),
        isError: exitCode !== undefined ? exitCode !== 0 : r.response?.error !== undefined,
        ...(exitCode !== undefined ? { exitCode } : {}),
        output: bound(output ?? '', MAX_OUTPUT),
      });
    }
    return out;
  }
  if (line.type !== 'gemini' || typeof line.id !== 'string') return out;
  const t = (line.tokens ?? {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  // Gemini counts cached tokens inside input; orchctl's inputTokens are the uncached ones.
  const usage =
    line.tokens && typeof line.tokens === 'object'
      ? {
          inputTokens: Math.max(0, n(t.input) - n(t.cached)),
          outputTokens: n(t.output) + n(t.thoughts),
          cacheReadTokens: n(t.cached),
          cacheCreationTokens: 0,
        }
      : undefined;
  const facts = {
    ...(usage ? { usage } : {}),
    messageId: line.id,
    ...(typeof line.model === 'string' ? { model: line.model } : {}),
  };
  if (typeof line.content === 'string' && line.content && !st.said.has(line.id)) {
    st.said.add(remember(st.said, line.id));
    out.push({
      ...base,
      type: 'assistant_message',
      text: bound(line.content, MAX_TEXT),
      index: st.assistants++,
      ...facts,
    });
  }
  for (const c of Array.isArray(line.toolCalls) ? (line.toolCalls as ToolCall[]) : []) {
    if (typeof c.id !== 'string' || st.tools.has(c.id)) continue;
    const tool = typeof c.name === 'string' ? c.name : '';
    const command = typeof c.args?.command === 'string' ? bound(c.args.command, MAX_TEXT) : undefined;
    st.tools.set(remember(st.tools, c.id), { tool, ...(command ? { command } : {}) });
    out.push({
      ...base,
      type: 'tool_use',
      tool,
      toolUseId: c.id,
      ...(command ? { command } : { input: c.args ?? null }),
      ...facts,
    });
  }
  return out;
}

const geminiChat: TranscriptReader<ChatState> = {
  newState: () => ({ users: 0, assistants: 0, tools: new Map(), said: new Set() }),
  events: geminiChatEvents,
  counters: turnCounters,
  restore: restoreTurns,
};

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
  locateTranscript: ({ records, sessionId }) =>
    records && sessionId ? geminiChatFiles(records, sessionId)[0] : undefined,
  transcript: geminiChat as TranscriptReader,
  promptRecords: (records, sessionId) => ({
    files: () => geminiChatFiles(records, sessionId),
    texts: (line) =>
      line.type === 'user' && Array.isArray(line.content)
        ? (line.content as { text?: unknown }[]).flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
        : [],
  }),
};
