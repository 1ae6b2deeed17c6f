/**
 * The driver for OpenAI's Codex CLI (`codex`, npm @openai/codex; Agent `detection.agent: codex`).
 * Codex keeps its records in CODEX_HOME (default ~/.codex): `history.jsonl` gains one line per
 * prompt the TUI submitted (`{"session_id","ts","text"}`, recorded from 0.171.0 in
 * docs/notes/codex.md) — that, not the screen, confirms a delivery: Codex's paste-burst detection
 * can take an Enter that follows typed text as part of the paste.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { NewEvent } from '../store/eventlog.js';
import { bound } from './bound.js';
import { type AgentDriver, restoreTurns, type TranscriptReader, turnCounters } from './driver.js';
import { genericDriver } from './generic.js';

/** CODEX_HOME as the agent will see it, else ~/.codex of its HOME. */
export function codexHome(env: Record<string, string | undefined>): string | undefined {
  if (env.CODEX_HOME) return env.CODEX_HOME;
  return env.HOME ? path.join(env.HOME, '.codex') : undefined;
}

// ---- the rollout → events --------------------------------------------------------------------

const MAX_TEXT = 4096;
const MAX_OUTPUT = 8192;
/** Rollouts looked at per search (newest days first), so a crowded CODEX_HOME costs a bounded read. */
const MAX_ROLLOUTS = 200;

const listDir = (dir: string): string[] => {
  try {
    return fs.readdirSync(dir).sort().reverse();
  } catch {
    return [];
  }
};

/** The head of a file: a rollout's session_meta names its start and cwd before its long instructions. */
function head(file: string, bytes = 4096): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(bytes);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.toString('utf8', 0, n);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** session_meta's start and cwd from a rollout's head (recorded 0.171.0: both precede base_instructions). */
function sessionMeta(text: string): { at: number; cwd: string } | undefined {
  if (!/^\{[^\n]*?"type":"session_meta"/.test(text)) return undefined;
  const at = /"payload":\{[^\n]*?"timestamp":"([^"]+)"/.exec(text)?.[1];
  const cwd = /"payload":\{[^\n]*?"cwd":("(?:[^"\\]|\\.)*")/.exec(text)?.[1];
  if (!at || !cwd) return undefined;
  try {
    return { at: Date.parse(at), cwd: JSON.parse(cwd) as string };
  } catch {
    return undefined;
  }
}

/** Rollouts found, by CODEX_HOME, workdir and run start: found once, read every pass. */
const located = new Map<string, string>();

/**
 * The run's rollout: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl` whose
 * session_meta (first line) has the run's cwd and started at or after the run — the earliest such.
 * Codex picks the thread id itself (no flag fixes it in 0.171.0), so it is found, not derived.
 */
export function codexRollout(records: string, workdir: string, startTime: string): string | undefined {
  const key = `${records}\0${workdir}\0${startTime}`;
  const known = located.get(key);
  if (known) return known;
  const start = Date.parse(startTime);
  if (!Number.isFinite(start)) return undefined;
  const root = path.join(records, 'sessions');
  let real = workdir;
  try {
    real = fs.realpathSync(workdir); // Codex records the resolved cwd
  } catch {
    /* gone: compared as given */
  }
  let best: { file: string; at: number } | undefined;
  let seen = 0;
  // Days from the newest: a run's rollout is in its start day's directory or a later one.
  outer: for (const y of listDir(root))
    for (const m of listDir(path.join(root, y)))
      for (const d of listDir(path.join(root, y, m))) {
        const day = Date.parse(`${y}-${m}-${d}T23:59:59.999Z`);
        if (Number.isFinite(day) && day < start - 24 * 3600_000) break outer;
        for (const f of listDir(path.join(root, y, m, d))) {
          if (!f.startsWith('rollout-') || !f.endsWith('.jsonl')) continue;
          if (++seen > MAX_ROLLOUTS) break outer;
          const file = path.join(root, y, m, d, f);
          let mtime = 0;
          try {
            mtime = fs.statSync(file).mtimeMs;
          } catch {
            continue;
          }
          if (mtime < start) continue; // untouched since before the run: not its rollout
          const meta = sessionMeta(head(file) ?? '');
          if (!meta || (meta.cwd !== workdir && meta.cwd !== real) || !(meta.at >= start)) continue;
          if (!best || meta.at < best.at) best = { file, at: meta.at };
        }
      }
  if (best) {
    if (located.size >= 1000) located.delete(located.keys().next().value as string);
    located.set(key, best.file);
  }
  return best?.file;
}

interface RolloutState {
  /** The model of the turn (turn_context), for the usage records that do not name it. */
  model?: string;
  users: number;
  assistants: number;
  tools: Map<string, { tool: string; command?: string }>;
}

interface ContentItem {
  type?: string;
  text?: unknown;
}

/** "Process exited with code 3" in exec_command's output (recorded from 0.171.0). */
const EXIT_CODE = /^Process exited with code (\d+)$/m;

/**
 * One line of a Codex rollout (recorded from 0.171.0, docs/notes/codex.md): `response_item`s are
 * the conversation (user/assistant messages, function_call, function_call_output); a
 * `token_usage_record` follows each model response with its token use. Codex's own context
 * (environment, skills, permissions) comes as user/developer messages in <tags>: not the person's.
 */
