/** `describe` output modelled on kubectl's generic describer (fields in Title Case, Events last). */
import type { KindInfo } from '../../api/crds.js';
import { age } from '../../api/duration.js';
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import { policyReach, selectorWords } from '../../api/policy.js';
import { LAST_APPLIED_ANNOTATION, type Resource } from '../../api/types.js';
import type { EventObject } from '../../client/events.js';
import { renderTable } from './table.js';

const ACRONYMS = new Set(['api', 'url', 'uid', 'id', 'cpu', 'ip', 'json', 'pid', 'tmux', 'mb', 'ema']);

/** camelCase → "Title Case", keeping acronyms (kubectl's smartLabelFor). */
export function smartLabel(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_-]+/)
    .map((w) => (ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join(' ');
}

const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '<unset>';
  return String(v);
}

function renderValue(lines: string[], indent: number, label: string, value: unknown, pad: number): void {
  const sp = ' '.repeat(indent);
  if (isMap(value)) {
    const keys = Object.keys(value).sort();
    if (!keys.length) return void lines.push(`${sp}${label}:`.padEnd(indent + pad) + '<none>');
    lines.push(`${sp}${label}:`);
    renderMap(lines, indent + 2, value);
  } else if (Array.isArray(value)) {
    if (!value.length) return void lines.push(`${sp}${`${label}:`.padEnd(pad)}<none>`);
    lines.push(`${sp}${label}:`);
    for (const item of value) {
      if (isMap(item)) renderMap(lines, indent + 2, item);
      else lines.push(`${sp}  ${scalar(item)}`);
    }
  } else if (typeof value === 'string' && value.includes('\n')) {
    lines.push(`${sp}${label}:`);
    for (const l of value.replace(/\n+$/, '').split('\n')) lines.push(`${sp}  ${l}`);
  } else {
    lines.push(`${sp}${`${label}:`.padEnd(pad)}${scalar(value)}`);
  }
}

function renderMap(lines: string[], indent: number, m: Record<string, unknown>): void {
  const keys = Object.keys(m).sort();
  const pad = Math.max(...keys.map((k) => smartLabel(k).length + 1)) + 2;
  for (const k of keys) renderValue(lines, indent, smartLabel(k), m[k], pad);
}

function kv(map: Record<string, string> | undefined, skip: string[] = []): string[] {
  const entries = Object.entries(map ?? {})
    .filter(([k]) => !skip.includes(k))
    .sort(([a], [b]) => a.localeCompare(b));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`) : ['<none>'];
}

/** The lines every describe starts with: name, namespace, labels, annotations, apiVersion and kind. */
export function describeHeader(kind: KindInfo, obj: Resource): string[] {
  const lines: string[] = [];
  const field = (label: string, values: string[]) => {
    lines.push(`${`${label}:`.padEnd(14)}${values[0]}`);
    for (const v of values.slice(1)) lines.push(`${' '.repeat(14)}${v}`);
  };
  field('Name', [obj.metadata.name]);
  if (kind.namespaced) field('Namespace', [obj.metadata.namespace ?? '']);
  field('Labels', kv(obj.metadata.labels));
  field('Annotations', kv(obj.metadata.annotations, [LAST_APPLIED_ANNOTATION]));
  field('API Version', [obj.apiVersion]);
  field('Kind', [obj.kind]);
  return lines;
}

export function describeObject(kind: KindInfo, obj: Resource, events: EventObject[], now = Date.now()): string {
  const lines = describeHeader(kind, obj);
  const { name: _n, namespace: _ns, labels: _l, annotations: _a, ...meta } = obj.metadata;
  renderValue(lines, 0, 'Metadata', meta, 0);
  const { apiVersion: _av, kind: _k, metadata: _m, ...rest } = obj;
  for (const key of Object.keys(rest).sort((a, b) => order(a) - order(b) || a.localeCompare(b)))
    renderValue(lines, 0, smartLabel(key), rest[key], 14);
  lines.push(...describeEvents(events, now));
  return lines.join('\n') + '\n';
}

/**
 * A SessionPolicy: the generic describer, with the selector in words (`{}` is every session, a
 * missing one none: docs/controller.md, "Selectors") and the sessions it governs now.
 */
export function describeSessionPolicy(
  kind: KindInfo,
  policy: SessionPolicy,
  sessions: AgentSession[],
  policies: SessionPolicy[],
  events: EventObject[],
  now = Date.now(),
): string {
  const words = selectorWords(policy);
  const shown = words ? { ...policy, spec: { ...policy.spec, selector: words } } : policy;
  const { governed } = policyReach(policy, sessions, policies);
  const names = governed.map((s) => s.metadata.name).sort();
  const list = names.length > 10 ? `${names.slice(0, 10).join(', ')}, … (${names.length})` : names.join(', ');
  const governs = names.length ? list : '<none>';
  return describeObject(kind, { ...shown, governs } as unknown as Resource, events, now);
}

const order = (k: string) => (k === 'spec' ? 0 : k === 'status' ? 2 : 1);

export function describeEvents(events: EventObject[], now = Date.now()): string[] {
  if (!events.length) return ['Events:       <none>'];
  const rows = [
    ['Type', 'Reason', 'Age', 'From', 'Message'],
    ['----', '------', '----', '----', '-------'],
    ...events.map((e) => {
      const last = age(e.lastTimestamp, now);
      const when = (e.count ?? 1) > 1 ? `${last} (x${e.count} over ${age(e.firstTimestamp, now)})` : last;
      return [e.type, e.reason, when, e.source?.component ?? e.reportingController ?? '', e.message];
    }),
  ];
  return [
    'Events:',
    ...renderTable(rows, 2)
      .trimEnd()
      .split('\n')
      .map((l) => `  ${l}`),
  ];
}
