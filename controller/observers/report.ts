/**
 * $ORCHCTL_WORKSPACE/status.json, the agent's progress report, read cheaply (changed-file.ts); a
 * file over the bound is reported by its size, without its text.
 */
import path from 'node:path';
import { readChangedFile } from './changed-file.js';

export const REPORT_FILE = 'status.json';
/** Largest status.json read; a bigger one is ignored with a warning. */
export const MAX_REPORT_BYTES = 256 * 1024;

/** What was read: the file's stamp, its size, and its text (absent when over the bound). */
export interface ReportReading {
  stamp: string;
  size: number;
  text?: string;
}

/** The report when its stamp differs from `lastStamp`; undefined when absent or unchanged. */
export function readReport(
  workspace: string,
  lastStamp: string | undefined,
  maxBytes = MAX_REPORT_BYTES,
): ReportReading | undefined {
  // Followed through a symlink, as it always was: what is read is validated against the schema.
  const r = readChangedFile(path.join(workspace, REPORT_FILE), lastStamp, maxBytes, { followSymlinks: true });
  if (!r) return undefined;
  return r.truncated ? { stamp: r.stamp, size: r.size } : { stamp: r.stamp, size: r.size, text: r.text };
}
