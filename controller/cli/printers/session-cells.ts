/**
 * The `get sessions` cells a CRD column cannot compute: ACTIVITY (what the agent is doing now),
 * CONTEXT (context-window use of the current run) and COST (its priced usage).
 */
import { isTrue } from '../../api/conditions.js';
import { currentPause } from '../../api/pause.js';
import type { AgentSession } from '../../api/session.js';
import type { Resource } from '../../api/types.js';

const QUESTION_WIDTH = 40;
const clip = (s: string, n: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/**
 * frozen, paused: REASON, stalled, waiting: QUESTION, busy, idle, starting, dialog, exited — for a
 * Running session; `<none>` otherwise. A frozen run is never "stalled": it is held on purpose.
 */
export function activity(s: AgentSession): string {
  const st = s.status;
  if (st?.frozen) return 'frozen';
  if (st?.phase !== 'Running') return '<none>';
  const pause = currentPause(st);
  if (pause) return `paused: ${pause.reason}`;
  const agent = st.agent?.run === st.run ? st.agent : undefined;
  if (isTrue(st.conditions, 'Stalled')) return 'stalled';
  if (agent?.state === 'waiting') {
    const q = agent.permission
      ? `permission ${agent.permission.tool}${agent.permission.command ? ` ${agent.permission.command}` : ''}`
      : (agent.reported?.detail ?? st.conditions?.find((c) => c.type === 'WaitingForInput')?.message ?? '');
    return q ? `waiting: ${clip(q, QUESTION_WIDTH)}` : 'waiting';
  }
  return agent?.state ?? '<none>';
}

/** "42%" of the current run's context window. */
export function contextCell(s: AgentSession): string {
  const c = s.status?.context;
  return c && c.run === s.status?.run ? `${Math.round(c.percent)}%` : '<none>';
}

/** "$1.23": the current run's estimated cost (only when every model it used is priced). */
export function costCell(s: AgentSession): string {
  const u = s.status?.usage;
  if (!u || u.run !== s.status?.run || u.costUSD === undefined) return '<none>';
  return `$${u.costUSD.toFixed(2)}`;
}

const CELLS: Record<string, (s: AgentSession) => string> = {
  activity,
  context: contextCell,
  cost: costCell,
};

/** The cell of a computed column of `kind`, or undefined when the column is read by its jsonPath. */
export function sessionCell(kind: string, column: string): ((o: Resource) => string) | undefined {
  if (kind !== 'AgentSession') return undefined;
  const f = CELLS[column.toLowerCase()];
  return f && ((o) => f(o));
}
