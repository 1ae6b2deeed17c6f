/** `get` tables from a CRD's additionalPrinterColumns, the way kubectl renders them. */
import type { KindInfo, PrinterColumn } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import type { Resource } from '../../api/types.js';
import { evalPath } from '../jsonpath.js';

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

export function header(kind: KindInfo, opts: TableOptions): string[] {
  const h: string[] = [];
  if (opts.allNamespaces && kind.namespaced) h.push('NAMESPACE');
  if (!kind.hideNameColumn) h.push('NAME');
  h.push(...visibleColumns(kind, !!opts.wide).map((c) => c.name.toUpperCase()));
  if (opts.showLabels) h.push('LABELS');
  return h;
}

function cell(col: PrinterColumn, obj: Resource, now: number): string {
  const values = evalPath(col.jsonPath, obj).filter((v) => v !== undefined && v !== null);
  if (values.length === 0) return '<none>';
  const v = values[0];
  if (col.type === 'date') return typeof v === 'string' ? age(v, now) : '<invalid>';
  if (col.type === 'number' && typeof v === 'number') return String(Math.round(v * 100) / 100);
  if (values.length > 1) return values.map(String).join(',');
  if (Array.isArray(v)) return v.map(String).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  // Table cells are single-line.
  return String(v).replace(/\s*\n\s*/g, ' ');
}

export function row(kind: KindInfo, obj: Resource, opts: TableOptions): string[] {
  const now = opts.now ?? Date.now();
  const r: string[] = [];
  if (opts.allNamespaces && kind.namespaced) r.push(obj.metadata.namespace ?? '');
  if (!kind.hideNameColumn) r.push(obj.metadata.name);
  for (const c of visibleColumns(kind, !!opts.wide)) {
    let v = cell(c, obj, now);
    // kubectl shows objects being deleted as Terminating in their status column.
    if (obj.metadata.deletionTimestamp && /^(phase|status)$/i.test(c.name)) v = 'Terminating';
    // A session no controller has looked at yet is Pending (what it will be), not "<none>".
    else if (v === '<none>' && obj.kind === 'AgentSession' && c.jsonPath === '.status.phase') v = 'Pending';
    // Long free text (an Event's message) would make every row hundreds of columns wide: cut it
    // in the table; -o wide, -o yaml and describe have it whole.
    if (!opts.wide && /^message$/i.test(c.name) && v.length > MESSAGE_WIDTH) v = `${v.slice(0, MESSAGE_WIDTH - 1)}…`;
    r.push(v);
  }
  if (opts.showLabels) {
    const l = Object.entries(obj.metadata.labels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    r.push(l || '<none>');
  }
  return r;
}
