/**
 * status.handoff, pure: the run's handoff.md as its node read it (observers/handoff.ts), cleaned of
 * control characters (agent-written text that goes into another agent's prompt and into `describe`),
 * kept in status so that a reader on another host — the pipeline in the control plane — has it.
 * Only the current run's: a new run's first reading replaces the last run's.
 */
import type { HandoffStatus } from '../../api/session.js';
import { printable } from '../../api/text.js';
import type { HandoffFileReading } from '../../observers/handoff.js';

export { printable };

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
