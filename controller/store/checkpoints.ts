/**
 * The session's checkpoint history: $ORCHCTL_HOME/sessions/<ns>/<name>/checkpoints.jsonl, one
 * JSON line per checkpoint (api/assessment.ts's CheckpointRecord), append-only, shared by the
 * session's runs. The assessment reconciler appends; `orchctl assess history` reads.
 *
 * Idempotent by the seq of the event that closed the segment: the reconciler appends before it
 * commits its position, so after a crash in between the same checkpoint is decided again and
 * the append is skipped (seqs only grow). A torn last line (a crash mid-append) is cut off first.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CheckpointRecord } from '../api/assessment.js';

export function checkpointsPath(home: string, namespace: string, name: string): string {
  return path.join(home, 'sessions', namespace, name, 'checkpoints.jsonl');
}

/** The seq of the last whole record, after cutting off a torn tail. */
function lastSeq(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch {
    return 0;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (!size) return 0;
    const len = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    let end = len;
    if (buf[len - 1] !== 10) {
      const nl = buf.lastIndexOf(10);
      fs.ftruncateSync(fd, nl < 0 ? size - len : size - len + nl + 1);
      end = nl < 0 ? 0 : nl + 1;
    }
    const text = buf.toString('utf8', 0, end).trimEnd();
    const line = text.slice(text.lastIndexOf('\n') + 1);
    try {
      return (JSON.parse(line) as CheckpointRecord).seq ?? 0;
    } catch {
      return 0;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Appends `rec` unless a record with this seq (or a later one) is already there. Returns whether it wrote. */
export function appendCheckpoint(file: string, rec: CheckpointRecord): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  if (lastSeq(file) >= rec.seq) return false;
  fs.appendFileSync(file, `${JSON.stringify(rec)}\n`, { mode: 0o600 });
  return true;
}

/** Every whole record (for the CLI). */
export function readCheckpoints(file: string): CheckpointRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: CheckpointRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as CheckpointRecord);
    } catch {
      /* a torn tail */
    }
  }
  return out;
}
