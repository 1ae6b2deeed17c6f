/**
 * status.handoff, pure: the run's handoff.md as its node read it (observers/handoff.ts), cleaned of
 * control characters (agent-written text that goes into another agent's prompt and into `describe`),
 * kept in status so that a reader on another host — the pipeline in the control plane — has it.
 * Only the current run's: a new run's first reading replaces the last run's.
 */
import type { HandoffStatus } from '../../api/session.js';
import type { HandoffFileReading } from '../../observers/handoff.js';

/** Control characters out except newlines and tabs (terminal escapes included); CRLF to LF. */
export const printable = (s: string) =>
  s.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');

/** status.handoff after a reading of run `run`'s handoff.md (none: as it was). */
export function applyHandoff(
  prev: HandoffStatus | undefined,
  run: number,
  reading: HandoffFileReading | undefined,
  now: string,
): HandoffStatus | undefined {
  if (!reading) return prev;
  return {
    run,
    stamp: reading.stamp,
    text: printable(reading.text),
    ...(reading.truncated ? { truncated: true } : {}),
    bytes: reading.size,
    at: now,
  };
}
