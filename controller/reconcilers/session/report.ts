/**
 * status.report, pure: the agent's status.json (read by observers/report.ts) parsed, validated
 * against api/report.ts's schema and cleaned, then mirrored into status with an Event on each
 * change. A file that cannot be used is a warning and a `problem`, never a crash, and the last
 * good figures stay. Everything agent-written is stripped of control characters and clipped
 * before it reaches status or an Event.
 */
import { Ajv } from 'ajv';
import { type AgentReport, REPORT_LIMITS, REPORT_SCHEMA } from '../../api/report.js';
import { HANDOFF_LIMITS } from '../../api/pipeline.js';
import type { ReportStatus } from '../../api/session.js';
import type { EventType } from '../../api/event.js';
import { SessionReason } from '../../api/event-reasons.js';
import type { ReportReading } from '../../observers/report.js';

const validate = new Ajv({ allErrors: false, strict: false }).compile<AgentReport>(REPORT_SCHEMA);

/** Longest problem message kept. */
const MAX_PROBLEM = 300;

/** Control characters (terminal escapes included) out, whitespace runs to one space, then clipped. */
export function clean(s: string, max: number): string {
  const t = s
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

export type Parsed = { ok: true; report: AgentReport } | { ok: false; problem: string };

/** The reading as a report, or why it cannot be used. */
export function parseReport(r: ReportReading, maxBytes: number): Parsed {
  if (r.text === undefined)
    return { ok: false, problem: `status.json is ${r.size} bytes, over the ${maxBytes / 1024} KiB limit; ignored` };
  let v: unknown;
  try {
    v = JSON.parse(r.text);
  } catch (e) {
    return { ok: false, problem: clean(`status.json is not valid JSON: ${(e as Error).message}`, MAX_PROBLEM) };
  }
  if (!validate(v)) {
    const e = validate.errors?.[0];
    const where = e?.instancePath || '(the document)';
    return {
      ok: false,
      problem: clean(`status.json does not match the report schema: ${where} ${e?.message}`, MAX_PROBLEM),
    };
  }
  return { ok: true, report: v };
}

export interface ReportEvent {
  type: EventType;
  reason: (typeof SessionReason)['ReportUpdated' | 'ReportBlocked' | 'ReportComplete' | 'InvalidReport'];
  message: string;
}

/**
 * status.report after a reading of run `run`'s file, and the Event it calls for: on a change of
 * status, tasks done or blocker (not on a rewrite that changes nothing of those), and on each
 * change of a file that cannot be used.
 */
export function applyReport(
  prev: ReportStatus | undefined,
  run: number,
  reading: ReportReading,
  maxBytes: number,
  now: string,
): { report: ReportStatus; event?: ReportEvent } {
  const base: ReportStatus = prev?.run === run ? { ...prev } : { run, stamp: '' };
  base.stamp = reading.stamp;
  const parsed = parseReport(reading, maxBytes);
  if (!parsed.ok) {
    base.problem = parsed.problem;
    return { report: base, event: { type: 'Warning', reason: SessionReason.InvalidReport, message: parsed.problem } };
  }
  const r = parsed.report;
  const tasks = r.tasks ?? [];
  const done = tasks.filter((t) => t.state === 'done').length;
  const current = tasks.find((t) => t.state === 'in_progress')?.subject;
  const blocker = r.blocker !== undefined ? clean(r.blocker, REPORT_LIMITS.blocker) : undefined;
  const report: ReportStatus = {
    run,
    status: r.status,
    tasksDone: done,
    tasksTotal: tasks.length,
    progress: `${done}/${tasks.length}`,
    ...(current !== undefined ? { currentTask: clean(current, REPORT_LIMITS.subject) } : {}),
    ...(blocker ? { blocker } : {}),
    // Kept for a pipeline's next phase (its handoff), which may be read on another host.
    ...(r.notes?.trim() ? { notes: clean(r.notes, HANDOFF_LIMITS.notes) } : {}),
    updatedAt: now,
    stamp: reading.stamp,
  };
  const changed =
    base.status !== report.status || base.tasksDone !== report.tasksDone || base.blocker !== report.blocker;
  if (!changed) return { report };
  return { report, event: reportEvent(report, base.status) };
}

/** Longest blocker or task subject quoted in an Event. */
const EVENT_QUOTE = 300;

function reportEvent(r: ReportStatus, was: ReportStatus['status']): ReportEvent {
  const blocker = r.blocker && clean(r.blocker, EVENT_QUOTE);
  const figures = `${r.progress} tasks done`;
  if (r.status === 'blocked' && was !== 'blocked')
    return {
      type: 'Warning',
      reason: SessionReason.ReportBlocked,
      message: `agent reports blocked (${figures}): ${blocker || 'no reason given'}`,
    };
  if (r.status === 'complete' && was !== 'complete')
    return { type: 'Normal', reason: SessionReason.ReportComplete, message: `agent reports complete (${figures})` };
  const cur = r.currentTask ? `; current: ${clean(r.currentTask, EVENT_QUOTE)}` : '';
  const blk = blocker ? `; blocker: ${blocker}` : '';
  return {
    type: 'Normal',
    reason: SessionReason.ReportUpdated,
    message: `agent reports ${r.status} (${figures})${cur}${blk}`,
  };
}
