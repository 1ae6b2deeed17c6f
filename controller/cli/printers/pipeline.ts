/**
 * `describe pipeline`: the pipeline's status, then its phases as a table (state, session, run,
 * recoveries, age, why), the last resume, its conditions and Events — kubectl's layout, as
 * describe autopilot has it.
 */
import type { KindInfo } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import { dependencies, type Pipeline } from '../../api/pipeline.js';
import type { EventObject } from '../../client/events.js';
import { Lines } from './autopilot.js';
import { describeEvents, describeHeader } from './describe.js';

/** A table cell: one line, at most 70 characters (the status has the whole text). */
function cell(s: string | undefined): string {
  const t = (s ?? '').replace(/\s*\n\s*/g, ' ');
  if (!t) return '<none>';
  return t.length > 70 ? `${t.slice(0, 69)}…` : t;
}

export function describePipeline(kind: KindInfo, p: Pipeline, events: EventObject[], now = Date.now()): string {
  const l = new Lines();
  l.lines.push(...describeHeader(kind, p));
  const spec = p.spec ?? { phases: [] };
  const st = p.status ?? {};
  l.field('Status', st.phase ?? 'Pending');
  l.field('Phase', st.current ?? `0/${spec.phases.length}`);
  if (st.message) l.field('Message', st.message);
  if (spec.suspend) l.field('Suspended', 'true (no new phase starts; running ones go on)');
  l.field('Started', st.startTime);
  if (st.completionTime) l.field('Completed', st.completionTime);
  const deps = dependencies(spec);
  const byName = new Map((st.phases ?? []).map((x) => [x.name, x]));
  const rows = spec.phases.map((ph) => {
    const x = byName.get(ph.name);
    return [
      ph.name,
      x?.state ?? 'Pending',
      (deps.get(ph.name) ?? []).join(',') || '<none>',
      x?.session ?? '<none>',
      x?.run ? String(x.run) : '<none>',
      String(x?.attempts ?? 0),
      x?.startedAt ? age(x.startedAt, now) : '<none>',
      cell([x?.reason, x?.message].filter(Boolean).join(': ')),
    ];
  });
  l.table('Phases', [['Name', 'State', 'Depends On', 'Session', 'Run', 'Recoveries', 'Age', 'Why'], ...rows]);
  const problems = (st.phases ?? []).filter((x) => x.reportProblem);
  for (const x of problems) l.field(`Report ${x.name}`, x.reportProblem);
  const r = st.resume;
  if (r) {
    l.lines.push('Last Resume:');
    l.field('Requested', r.requested, 2, 12);
    l.field('State', r.state, 2, 12);
    if (r.phases?.length) l.field('Phases', r.phases.join(', '), 2, 12);
    if (r.message) l.field('Message', r.message, 2, 12);
  }
  const conds = (st.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]);
  l.table('Conditions', [['Type', 'Status', 'Reason', 'Message'], ...conds]);
  l.lines.push(...describeEvents(events, now));
  return l.lines.join('\n') + '\n';
}
