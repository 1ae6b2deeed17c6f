/**
 * `describe autopilot` and `describe decision`: what a person asks of them first, in kubectl's
 * layout (labels in a column of 14, tables indented by two, Events last) — an autopilot's level,
 * planner, last and next think, its decisions by phase and the newest ten; a decision's every spec
 * field, the snapshot it was decided on, the approval and what became of it.
 */
import { DECISION_PHASES, DEFAULTS, type Autopilot, type Decision } from '../../api/autopilot.js';
import type { KindInfo } from '../../api/crds.js';
import { age, humanDuration } from '../../api/duration.js';
import type { LabelSelectorSpec } from '../../api/labels.js';
import type { Condition } from '../../api/types.js';
import type { EventObject } from '../../client/events.js';
import { describeEvents, describeHeader } from './describe.js';
import { renderTable } from './table.js';

/** Decisions listed by describe autopilot. */
export const RECENT_DECISIONS = 10;
const LABEL_WIDTH = 14;

/** Lines of `Label:  value`, continuation and multi-line values indented under the value column. */
export class Lines {
  readonly lines: string[] = [];
  field(label: string, value: string | number | boolean | undefined, indent = 0, width = LABEL_WIDTH): void {
    const text = value === undefined || value === '' ? '<none>' : String(value);
    const [first, ...rest] = text.replace(/\n+$/, '').split('\n');
    const sp = ' '.repeat(indent);
    this.lines.push(`${sp}${`${label}:`.padEnd(width)}${first}`.trimEnd());
    for (const l of rest) this.lines.push(`${sp}${' '.repeat(width)}${l}`.trimEnd());
  }
  /** A long free text (a prompt) under its label, indented by two: it reads as a block. */
  block(label: string, text: string | undefined, indent = 0): void {
    if (!text) {
      this.field(label, undefined, indent);
      return;
    }
    const sp = ' '.repeat(indent);
    this.lines.push(`${sp}${label}:`);
    for (const l of text.replace(/\n+$/, '').split('\n')) this.lines.push(`${sp}  ${l}`.trimEnd());
  }
  table(label: string, rows: string[][], indent = 0): void {
    const sp = ' '.repeat(indent);
    if (rows.length < 2) {
      this.field(label, undefined, indent, Math.max(LABEL_WIDTH, label.length + 3));
      return;
    }
    this.lines.push(`${sp}${label}:`);
    for (const l of renderTable(rows, 2).trimEnd().split('\n')) this.lines.push(`${sp}  ${l}`.trimEnd());
  }
}

/** When a time is, relative to now: `5m ago`, `in 2m`. */
function when(time: string | undefined, now: number): string {
  if (!time) return '<none>';
  const t = Date.parse(time);
  if (Number.isNaN(t)) return time;
  return t > now ? `${time} (in ${humanDuration(t - now)})` : `${time} (${age(time, now)} ago)`;
}

/** A LabelSelectorSpec as `-l` would write it; `<all>` for the empty selector, `<none>` for a missing one. */
export function selectorText(s: LabelSelectorSpec | undefined): string {
  if (!s) return '<none>';
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  }
  return parts.length ? parts.join(',') : '<all>';
}

const plannerText = (planner: string | undefined, model: string | undefined) =>
  `${planner ?? 'heuristic'}${model ? ` (model ${model})` : ''}`;

/** Why a decision is in its phase: the guardrail that refused it, else the message. */
export const decisionWhy = (d: Decision): string => d.status?.guardrail ?? d.status?.message ?? '';

const target = (d: Decision) =>
  [d.spec?.target.project, d.spec?.target.session ?? d.status?.result?.session].filter(Boolean).join('/');

function conditions(l: Lines, list: Condition[] | undefined): void {
  const rows = (list ?? []).map((c) => [c.type, c.status, c.reason, c.message]);
  l.table('Conditions', [['Type', 'Status', 'Reason', 'Message'], ...rows]);
}

