/**
 * `orchctl assess status [SESSION]` and `orchctl assess history [SESSION] [--since 7d]` (seed
 * 001's CLI): what the detector, the circuit breaker and the checkpoints say about sessions,
 * read from status, the session's checkpoints.jsonl and its event log (for the consumer lag).
 * Read-only; works without a controller. `-o json` prints the same facts as JSON.
 */
import {
  trajectoryPoints,
  type AssessmentStatus,
  type BreakerStatus,
  type BreakerThresholdsStatus,
  type CheckpointRecord,
  type DetectorState,
  type InterventionRecord,
  type Signal,
  type SignalRecord,
} from '../../api/assessment.js';
import { formatDuration, isGoDuration, parseDuration } from '../../api/duration.js';
import type { AgentSession } from '../../api/kinds.js';
import { orchctlHome } from '../../config/paths.js';
import type { Phase } from '../../api/phases.js';
import { checkpointsPath, readCheckpoints } from '../../store/checkpoints.js';
import { eventLogPath, LOG_START, readEventLog } from '../../store/eventlog.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';
import { renderTable } from '../printers/table.js';

export interface AssessOptions {
  namespace?: string;
  allNamespaces?: boolean;
  output?: string;
  since?: string;
}

interface View {
  session: AgentSession;
  detector?: DetectorState;
  breaker?: BreakerStatus;
  assessment?: AssessmentStatus;
  consumer: { position: number; lastSeq: number; lag: number };
}

const RULE = (title: string) => `${title}\n${'─'.repeat(title.length)}`;
const f2 = (n: number | undefined) => (typeof n === 'number' ? n.toFixed(2) : '-');
/** UTC, minutes: "2026-11-22 03:00". */
const date = (iso: string | undefined) =>
  iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toISOString().slice(0, 16).replace('T', ' ') : '-';
const time = (iso: string | undefined) =>
  iso && !Number.isNaN(Date.parse(iso)) ? new Date(iso).toISOString().slice(11, 19) : '-';

/** "7d", "12h", "90m" (days besides Go durations). */
export function parseSince(s: string): number {
  const days = /^(\d+(?:\.\d+)?)d$/.exec(s);
  if (days) return Number(days[1]) * 86_400_000;
  if (!isGoDuration(s)) throw new Error(`--since must be a duration like 7d, 12h or 30m, got "${s}"`);
  return parseDuration(s);
}

const SPARK = '▁▂▃▄▅▆▇█';
export function sparkline(points: number[]): string {
  return points.map((v) => SPARK[Math.max(0, Math.min(7, Math.floor(v * 8)))]).join('');
}

function viewOf(session: AgentSession, home: string): View {
  const st = session.status ?? {};
  const a = st.assessment;
  const position = a?.position ?? LOG_START;
  // Only what follows the committed position is read: the lag costs the unread part, not the log.
  let lastSeq = position.seq;
  try {
    lastSeq = readEventLog(eventLogPath(home, session.metadata.namespace ?? 'default', session.metadata.name), position)
      .next.seq;
  } catch {
    /* no log */
  }
  return {
    session,
    detector: st.detector,
    breaker: st.breaker,
    assessment: a,
    consumer: { position: position.seq, lastSeq, lag: Math.max(0, lastSeq - position.seq) },
  };
}