export function codexRolloutEvents(line: Record<string, unknown>, run: number, st: RolloutState): NewEvent[] {
  const ts = typeof line.timestamp === 'string' ? line.timestamp : new Date().toISOString();
  const base = { ts, run, source: 'transcript' as const };
  const p = (line.payload ?? {}) as Record<string, unknown>;
  if (line.type === 'turn_context' && typeof p.model === 'string') {
    st.model = p.model.slice(0, 200);
    return [];
  }
  if (line.type === 'token_usage_record') {
    const u = (p.usage ?? {}) as Record<string, unknown>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
    if (typeof p.response_id !== 'string') return [];
    return [
      {
        ...base,
        type: 'usage',
        messageId: p.response_id,
        // Codex's input_tokens include the cached ones; orchctl's inputTokens are the uncached.
        usage: {
          inputTokens: Math.max(0, n(u.input_tokens) - n(u.cached_input_tokens)),
          outputTokens: n(u.output_tokens),
          cacheReadTokens: n(u.cached_input_tokens),
          cacheCreationTokens: n(u.cache_write_input_tokens),
        },
        ...(typeof p.model === 'string' ? { model: p.model } : st.model ? { model: st.model } : {}),
      },
    ];
  }
  // A turn that ended on an error (a 429 usage limit: "You've hit your usage limit. Try again at
  // 9:37 PM.", codex_error_info usage_limit_exceeded) — the notice Codex shows, as its message.
  if (line.type === 'event_msg' && p.type === 'task_complete') {
    const error = p.error as { message?: unknown } | undefined;
    return typeof error?.message === 'string' && error.message
      ? [{ ...base, type: 'assistant_message', text: bound(error.message, MAX_TEXT), index: st.assistants++ }]
      : [];
  }
  if (line.type !== 'response_item') return [];
  if (p.type === 'message') {
    const text = (Array.isArray(p.content) ? (p.content as ContentItem[]) : [])
      .filter((c) => typeof c.text === 'string')
      .map((c) => c.text as string)
      .join('\n');
    if (!text) return [];
    if (p.role === 'user' && !text.startsWith('<'))
      return [{ ...base, type: 'user_message', text: bound(text, MAX_TEXT), index: st.users++ }];
    if (p.role === 'assistant')
      return [
        {
          ...base,
          type: 'assistant_message',
          text: bound(text, MAX_TEXT),
          index: st.assistants++,
          ...(typeof p.id === 'string' ? { messageId: p.id } : {}),
        },
      ];
    return [];
  }
  if (p.type === 'function_call' && typeof p.call_id === 'string') {
    const tool = typeof p.name === 'string' ? p.name : '';
    let args: Record<string, unknown> = {};
    try {
      args = JSON.parse(typeof p.arguments === 'string' ? p.arguments : '{}') as Record<string, unknown>;
    } catch {
      /* arguments Codex could not parse either */
    }
    const command = typeof args.cmd === 'string' ? bound(args.cmd, MAX_TEXT) : undefined;
    if (st.tools.size >= 1000) st.tools.delete(st.tools.keys().next().value as string);
    st.tools.set(p.call_id, { tool, ...(command ? { command } : {}) });
    return [
      {
        ...base,
        type: 'tool_use',
        tool,
        toolUseId: p.call_id,
        ...(command ? { command } : { input: args }),
      },
    ];
  }
  if (p.type === 'function_call_output' && typeof p.call_id === 'string') {
    const known = st.tools.get(p.call_id);
    const output = typeof p.output === 'string' ? p.output : JSON.stringify(p.output ?? '');
    const m = EXIT_CODE.exec(output);
    const exitCode = m ? Number(m[1]) : undefined;
    return [
      {
        ...base,
        type: 'tool_result',
        ...(known ? { tool: known.tool } : {}),
        toolUseId: p.call_id,
        ...(known?.command ? { command: known.command } : {}),
        isError: exitCode !== undefined && exitCode !== 0,
        ...(exitCode !== undefined ? { exitCode } : {}),
        output: bound(output, MAX_OUTPUT),
      },
    ];
  }
  return [];
}

const rollout: TranscriptReader<RolloutState> = {
  // Recorded from 0.171.0 (a 429 usage_limit_reached): the reset is the clock time after "Try again at".
  limitNotice: { message: /\b(?:hit|reached) your usage limit\b|\bquota exceeded\b/i },
  newState: () => ({ users: 0, assistants: 0, tools: new Map() }),
  events: codexRolloutEvents,
  counters: turnCounters,
  restore: restoreTurns,
};

export const codexDriver: AgentDriver = {
  ...genericDriver,
  name: 'codex',
  launch: (_agent, facts) => {
    const records = codexHome(facts.env);
    return { args: [], files: {}, ...(records ? { records } : {}) };
  },
  locateTranscript: ({ records, workdir, startTime }) =>
    records && workdir && startTime ? codexRollout(records, workdir, startTime) : undefined,
  transcript: rollout as TranscriptReader,
  promptRecords: (records) => ({
    files: () => [path.join(records, 'history.jsonl')],
    texts: (line) => (typeof line.text === 'string' ? [line.text] : []),
  }),
};