/** Newest first (by creation, then name: decisions of one think share their second). */
function newest(decisions: Decision[]): Decision[] {
  const t = (d: Decision) => Date.parse(d.metadata.creationTimestamp ?? '') || 0;
  return [...decisions].sort((a, b) => t(b) - t(a) || b.metadata.name.localeCompare(a.metadata.name));
}

export function describeAutopilot(
  kind: KindInfo,
  ap: Autopilot,
  decisions: Decision[],
  events: EventObject[],
  now = Date.now(),
): string {
  const l = new Lines();
  l.lines.push(...describeHeader(kind, ap));
  const spec = ap.spec ?? {};
  const st = ap.status ?? {};
  const level = spec.autonomyLevel ?? 'observe';
  // The last think may have decided under another level than the spec now says.
  l.field('Level', st.level && st.level !== level ? `${level} (last think: ${st.level})` : level);
  if (spec.suspend) l.field('Suspended', 'true (it does not think; approved decisions still execute)');
  l.field('Planner', plannerText(spec.planner?.backend, spec.planner?.model));
  const selector = `selector ${selectorText(spec.projectSelector)}`;
  l.field(
    'Projects',
    st.selectedProjects === undefined
      ? `${selector}; counted at the first think`
      : `${st.selectedProjects} selected, ${st.staleProjects ?? 0} stale (${selector})`,
  );
  l.field('Interval', spec.interval ?? DEFAULTS.interval);
  const last = st.lastThink;
  if (!last) l.field('Last Think', '<none>');
  else {
    l.lines.push('Last Think:');
    l.field('Time', when(last.time, now), 2, 12);
    l.field('Trigger', last.trigger, 2, 12);
    l.field('Planner', plannerText(last.planner, last.model), 2, 12);
    l.field('Duration', `${Math.round(last.durationMs)}ms`, 2, 12);
    l.field('Decisions', last.decisions, 2, 12);
    if (last.error) l.field('Error', last.error, 2, 12);
  }
  l.field('Next Think', spec.suspend ? '<suspended>' : when(st.nextThinkTime, now));
  const counts = DECISION_PHASES.filter((p) => st.counts?.[p]).map((p) => `${p} ${st.counts![p]}`);
  l.field('Decisions', counts.length ? counts.join(', ') : '<none>');
  guardrails(l, ap);
  const rows = newest(decisions)
    .slice(0, RECENT_DECISIONS)
    .map((d) => [
      d.metadata.name,
      d.spec?.action ?? '',
      target(d) || '<none>',
      d.status?.phase ?? '<none>',
      oneLine(decisionWhy(d)) || '<none>',
      age(d.metadata.creationTimestamp, now),
    ]);
  l.table(`Recent Decisions (newest ${RECENT_DECISIONS})`, [
    ['Name', 'Action', 'Target', 'Phase', 'Why', 'Age'],
    ...rows,
  ]);
  conditions(l, st.conditions);
  l.lines.push(...describeEvents(events, now));
  return l.lines.join('\n') + '\n';
}

/** A table cell: one line, at most 60 characters (describe decision has the whole text). */
function oneLine(s: string): string {
  const t = s.replace(/\s*\n\s*/g, ' ');
  return t.length > 60 ? `${t.slice(0, 59)}…` : t;
}