async function load(
  names: string[],
  opts: AssessOptions,
  g: GlobalOptions,
): Promise<{ views: View[]; home: string; ns?: string }> {
  const home = g.home ?? orchctlHome();
  const ctx = openContext(g, { readonly: true });
  try {
    const kind = ctx.reg.resolve('agentsession');
    const ns = opts.allNamespaces ? undefined : namespaceFor(kind, opts.namespace);
    let sessions: AgentSession[];
    if (names.length) {
      sessions = [];
      for (const raw of names) {
        const n = raw.includes('/') ? raw.split('/')[1] : raw;
        const o = await ctx.store.get({ kind: 'AgentSession', namespace: ns ?? 'default', name: n });
        if (!o) throw new Error(`agentsessions "${n}" not found in namespace ${ns ?? 'default'}`);
        sessions.push(o);
      }
    } else sessions = (await ctx.store.list('AgentSession', ns ? { namespace: ns } : {})).items;
    sessions.sort(
      (a, b) =>
        (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
    return { views: sessions.map((s) => viewOf(s, home)), home, ns };
  } finally {
    await ctx.close();
  }
}

function checkOutput(o: string | undefined): 'json' | 'text' {
  if (o === undefined || o === '') return 'text';
  if (o === 'json') return 'json';
  throw new Error(`unknown output format "${o}": use -o json`);
}

const th = (b: BreakerStatus | undefined, k: keyof BreakerThresholdsStatus) => b?.thresholds?.[k];

function breakerLine(b: BreakerStatus | undefined, d: DetectorState | undefined): string {
  if (!b) return 'Circuit Breaker: - (no events assessed yet)';
  const word = b.state === 'Closed' ? 'OK' : b.state === 'HalfOpen' ? `HALF-OPEN (${b.reason})` : `OPEN (${b.reason})`;
  const frustration = f2(d?.frustrationEma ?? b.frustrationEma);
  return `Circuit Breaker: ${word} (frustration: ${frustration}, threshold: ${f2(th(b, 'frustrationThreshold'))})`;
}

function signalSummary(d: DetectorState | undefined): string {
  if (!d) return '-';
  const parts = Object.entries(d.counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, v]) => `${v}x ${k}`);
  return parts.length ? parts.join(', ') : 'none';
}

/** "2x UserCorrection (msgs 15, 22)": the counts, with the message indices of the signals status still lists. */
function signalLines(d: DetectorState | undefined, sinceMs?: number): string[] {
  if (!d || !Object.keys(d.counts).length) return ['None'];
  const listed = new Map<Signal, SignalRecord[]>();
  for (const r of d.lastSignals)
    if (sinceMs === undefined || Date.parse(r.at) >= sinceMs)
      listed.set(r.signal, [...(listed.get(r.signal) ?? []), r]);
  return Object.entries(d.counts)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([sig, n]) => {
      const recs = listed.get(sig as Signal) ?? [];
      const msgs = [...new Set(recs.map((r) => r.msg))];
      const where = msgs.length
        ? ` (msg${msgs.length === 1 && n === 1 ? '' : 's'} ${msgs.join(', ')}${recs.length < n ? ', …' : ''})`
        : '';
      return `• ${n}x ${sig}${where}`;
    });
}

function interventionLines(list: InterventionRecord[]): string[] {
  if (!list.length) return [];
  return list.map(
    (i) =>
      `• ${i.type} at ${date(i.decidedTime)} (seq ${i.seq}): ` +
      `${i.delivered ? 'delivered' : `not delivered (${i.result})`} — ${i.why}`,
  );
}

// ---- assess status --------------------------------------------------------------------------

