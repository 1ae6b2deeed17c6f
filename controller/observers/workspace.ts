/**
 * The handoff workspace of one run (seed 004): $ORCHCTL_HOME/sessions/<ns>/<name>/<run>/ with
 * state.json (atomic writes), prompt.md, output.log (pane output), session.log
 * ("[ts] [LEVEL] msg") and result.json, which the agent may write and the controller reads back.
 * Directories are private to the owner; the agent finds them through ORCHCTL_WORKSPACE.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface RunWorkspace {
  dir: string;
  stateFile: string;
  promptFile: string;
  outputLog: string;
  sessionLog: string;
  resultFile: string;
  /** Written by the launch wrapper when the agent exits: its exit status. */
  exitCodeFile: string;
}

export function runWorkspace(home: string, namespace: string, name: string, run: number): RunWorkspace {
  const dir = path.join(home, 'sessions', namespace, name, String(run));
  return {
    dir,
    stateFile: path.join(dir, 'state.json'),
    promptFile: path.join(dir, 'prompt.md'),
    outputLog: path.join(dir, 'output.log'),
    sessionLog: path.join(dir, 'session.log'),
    resultFile: path.join(dir, 'result.json'),
    exitCodeFile: path.join(dir, 'exit-code'),
  };
}

/** Directory of every run of a session (removed when the object is deleted, if asked). */
export function sessionDir(home: string, namespace: string, name: string): string {
  return path.join(home, 'sessions', namespace, name);
}

/**
 * The run's directory (one mkdir -p) and its output.log, which `orchctl logs` and the console read as
 * soon as the run is recorded, before tmux's pipe opens it; session.log is made by its first line.
 */
export function createWorkspace(ws: RunWorkspace): void {
  fs.mkdirSync(ws.dir, { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(ws.outputLog, 'a', 0o600));
}

/** write-then-rename, so readers never see half a file and a crash never leaves one. */
export function writeFileAtomic(file: string, data: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function writeState(ws: RunWorkspace, state: Record<string, unknown>): void {
  try {
    writeFileAtomic(ws.stateFile, JSON.stringify(state, null, 2) + '\n');
  } catch {
    /* the workspace may have been removed; status in the store is authoritative */
  }
}

export type LogLevel = 'INFO' | 'WARN' | 'ERROR';

export function logLine(ws: RunWorkspace, level: LogLevel, message: string): void {
  logLines(ws, [{ level, message }]);
}

/** Several lines in one append (one open of the file: a launch writes two or three). */
export function logLines(ws: RunWorkspace, lines: { level: LogLevel; message: string }[]): void {
  if (!lines.length) return;
  const ts = new Date().toISOString();
  try {
    fs.appendFileSync(ws.sessionLog, lines.map((l) => `[${ts}] [${l.level}] ${l.message}\n`).join(''), { mode: 0o600 });
  } catch {
    /* best effort */
  }
}

/** result.json as the agent wrote it; undefined when absent, an error note when not JSON. */
export function readResult(ws: RunWorkspace): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(ws.resultFile, 'utf8');
  } catch {
    return undefined;
  }
  if (text.length > 64 * 1024) return { error: 'result.json is larger than 64 KiB and was not read' };
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch (e) {
    return { error: `result.json is not valid JSON: ${(e as Error).message}` };
  }
}

/**
 * The agent's exit status as the launch wrapper recorded it, and when: the file's mtime (ms), written
 * as the agent ended — the end of a run that ended while no controller watched. Undefined while it runs.
 */
export function readExitRecord(ws: RunWorkspace): { code: number; at: number } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(ws.exitCodeFile, 'r');
    const at = fs.fstatSync(fd).mtimeMs;
    const buf = Buffer.alloc(32); // a number and a newline; the workspace is the agent's to write
    const v = buf.toString('utf8', 0, fs.readSync(fd, buf, 0, buf.length, 0)).trim();
    return /^\d+$/.test(v) ? { code: Number(v), at } : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The last `maxBytes` of a file, for output tails without reading whole logs. */
export function readTail(file: string, maxBytes: number): string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, maxBytes);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
