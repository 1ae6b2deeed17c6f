/**
 * $ORCHCTL_WORKSPACE/status.json, the agent's progress report, read cheaply: a stat per pass, the
 * file itself only when its size or mtime changed, and never more than a bound (a bigger file is
 * reported by its size, unread).
 */
import fs from 'node:fs';
import path from 'node:path';

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
export function readReport(workspace: string, lastStamp: string | undefined, maxBytes = MAX_REPORT_BYTES) {
  const file = path.join(workspace, REPORT_FILE);
  let fd: number | undefined;
  try {
    const st = fs.statSync(file);
    const stamp = `${st.size}:${st.mtimeMs}`;
    if (stamp === lastStamp || !st.isFile()) return undefined;
    if (st.size > maxBytes) return { stamp, size: st.size } satisfies ReportReading;
    fd = fs.openSync(file, 'r');
    // One byte over the bound tells a file that grew after the stat from one that fits.
    const buf = Buffer.alloc(maxBytes + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    if (n > maxBytes) return { stamp, size: n } satisfies ReportReading;
    return { stamp, size: n, text: buf.subarray(0, n).toString('utf8') } satisfies ReportReading;
  } catch {
    return undefined; // not written (yet), or replaced while read: the next pass looks again
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