export async function assessStatusCommand(
  name: string | undefined,
  opts: AssessOptions,
  g: GlobalOptions,
): Promise<void> {
  const format = checkOutput(opts.output);
  const { views, ns } = await load(name ? [name] : [], opts, g);
  if (format === 'json') {
    const items = views.map((v) => ({
      namespace: v.session.metadata.namespace,
      name: v.session.metadata.name,
      run: v.detector?.run ?? v.session.status?.run ?? 0,
      breaker: v.breaker ?? null,
      detector: v.detector ?? null,
      checkpoints: v.assessment?.checkpoints ?? null,
      pendingIntervention: v.assessment?.pendingIntervention ?? null,
      consumer: v.consumer,
      condition: v.session.status?.conditions?.find((c) => c.type === 'BreakerOpen') ?? null,
    }));
    return void out(`${JSON.stringify(name ? items[0] : { items }, null, 2)}\n`);
  }
  if (name) return void out(detail(views[0]));
  if (!views.length) return void err(`No resources found${ns ? ` in ${ns} namespace` : ''}.\n`);
  const rows = [
    [
      ...(opts.allNamespaces ? ['NAMESPACE'] : []),
      'NAME',
      'RUN',
      'BREAKER',
      'REASON',
      'FRUSTRATION',
      'SUCCESS',
      'FAILURES',
      'CORRECTIONS',
      'SIGNALS',
      'CHECKPOINTS',
      'INTERVENTIONS',
      'LAG',
    ],
  ];
  for (const v of views) {
    const b = v.breaker;
    const d = v.detector;
    const n = (k: Signal) => d?.counts[k] ?? 0;
    rows.push([
      ...(opts.allNamespaces ? [v.session.metadata.namespace ?? ''] : []),
      v.session.metadata.name,
      String(d?.run ?? v.session.status?.run ?? 0),
      b?.state ?? '-',
      b && b.state !== 'Closed' ? (b.reason ?? '-') : '-',
      d ? `${f2(d.frustrationEma)}/${f2(th(b, 'frustrationThreshold'))}` : '-',
      d ? f2(d.successEma) : '-',
      b ? `${b.consecutiveFailures}/${th(b, 'failureThreshold') ?? '-'}` : '-',
      b ? `${b.correctionTimes.length}/${th(b, 'correctionThreshold') ?? '-'}` : '-',
      d ? String(Object.values(d.counts).reduce((a, c) => a + c, 0) - n('Commit')) : '-',
      String(v.assessment?.checkpoints.count ?? 0),
      String(b?.interventions ?? 0),
      String(v.consumer.lag),
    ]);
  }
  out(renderTable(rows));
}

function detail(v: View): string {
  const b = v.breaker;
  const d = v.detector;
  const a = v.assessment;
  const s = v.session;
  const L: string[] = [];
  L.push(RULE('Assessment Status'));
  L.push(
    `Session: ${s.metadata.namespace}/${s.metadata.name} (run ${d?.run ?? s.status?.run ?? 0}, ` +
      `phase ${s.status?.phase ?? 'Pending'}${a?.policy ? `, policy ${a.policy}` : ''})`,
  );
  L.push(breakerLine(b, d));
  if (b && b.state !== 'Closed') {
    L.push(`  ${b.message ?? ''}`);
    const cooldown = th(b, 'cooldownSeconds');
    if (b.state === 'Open' && b.openedTime && cooldown !== undefined)
      L.push(
        `  opened ${date(b.openedTime)} UTC; half-open after the cooldown (${formatDuration(cooldown * 1000)}), ` +
          `at ${time(new Date(Date.parse(b.openedTime) + cooldown * 1000).toISOString())} UTC`,
      );
    if (b.state === 'HalfOpen') L.push('  half-open: a healthy turn closes it');
  }
  L.push('');
  L.push(RULE('Breaker Thresholds'));
  if (b) {
    const win = th(b, 'correctionWindowSeconds');
    L.push(
      ...renderTable([
        ['Consecutive failures', `${b.consecutiveFailures} / ${th(b, 'failureThreshold') ?? '-'}`],
        [
          `Corrections in ${win !== undefined ? formatDuration(win * 1000) : '-'}`,
          `${b.correctionTimes.length} / ${th(b, 'correctionThreshold') ?? '-'}`,
        ],
        ['Frustration EMA', `${f2(d?.frustrationEma ?? b.frustrationEma)} / ${f2(th(b, 'frustrationThreshold'))}`],
        ['Turns without progress', `${b.noProgressTurns} / ${th(b, 'noProgressTurns') || 'off'}`],
        ['Cooldown', th(b, 'cooldownSeconds') !== undefined ? formatDuration(th(b, 'cooldownSeconds')! * 1000) : '-'],
        ['Times opened (this run)', String(b.trips)],
      ])
        .trimEnd()
        .split('\n'),
    );
  } else L.push('-');
  L.push('');
  L.push(RULE('Active Session'));
  const turns = a?.turn.count ?? 0;
  L.push(`Messages: ${d?.messages ?? 0} (user ${d?.userMessages ?? 0}), events ${d?.events ?? 0}, turns ${turns}`);
  L.push(`Frustration EMA: ${f2(d?.frustrationEma)}`);
  L.push(`Success EMA: ${f2(d?.successEma)}`);
  L.push(`Signals: ${signalSummary(d)}`);
  const lastSummary = a?.checkpoints.lastSummary ? ` (last: "${a.checkpoints.lastSummary}")` : '';
  L.push(`Checkpoints: ${a?.checkpoints.count ?? 0}${lastSummary}`);
  L.push(`Interventions: ${b?.interventions ?? 0}`);
  L.push(...interventionLines(b?.history ?? []).map((x) => `  ${x}`));
  const pending = a?.pendingIntervention;
  if (pending)
    L.push(
      `  pending: ${pending.type} (decided ${date(pending.decidedTime)}` +
        `${pending.attemptTime ? ', attempt under way' : ''})`,
    );
  L.push('');
  L.push(RULE('Consumer Status'));
  L.push(`assessment: offset ${v.consumer.position}/${v.consumer.lastSeq} (lag: ${v.consumer.lag})`);
  return `${L.join('\n')}\n`;
}

