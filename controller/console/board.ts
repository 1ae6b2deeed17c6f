/**
 * The board's rows: one per AgentSession, its cells computed by the same column logic as
 * `orchctl get sessions -o wide` (cli/printers), and the filters a board URL carries.
 */
import type { KindInfo } from '../api/crds.js';
import { registry } from '../config/crds.js';
import { matches, parseSelector, type Selector } from '../api/labels.js';
import type { Resource } from '../api/types.js';
import { header, rows } from '../cli/printers/columns.js';

export const BOARD_COLUMNS = ['PHASE', 'ACTIVITY', 'PROJECT', 'NODE', 'CONTEXT', 'COST', 'TASK', 'AGE'] as const;

export interface BoardRow {
  key: string;
  namespace: string;
  name: string;
  cells: Record<(typeof BOARD_COLUMNS)[number], string>;
}

let kindInfo: KindInfo | undefined;
const sessionKind = () => (kindInfo ??= registry().resolve('agentsession'));

export const sessionKey = (o: Resource) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

/** The board rows of these sessions, in the order given. */
export function boardRows(sessions: Resource[], now = Date.now()): BoardRow[] {
  const kind = sessionKind();
  const head = header(kind, { wide: true });
  const at = BOARD_COLUMNS.map((c) => head.indexOf(c));
  return rows(kind, sessions, { wide: true, now }).map((r, i) => {
    const o = sessions[i];
    const cells = Object.fromEntries(BOARD_COLUMNS.map((c, j) => [c, at[j] < 0 ? '<none>' : r[at[j]]]));
    return {
      key: sessionKey(o),
      namespace: o.metadata.namespace ?? 'default',
      name: o.metadata.name,
      cells: cells as BoardRow['cells'],
    };
  });
}

const badRequest = (m: string) => Object.assign(new Error(m), { statusCode: 400 });

export interface BoardFilter {
  project?: string;
  phase?: string;
  label?: string;
  /** One session (namespace/name): a session page's live summary. */
  key?: string;
}

/** A filter from a URL's query (bad input is an error naming the field, answered 400). */
export function parseFilter(q: Record<string, unknown>): { filter: BoardFilter; match: (o: Resource) => boolean } {
  const str = (k: string) =>
    typeof q[k] === 'string' && (q[k] as string).trim() ? (q[k] as string).trim() : undefined;
  const filter: BoardFilter = { project: str('project'), phase: str('phase'), label: str('label'), key: str('key') };
  for (const [k, v] of Object.entries(filter))
    if (v && v.length > 253) throw badRequest(`filter ${k}: longer than 253 characters`);
  let sel: Selector;
  try {
    sel = parseSelector(filter.label);
  } catch (e) {
    throw badRequest(`filter label: ${(e as Error).message}`);
  }
  const match = (o: Resource) => {
    if (filter.key && sessionKey(o) !== filter.key) return false;
    const spec = o.spec as { projectRef?: string } | undefined;
    if (filter.project && spec?.projectRef !== filter.project) return false;
    const phase = (o.status as { phase?: string } | undefined)?.phase ?? 'Pending';
    if (filter.phase && phase.toLowerCase() !== filter.phase.toLowerCase()) return false;
    return matches(sel, o.metadata.labels);
  };
  return { filter, match };
}
