/** `get` tables from a CRD's additionalPrinterColumns, the way kubectl renders them. */
import type { KindInfo, PrinterColumn } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import { nodeNotReady } from './node-not-ready.js';
import { pausedCell } from './paused.js';
import type { Resource } from '../../api/types.js';
import { evalPath, simpleKeys, valueAt } from '../jsonpath.js';
import { computedCell } from './node-cells.js';
import { sessionCell } from './session-cells.js';

export interface TableOptions {
  wide?: boolean;
  allNamespaces?: boolean;
  showLabels?: boolean;
  now?: number;
}

/** Widest a message cell gets in a table without -o wide. */
export const MESSAGE_WIDTH = 80;

function visibleColumns(kind: KindInfo, wide: boolean): PrinterColumn[] {
  return kind.columns.filter((c) => wide || !c.priority);
}

/** A visible column with what its cells need worked out once per kind, not once per row. */
interface ColumnPlan {
  col: PrinterColumn;
  /** The keys of a simple path, walked directly; other paths go through JSONPath. */
  keys?: string[];
  /** Shows Terminating while the object is being deleted. */
  status: boolean;
  /** Cut to MESSAGE_WIDTH unless -o wide. */
  message: boolean;
  /** A Why column names the first of its alternatives present (a Decision's guardrail, else its message). */
  first: boolean;
  /** An AgentSession's phase: Pending rather than <none> before a controller has seen it. */
  phase: boolean;
  /** An AgentSession's message: NodeNotReady while its node is not Ready (node-not-ready.ts). */
  sessionMessage: boolean;
  /** A cell its jsonPath cannot give (a Node's STATUS, CPU, MEMORY: nodes.ts). */
  computed?: (o: Resource) => string;
}

const plans = new WeakMap<KindInfo, { narrow?: ColumnPlan[]; wide?: ColumnPlan[] }>();

function columnPlans(kind: KindInfo, wide: boolean): ColumnPlan[] {
  let byWidth = plans.get(kind);
  if (!byWidth) {
    byWidth = {};
    plans.set(kind, byWidth);
  }
  const key = wide ? 'wide' : 'narrow';
  byWidth[key] ??= visibleColumns(kind, wide).map((col) => ({
    col,
    keys: simpleKeys(col.jsonPath),
    status: /^(phase|status)$/i.test(col.name),
    message: /^(message|why)$/i.test(col.name),
    first: /^why$/i.test(col.name),
    phase: col.jsonPath === '.status.phase',
    sessionMessage: col.jsonPath === '.status.message',
    computed: computedCell(kind.kind, col.name) ?? sessionCell(kind.kind, col.name),
  }));
  return byWidth[key];
}

export function header(kind: KindInfo, opts: TableOptions): string[] {
  const h: string[] = [];
  if (opts.allNamespaces && kind.namespaced) h.push('NAMESPACE');
  if (!kind.hideNameColumn) h.push('NAME');
  h.push(...visibleColumns(kind, !!opts.wide).map((c) => c.name.toUpperCase()));
  if (opts.showLabels) h.push('LABELS');
  return h;
}

function cell(plan: ColumnPlan, obj: Resource, now: number): string {
  const col = plan.col;
  let v: unknown;
  if (plan.keys) v = valueAt(plan.keys, obj);
  else {
    const values = evalPath(col.jsonPath, obj).filter((x) => x !== undefined && x !== null);
    v = values[0];
    // Several matches are listed, unless the column shows only the first (a date, a number, a Why).
    if (values.length > 1 && !plan.first && col.type !== 'date' && !(col.type === 'number' && typeof v === 'number'))
      return values.map(String).join(',');
  }
  if (v === undefined || v === null) return '<none>';
  if (col.type === 'date') return typeof v === 'string' ? age(v, now) : '<invalid>';
  if (col.type === 'number' && typeof v === 'number') return String(Math.round(v * 100) / 100);
  if (Array.isArray(v)) return v.map(String).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  // Table cells are single-line.
  const text = String(v);
  return text.includes('\n') ? text.replace(/\s*\n\s*/g, ' ') : text;
}

export function row(kind: KindInfo, obj: Resource, opts: TableOptions): string[] {
  return rows(kind, [obj], opts)[0];
}

/**
 * The rows of a table of objects of one kind. The columns are worked out once for the table, and
 * one loop builds every row: a function called once per row would get hot enough for V8 to
 * optimise it on a background thread, which a one-shot `get` then waits for before it can exit.
 */
export function rows(kind: KindInfo, objs: Resource[], opts: TableOptions): string[][] {
  const plans = columnPlans(kind, !!opts.wide);
  const out: string[][] = [];
  for (const obj of objs) {
    const now = opts.now ?? Date.now();
    const r: string[] = [];
    if (opts.allNamespaces && kind.namespaced) r.push(obj.metadata.namespace ?? '');
    if (!kind.hideNameColumn) r.push(obj.metadata.name);
    for (const plan of plans) {
      let v = plan.computed ? plan.computed(obj) : cell(plan, obj, now);
      // kubectl shows objects being deleted as Terminating in their status column.
      if (obj.metadata.deletionTimestamp && plan.status) v = 'Terminating';
      // A session no controller has looked at yet is Pending (what it will be), not "<none>".
      else if (v === '<none>' && plan.phase && obj.kind === 'AgentSession') v = 'Pending';
      // A run on a node that is not Ready: Unknown, as kubectl shows a pod on a lost node.
      else if ((plan.phase || plan.sessionMessage) && obj.kind === 'AgentSession' && nodeNotReady(obj))
        v = plan.phase ? 'Unknown' : `NodeNotReady: ${nodeNotReady(obj)}`;
      // A paused run says why and until when, as kubectl shows a pod's reason in place of its phase.
      else if (plan.phase && obj.kind === 'AgentSession') v = pausedCell(obj) ?? v;
      // Long free text (an Event's message) would make every row hundreds of columns wide: cut it
      // in the table; -o wide, -o yaml and describe have it whole.
      if (plan.message && !opts.wide && v.length > MESSAGE_WIDTH) v = `${v.slice(0, MESSAGE_WIDTH - 1)}…`;
      r.push(v);
    }
    if (opts.showLabels) {
      const l = Object.entries(obj.metadata.labels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      r.push(l || '<none>');
    }
    out.push(r);
  }
  return out;
}
