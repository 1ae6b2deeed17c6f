/**
 * $ORCHCTL_WORKSPACE/handoff.md for status.handoff (reconcilers/session/handoff.ts), read cheaply:
 * a stat per pass, the file only when its size or mtime changed, at most a bound, never through a
 * symlink (the workspace is the agent's).
 */
import fs from 'node:fs';
import path from 'node:path';
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
  const file = path.join(workspace, HANDOFF_FILE);
  let fd: number | undefined;
  try {
    const st = fs.lstatSync(file);
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (!st.isFile() || stamp === lastStamp) return undefined;
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    // One byte over the bound tells a file that grew after the stat from one that fits.
    const buf = Buffer.alloc(max + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf
      .subarray(0, Math.min(n, max))
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    return { stamp, size: Math.max(st.size, n), text, truncated: n > max };
  } catch {
    return undefined; // not written (yet), or replaced while read: the next pass looks again
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
