/**
 * `orchctl hook`: the command Claude Code runs for each hook event (installed through the
 * settings file orchctl passes at launch). It appends `{"t":<ms>,"payload":<stdin JSON>}` as one
 * line to $ORCHCTL_WORKSPACE/hooks.jsonl, which the controller ingests into the session's event
 * log. It must never block or fail the agent: it prints nothing (Claude Code would read stdout
 * as hook output), always exits 0, and gives up on stdin after a short deadline — bad payloads,
 * no workspace, no controller and a full disk included. It imports nothing but node:fs/path (and
 * the import-free statusline.ts) so it starts fast (bin/orchctl loads it before the rest of the CLI).
 * `orchctl hook statusline` is Claude Code's statusline command (runStatusline below).
 */
import fs from 'node:fs';
import path from 'node:path';
import { STATUSLINE_FILE, statuslineRecord, statuslineText } from './statusline.js';

/**
 * Longest a hook waits for its payload before writing what it has. The payload is one JSON line
 * (Claude Code ends it with a newline), so the hook normally finishes the moment that line is in
 * — this bound only matters for a writer that stalls, which a loaded machine can make slow.
 */
export const HOOK_STDIN_DEADLINE_MS = 1000;
/** Payloads are bounded; a larger one is cut and marked. */
export const HOOK_MAX_PAYLOAD_BYTES = 256 * 1024;
export const HOOKS_FILE = 'hooks.jsonl';

function readStdin(
  deadlineMs: number,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean; timedOut: boolean }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const stdin = process.stdin;
    const finish = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      stdin.destroy();
      const buf = Buffer.concat(chunks);
      resolve({ text: buf.subarray(0, maxBytes).toString('utf8'), truncated: buf.length > maxBytes, timedOut });
    };
    const timer = setTimeout(() => finish(true), deadlineMs);
    stdin.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      // A whole JSON line is the whole payload: no need to wait for the writer to close.
      if (size > maxBytes || (c.includes(10) && isJson(Buffer.concat(chunks).toString('utf8')))) finish(false);
    });
    stdin.on('end', () => finish(false));
    stdin.on('error', () => finish(false));
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Runs the hook (`orchctl hook statusline`: the statusline); resolves to the exit code, which is always 0. */
export async function runHook(env: NodeJS.ProcessEnv = process.env, args = process.argv.slice(3)): Promise<number> {
  if (args[0] === 'statusline') return runStatusline(env);
  try {
    const ws = env.ORCHCTL_WORKSPACE;
    if (!ws || !path.isAbsolute(ws)) {
      process.stdin.destroy();
      return 0;
    }
    const { text, truncated, timedOut } = await readStdin(HOOK_STDIN_DEADLINE_MS, HOOK_MAX_PAYLOAD_BYTES);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    const record: Record<string, unknown> = { t: Date.now() };
    if (payload && typeof payload === 'object' && !Array.isArray(payload)) record.payload = payload;
    else record.raw = text.slice(0, 4096); // not a JSON object: kept for diagnosis, bounded
    if (truncated) record.truncated = true;
    if (timedOut) record.timedOut = true;
    // One write with O_APPEND: concurrent hooks (Claude runs them in parallel) never interleave.
    fs.appendFileSync(path.join(ws, HOOKS_FILE), JSON.stringify(record) + '\n', { mode: 0o600 });
  } catch {
    // ENOSPC, EACCES, a removed workspace: the agent must not notice.
  }
  return 0;
}

/** The statusline payload is read like a hook's, with a shorter bound (Claude Code redraws with it). */
const STATUSLINE_MAX_BYTES = 64 * 1024;

/**
 * `orchctl hook statusline`: Claude Code's statusline command. Writes the payload's figures to
 * $ORCHCTL_WORKSPACE/statusline.json — atomically (a temp file renamed over it), and only when
 * they changed, so the controller's stat sees a change only when there is one — and prints the
 * short text the statusline shows. Like a hook it never fails the agent.
 */
export async function runStatusline(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let text = 'orchctl';
  try {
    const ws = env.ORCHCTL_WORKSPACE;
    const input = await readStdin(HOOK_STDIN_DEADLINE_MS, STATUSLINE_MAX_BYTES);
    let payload: unknown;
    try {
      payload = JSON.parse(input.text);
    } catch {
      payload = undefined;
    }
    const rec = statuslineRecord(payload);
    text = statuslineText(rec);
    if (ws && path.isAbsolute(ws) && payload !== undefined) {
      const file = path.join(ws, STATUSLINE_FILE);
      const json = `${JSON.stringify(rec)}\n`;
      let old: string | undefined;
      try {
        old = fs.readFileSync(file, 'utf8');
      } catch {
        old = undefined;
      }
      if (old !== json) {
        const tmp = `${file}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, json, { mode: 0o600 });
        fs.renameSync(tmp, file);
      }
    }
  } catch {
    // a removed workspace, a full disk: the statusline still prints
  }
  process.stdout.write(`${text}\n`);
  return 0;
}
