/**
 * The files of context handling, read cheaply (changed-file.ts):
 *  - statusline.json, the figures `orchctl hook statusline` wrote from Claude Code's statusline;
 *  - handoff.md, the handoff the agent was asked to write before its context is compacted or
 *    cleared (and which a restarted run is given);
 *  - the session's last checkpoint summary (checkpoints.jsonl), the handoff's stand-in.
 */
import path from 'node:path';
import { STATUSLINE_FILE, type StatuslineRecord, statuslineRecord } from '../agents/statusline.js';
import { checkpointsPath, readCheckpoints } from '../store/checkpoints.js';
import { readChangedFile } from './changed-file.js';

export const HANDOFF_FILE = 'handoff.md';
/** Largest handoff read; the rest is cut (the rehydrate prompt bounds it further). */
export const MAX_HANDOFF_BYTES = 64 * 1024;
const MAX_STATUSLINE_BYTES = 16 * 1024;

export interface StatuslineReading {
  stamp: string;
  record: StatuslineRecord;
}

/** The statusline's figures when the file's stamp differs from `lastStamp`. */
export function readStatusline(workspace: string, lastStamp: string | undefined): StatuslineReading | undefined {
  const r = readChangedFile(path.join(workspace, STATUSLINE_FILE), lastStamp, MAX_STATUSLINE_BYTES);
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
  const r = readChangedFile(path.join(workspace, HANDOFF_FILE), undefined, MAX_HANDOFF_BYTES);
  return r ? { mtimeMs: r.mtimeMs, text: r.text } : undefined;
}

/** The session's last checkpoint, as "title: summary" (the assessment reconciler writes them). */
export function lastCheckpointSummary(home: string, namespace: string, name: string): string | undefined {
  const last = readCheckpoints(checkpointsPath(home, namespace, name)).at(-1);
  if (!last) return undefined;
  return last.summary && last.summary !== last.title ? `${last.title}: ${last.summary}` : last.title || undefined;
}
