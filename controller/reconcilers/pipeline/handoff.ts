/**
 * What one phase hands to the next: the handoff.md its agent wrote and the notes of its progress
 * report (status.json), as the phase's node mirrored them into the session's status
 * (status.handoff, status.report.notes: cleaned of control characters and bounded there), so the
 * pipeline in the control plane reads them from the store whichever host ran the phase. Composed
 * under "## Handoff from phase <name>" below the next phase's task.
 */
import { HANDOFF_FILE } from '../../observers/context-files.js';
import type { AgentSession } from '../../api/session.js';
import { printable } from '../../api/text.js';

export { HANDOFF_FILE };

export interface Handoff {
  phase: string;
  run?: number;
  /** handoff.md as mirrored (cleaned, clipped), when there was one. */
  text?: string;
  truncated?: boolean;
  /** The report's notes, when its status.json was valid and had them. */
  notes?: string;
}

/** The first `max` UTF-8 bytes of `s` (a character the cut split dropped), and whether it was cut. */
function clipBytes(s: string, max: number): { text: string; truncated: boolean } {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return { text: s, truncated: false };
  return {
    text: buf
      .subarray(0, max)
      .toString('utf8')
      .replace(/\uFFFD$/, ''),
    truncated: true,
  };
}

/** The handoff of a completed phase's session (its current run's); `bytes` bounds handoff.md. */
export function readHandoff(phase: string, s: AgentSession | undefined, bytes: number): Handoff {
  const st = s?.status;
  const run = st?.run;
  const out: Handoff = { phase, ...(run ? { run } : {}) };
  const h = st?.handoff?.run === run ? st?.handoff : undefined;
  if (h?.text.trim()) {
    const c = clipBytes(printable(h.text), bytes);
    Object.assign(out, { text: c.text.trim(), truncated: c.truncated || !!h.truncated });
  }
  const notes = st?.report?.run === run ? st?.report?.notes : undefined;
  if (notes) out.notes = notes;
  return out;
}

export function handoffSection(h: Handoff): string {
  const lines = [`## Handoff from phase ${h.phase}`, ''];
  if (h.text) {
    lines.push(h.text);
    if (h.truncated) lines.push('', `(cut here: the rest of ${HANDOFF_FILE} is in the workspace of phase ${h.phase})`);
  } else lines.push(`Phase ${h.phase} completed${h.run ? ` (run ${h.run})` : ''} and left no ${HANDOFF_FILE}.`);
  if (h.notes) lines.push('', `Notes from its progress report: ${h.notes}`);
  return lines.join('\n');
}

/** The next phase's prompt: its task, then one handoff section per phase it depends on. */
export function composePhasePrompt(task: string, handoffs: Handoff[]): string {
  if (!handoffs.length) return task;
  return [task.replace(/\n+$/, ''), ...handoffs.map(handoffSection)].join('\n\n') + '\n';
}