// ---- assess history -------------------------------------------------------------------------

interface Outcome {
  outcome: string;
  confidence?: number;
}

const ENDED_OUTCOME: Partial<Record<Phase, string>> = {
  Succeeded: 'succeeded',
  Failed: 'failed',
  Killed: 'killed',
  TimedOut: 'timed-out',
};

function outcomeOf(s: AgentSession): Outcome {
  const ev = s.status?.lastEvaluation;
  if (ev?.outcome)
    return { outcome: ev.outcome, ...(typeof ev.confidence === 'number' ? { confidence: ev.confidence } : {}) };
  const phase = s.status?.phase ?? 'Pending';
  return { outcome: ENDED_OUTCOME[phase] ?? phase.toLowerCase() };
}

const startOf = (v: View) => v.session.status?.startTime ?? v.session.metadata.creationTimestamp;
const lastActive = (v: View) => {
  const t = [v.detector?.lastEventTime, v.session.status?.completionTime, startOf(v)]
    .map((x) => Date.parse(x ?? ''))
    .filter((x) => !Number.isNaN(x));
  return t.length ? Math.max(...t) : 0;
};

export async function assessHistoryCommand(
  name: string | undefined,
  opts: AssessOptions,
  g: GlobalOptions,
): Promise<void> {
  const format = checkOutput(opts.output);
  const sinceMs = Date.now() - parseSince(opts.since ?? '7d');
  const { views, home } = await load(name ? [name] : [], opts, g);
  if (name) {
    const v = views[0];
    const cps = readCheckpoints(
      checkpointsPath(home, v.session.metadata.namespace ?? 'default', v.session.metadata.name),
    ).filter((c) => Date.parse(c.time) >= sinceMs);
    const interventions = (v.breaker?.history ?? []).filter((i) => Date.parse(i.decidedTime) >= sinceMs);
    if (format === 'json') {
      const d = v.detector;
      return void out(
        `${JSON.stringify(
          {
            namespace: v.session.metadata.namespace,
            name: v.session.metadata.name,
            run: d?.run ?? v.session.status?.run ?? 0,
            start: startOf(v),
            end: v.session.status?.completionTime ?? null,
            messages: d?.messages ?? 0,
            ...outcomeOf(v.session),
            frustrationEma: d?.frustrationEma ?? null,
            trajectory: d ? { stride: d.trajectory.stride, points: trajectoryPoints(d) } : null,
            checkpoints: cps,
            signals: d?.counts ?? {},
            lastSignals: (d?.lastSignals ?? []).filter((r) => Date.parse(r.at) >= sinceMs),
            interventions,
          },
          null,
          2,
        )}\n`,
      );
    }
    return void out(historyDetail(v, cps, interventions, sinceMs));
  }
  const recent = views
    .filter((v) => lastActive(v) >= sinceMs)
    .sort((a, b) => lastActive(b) - lastActive(a) || a.session.metadata.name.localeCompare(b.session.metadata.name));
  if (format === 'json') {
    const items = recent.map((v) => ({
      namespace: v.session.metadata.namespace,
      name: v.session.metadata.name,
      run: v.detector?.run ?? v.session.status?.run ?? 0,
      ...outcomeOf(v.session),
      messages: v.detector?.messages ?? 0,
      frustrationEma: v.detector?.frustrationEma ?? null,
      interventions: v.breaker?.interventions ?? 0,
      start: startOf(v),
    }));
    return void out(`${JSON.stringify({ since: new Date(sinceMs).toISOString(), items }, null, 2)}\n`);
  }
  const title = `Session History (last ${opts.since ?? '7d'})`;
  if (!recent.length) return void out(`${RULE(title)}\nNo sessions.\n`);
  const rows = [
    [
      ...(opts.allNamespaces ? ['NAMESPACE'] : []),
      'SESSION',
      'RUN',
      'OUTCOME',
      'MSGS',
      'FRUST',
      'INTERVENTIONS',
      'DATE',
    ],
  ];
  for (const v of recent)
    rows.push([
      ...(opts.allNamespaces ? [v.session.metadata.namespace ?? ''] : []),
      v.session.metadata.name,
      String(v.detector?.run ?? v.session.status?.run ?? 0),
      outcomeOf(v.session).outcome,
      String(v.detector?.messages ?? 0),
      f2(v.detector?.frustrationEma),
      String(v.breaker?.interventions ?? 0),
      date(startOf(v)),
    ]);
  out(`${RULE(title)}\n${renderTable(rows)}\nUse \`orchctl assess history <session>\` for details.\n`);
}

