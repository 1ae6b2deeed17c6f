/**
 * The files of context handling, read cheaply (a stat per pass, the file only when it changed, never
 * more than a bound, never through a symlink — the workspace is the agent's):
 *  - statusline.json, the figures `orchctl hook statusline` wrote from Claude Code's statusline;
 *  - handoff.md, the handoff the agent was asked to write before its context is compacted or
 *    cleared (and which a restarted run is given);
 *  - the session's last checkpoint summary (checkpoints.jsonl), the handoff's stand-in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { STATUSLINE_FILE, type StatuslineRecord, statuslineRecord } from '../agents/statusline.js';
import { checkpointsPath, readCheckpoints } from '../store/checkpoints.js';

export const HANDOFF_FILE = 'handoff.md';
/** Largest handoff read; the rest is cut (the rehydrate prompt bounds it further). */
export const MAX_HANDOFF_BYTES = 64 * 1024;
const MAX_STATUSLINE_BYTES = 16 * 1024;

export interface StatuslineReading {
  stamp: string;
  record: StatuslineRecord;
}

/** A regular file's stamp (size:mtime) and its first `max` bytes; undefined when absent or not a file. */
function readBounded(file: string, max: number): { stamp: string; mtimeMs: number; text: string } | undefined {
  let fd: number | undefined;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile()) return undefined;
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    const buf = Buffer.alloc(Math.min(st.size, max));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return { stamp: `${st.size}:${st.mtimeMs}`, mtimeMs: st.mtimeMs, text: buf.subarray(0, n).toString('utf8') };
  } catch {
    return undefined; // not written (yet), or replaced while read: the next pass looks again
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function stampOf(file: string): string | undefined {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() ? `${st.size}:${st.mtimeMs}` : undefined;
  } catch {
    return undefined;
  }
}

/** The statusline's figures when the file's stamp differs from `lastStamp`. */
export function readStatusline(workspace: string, lastStamp: string | undefined): StatuslineReading | undefined {
  const file = path.join(workspace, STATUSLINE_FILE);
  if (stampOf(file) === lastStamp) return undefined;
  const r = readBounded(file, MAX_STATUSLINE_BYTES);
  if (!r) return undefined;
  try {
    return { stamp: r.stamp, record: statuslineRecord(JSON.parse(r.text)) };
  } catch {
    return { stamp: r.stamp, record: { rateLimits: [] } }; // torn or not ours: no figures, and not read again
  }
}

export interface HandoffReading {
  mtimeMs: number;
  text: string;
}

/** The run's handoff.md (bounded), if there is one. */
export function readHandoff(workspace: string): HandoffReading | undefined {
  const r = readBounded(path.join(workspace, HANDOFF_FILE), MAX_HANDOFF_BYTES);
  return r ? { mtimeMs: r.mtimeMs, text: r.text } : undefined;
}

/** The session's last checkpoint, as "title: summary" (the assessment reconciler writes them). */
export function lastCheckpointSummary(home: string, namespace: string, name: string): string | undefined {
  const last = readCheckpoints(checkpointsPath(home, namespace, name)).at(-1);
  if (!last) return undefined;
  return last.summary && last.summary !== last.title ? `${last.title}: ${last.summary}` : last.title || undefined;
}