/** The guardrails in force, defaults included, so that a refusal can be read against them. */
function guardrails(l: Lines, ap: Autopilot): void {
  const g = ap.spec?.guardrails ?? {};
  const w = 22;
  l.lines.push('Guardrails:');
  l.field('Actions', (g.actions ?? ['start', 'stop', 'restart', 'notify', 'skip']).join(', '), 2, w);
  l.field(
    'Cooldowns',
    `same project ${g.cooldowns?.sameProject ?? DEFAULTS.sameProject}, ` +
      `same action ${g.cooldowns?.sameAction ?? DEFAULTS.sameAction}`,
    2,
    w,
  );
  l.field('Protected Projects', g.protectedProjects ? selectorText(g.protectedProjects) : 'spec.protected only', 2, w);
  l.field('Young Session Window', g.youngSessionWindow ?? DEFAULTS.youngSessionWindow, 2, w);
  l.field(
    'Error Retries',
    `${g.maxErrorRetries ?? DEFAULTS.maxErrorRetries} per ${g.errorRetryWindow ?? DEFAULTS.errorRetryWindow}`,
    2,
    w,
  );
  l.field('Staleness Days', g.stalenessDays ?? "(each Project's spec.staleAfter)", 2, w);
  l.field('Min Free Memory MB', g.minFreeMemoryMB ?? `${DEFAULTS.minFreeMemoryMB} (or the session policy's)`, 2, w);
  l.field('Max Active Sessions', g.maxActiveSessions ?? DEFAULTS.maxActiveSessions, 2, w);
  l.field('Max Starts Per Think', g.maxStartsPerThink ?? DEFAULTS.maxStartsPerThink, 2, w);
}

export function describeDecision(kind: KindInfo, d: Decision, events: EventObject[], now = Date.now()): string {
  const l = new Lines();
  l.lines.push(...describeHeader(kind, d));
  const spec = d.spec;
  if (spec) {
    l.field('Autopilot', `${spec.autopilot} (think ${spec.think})`);
    l.field('Action', spec.action);
    l.field('Project', spec.target.project);
    l.field('Session', spec.target.session);
    l.field('Priority', spec.priority);
    l.field('Level', spec.level);
    l.field('Planner', plannerText(spec.planner, spec.model));
    l.field('Reason', spec.reason);
    if (spec.prompt !== undefined || spec.action === 'start' || spec.action === 'restart')
      l.block('Prompt', spec.prompt);
    if (spec.message !== undefined || spec.action === 'notify') l.field('Message', spec.message);
    if (spec.recovery) {
      const r = spec.recovery;
      l.lines.push('Recovery:');
      l.field('Class', r.class, 2, 13);
      l.field('Attempt', r.attempt, 2, 13);
      l.field('Failed Run', `${r.session} run ${r.run}`, 2, 13);
      l.field('Evidence', r.evidence, 2, 13);
    }
    const objects = spec.snapshot.objects.map((o) => [
      o.kind,
      o.name,
      o.resourceVersion,
      o.generation === undefined ? '' : String(o.generation),
      o.run === undefined ? '' : String(o.run),
    ]);
    l.field('Snapshot', `revision ${spec.snapshot.revision}`);
    l.table('Snapshot Objects', [['Kind', 'Name', 'Resource Version', 'Generation', 'Run'], ...objects]);
    const a = spec.approval;
    if (!a) l.field('Approval', undefined);
    else {
      l.lines.push('Approval:');
      l.field('Verdict', a.verdict, 2, 12);
      l.field('By', a.by, 2, 12);
      l.field('At', when(a.at, now), 2, 12);
      if (a.message) l.field('Message', a.message, 2, 12);
    }
  }
  const st = d.status ?? {};
  l.lines.push('Status:');
  l.field('Phase', st.phase, 2, 15);
  if (st.guardrail) l.field('Guardrail', st.guardrail, 2, 15);
  l.field('Message', st.message, 2, 15);
  if (st.notifyAfter !== undefined) l.field('Notify After', st.notifyAfter, 2, 15);
  l.field('Decided At', st.decidedAt ? when(st.decidedAt, now) : undefined, 2, 15);
  l.field('Executed At', st.executedAt ? when(st.executedAt, now) : undefined, 2, 15);
  const result = [
    st.result?.session && `session ${st.result.session}`,
    st.result?.event && `event ${st.result.event}`,
  ].filter(Boolean);
  l.field('Result', result.join(', '), 2, 15);
  l.lines.push(...describeEvents(events, now));
  return l.lines.join('\n') + '\n';
}
