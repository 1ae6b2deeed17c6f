/**
 * One file of a run's workspace read cheaply, as the observers of status.json, handoff.md and
 * statusline.json need it: a stat per pass, the file itself only when its size or mtime changed
 * since `lastStamp`, never more than a bound, and (unless told to follow) never through a symlink —
 * the workspace is the agent's.
 */
import fs from 'node:fs';

export interface ChangedFile {
  /** size:mtime, what the caller keeps to skip an unchanged file next time. */
  stamp: string;
  /** The file's size (or more, if it grew while read). */
  size: number;
  mtimeMs: number;
  /** Its first `max` bytes, decoded. */
  text: string;
  /** Longer than `max`. */
  truncated: boolean;
}

/** The file when its stamp differs from `lastStamp`; undefined when absent, not a file, or unchanged. */
export function readChangedFile(
  file: string,
  lastStamp: string | undefined,
  max: number,
  opts: { followSymlinks?: boolean } = {},
): ChangedFile | undefined {
  let fd: number | undefined;
  try {
    const st = opts.followSymlinks ? fs.statSync(file) : fs.lstatSync(file);
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (!st.isFile() || stamp === lastStamp) return undefined;
    fd = fs.openSync(file, fs.constants.O_RDONLY | (opts.followSymlinks ? 0 : fs.constants.O_NOFOLLOW));
    // One byte over the bound tells a file that grew after the stat from one that fits.
    const buf = Buffer.alloc(max + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, Math.min(n, max)).toString('utf8');
    return { stamp, size: Math.max(st.size, n), mtimeMs: st.mtimeMs, text, truncated: n > max || st.size > max };
  } catch {
    return undefined; // not written (yet), or replaced while read: the next pass looks again
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
