/**
 * What one phase hands to the next: the handoff.md its agent wrote in its run's workspace
 * (status.workspace) and the notes of its progress report (status.json), read with a bound and
 * cleaned of control characters (agent-written text going into another agent's prompt), composed
 * under "## Handoff from phase <name>" below the next phase's task.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HANDOFF_LIMITS } from '../../api/pipeline.js';
import type { AgentSession } from '../../api/session.js';
import { MAX_REPORT_BYTES, readReport } from '../../observers/report.js';
import { clean, parseReport } from '../session/report.js';

export const HANDOFF_FILE = 'handoff.md';

export interface Handoff {
  phase: string;
  run?: number;
  /** handoff.md as read (cleaned, clipped), when there was one. */
  text?: string;
  truncated?: boolean;
  /** The report's notes, when its status.json is valid and has them. */
  notes?: string;
}

/** Control characters out except newlines and tabs (terminal escapes included). */
const printable = (s: string) => s.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');

/** The first `max` bytes of a file, and whether there was more; undefined when it cannot be read. */
function readBounded(file: string, max: number): { text: string; truncated: boolean } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(max + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    // Cut at the bound, then drop a multi-byte character the cut split (it decodes as U+FFFD).
    const text = buf
      .subarray(0, Math.min(n, max))
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    return { text, truncated: n > max };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The handoff of a completed phase's session (its current run's workspace); `bytes` bounds handoff.md. */
export function readHandoff(phase: string, s: AgentSession | undefined, bytes: number): Handoff {
  const ws = s?.status?.workspace;
  const out: Handoff = { phase, ...(s?.status?.run ? { run: s.status.run } : {}) };
  if (!ws) return out;
  const h = readBounded(path.join(ws, HANDOFF_FILE), bytes);
  if (h?.text.trim()) Object.assign(out, { text: printable(h.text).trim(), truncated: h.truncated });
  const r = readReport(ws, undefined);
  const parsed = r ? parseReport(r, MAX_REPORT_BYTES) : undefined;
  if (parsed?.ok && parsed.report.notes) out.notes = clean(parsed.report.notes, HANDOFF_LIMITS.notes);
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
