/**
 * $ORCHCTL_WORKSPACE/handoff.md for status.handoff (reconcilers/session/handoff.ts), read cheaply
 * (changed-file.ts).
 */
import path from 'node:path';
import { readChangedFile } from './changed-file.js';
import { HANDOFF_FILE } from './context-files.js';

/** What status.handoff keeps of the file: enough for a pipeline's next phase (api/pipeline.ts HANDOFF_LIMITS). */
export const MIRRORED_HANDOFF_BYTES = 8 * 1024;

export interface HandoffFileReading {
  stamp: string;
  /** The file's size. */
  size: number;
  /** Its first `max` bytes, decoded (a multi-byte character the cut split dropped). */
  text: string;
  truncated: boolean;
}

/** handoff.md when its stamp differs from `lastStamp`; undefined when absent, not a file, or unchanged. */
export function readHandoffFile(
  workspace: string,
  lastStamp: string | undefined,
  max = MIRRORED_HANDOFF_BYTES,
): HandoffFileReading | undefined {
  const r = readChangedFile(path.join(workspace, HANDOFF_FILE), lastStamp, max);
  // A multi-byte character the cut split decodes as U+FFFD: dropped.
  return r && { stamp: r.stamp, size: r.size, text: r.text.replace(/\uFFFD$/, ''), truncated: r.truncated };
}