function historyDetail(v: View, cps: CheckpointRecord[], interventions: InterventionRecord[], sinceMs: number): string {
  const s = v.session;
  const d = v.detector;
  const L: string[] = [];
  L.push(RULE(`Session: ${s.metadata.name}`));
  L.push(`Date: ${date(startOf(v))} UTC`);
  const start = Date.parse(s.status?.startTime ?? '');
  const end = Date.parse(s.status?.completionTime ?? d?.lastEventTime ?? '');
  L.push(`Duration: ${!Number.isNaN(start) && !Number.isNaN(end) && end >= start ? formatDuration(end - start) : '-'}`);
  L.push(`Run: ${d?.run ?? s.status?.run ?? 0}`);
  L.push(`Messages: ${d?.messages ?? 0}`);
  const o = outcomeOf(s);
  L.push(`Outcome: ${o.outcome}${o.confidence !== undefined ? ` (confidence: ${o.confidence.toFixed(2)})` : ''}`);
  L.push('');
  L.push(RULE('Frustration Trajectory'));
  const pts = d ? trajectoryPoints(d) : [];
  if (pts.length) {
    const line = sparkline(pts);
    L.push(`0.0 ${line} 1.0`);
    L.push(`    Start${' '.repeat(Math.max(1, line.length - 8))}End`);
    const stride = d!.trajectory.stride;
    const points = `${pts.length} point${pts.length === 1 ? '' : 's'}`;
    L.push(`    (${points}, ${stride} user message${stride === 1 ? '' : 's'} each; now ${f2(d!.frustrationEma)})`);
  } else L.push('No user messages scored yet.');
  L.push('');
  L.push(RULE('Checkpoints'));
  for (const [i, c] of cps.entries()) {
    const run = c.run !== (d?.run ?? c.run) ? `, run ${c.run}` : '';
    L.push(`${i + 1}. "${c.title}" (msgs ${c.firstMsg}-${c.lastMsg}, ${c.trigger}${run})`, `   ${c.summary}`);
  }
  if (!cps.length) L.push('None');
  L.push('');
  L.push(RULE('Signals Detected'));
  L.push(...signalLines(d, sinceMs));
  L.push('');
  const iv = interventionLines(interventions);
  L.push(`Interventions: ${iv.length ? '' : 'None'}`.trimEnd());
  L.push(...iv);
  return `${L.join('\n')}\n`;
}
