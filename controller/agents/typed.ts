/**
 * What orchctl typed into a run's pane: every verified delivery (the prompt when pasted, `orchctl
 * send`, interventions, the continue message, context commands) appends its text to
 * `<workspace>/typed.jsonl` before pasting, and the launch wrote the prompt to prompt.md. The screen
 * classifier leaves lines that echo these texts out of the rate-limit check (detection/classify.ts),
 * so a prompt that mentions "rate limit", or the continue message that says the limit has reset, is
 * never read as the agent reporting a limit (issue 24 item 5).
 * A hint, not state: a lost line costs one echo that may be misread, never a lost object.
 */
import fs from 'node:fs';
import path from 'node:path';

export const TYPED_FILE = 'typed.jsonl';
/** Texts kept (the last ones typed), and characters of each. */
const KEEP = 20;
const MAX_TEXT = 4000;
/** The file is rewritten with the last {@link KEEP} texts once it grows past this (and read up to it). */
const MAX_FILE = 128 * 1024;
const MAX_PROMPT = 16 * 1024;

/** Appends `text` to the run's typed log (0600); never throws. */
export function recordTyped(workspace: string, text: string): void {
  const file = path.join(workspace, TYPED_FILE);
  try {
    // Newlines on both sides: a line torn by a crash mid-append never swallows another.
    const line = `\n${JSON.stringify({ ts: new Date().toISOString(), text: text.slice(0, MAX_TEXT) })}\n`;
    fs.appendFileSync(file, line, { mode: 0o600 });
    if (fs.statSync(file).size > MAX_FILE) {
      const kept = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-KEEP);
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, `${kept.join('\n')}\n`, { mode: 0o600 });
      fs.renameSync(tmp, file);
    }
  } catch {
    /* the workspace may be gone: the run is over */
  }
}

function readBounded(file: string, max: number): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, max));
    const n = fs.readSync(fd, buf, 0, buf.length, Math.max(0, size - max));
    return buf.subarray(0, n).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The texts orchctl delivered into this run: its prompt, then the last ones typed (oldest first). */
export function readTyped(workspace: string): string[] {
  const out: string[] = [];
  const prompt = readBounded(path.join(workspace, 'prompt.md'), MAX_PROMPT);
  if (prompt.trim()) out.push(prompt);
  const lines = readBounded(path.join(workspace, TYPED_FILE), MAX_FILE).split('\n').filter(Boolean);
  for (const l of lines.slice(-KEEP)) {
    try {
      const t = (JSON.parse(l) as { text?: unknown }).text;
      if (typeof t === 'string' && t.trim()) out.push(t);
    } catch {
      /* a partial first line of the bounded read, or a torn write */
    }
  }
  return out;
}
