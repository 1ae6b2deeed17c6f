/**
 * A reader for the Prometheus text exposition format (version 0.0.4), enough to check values in
 * tests: HELP/TYPE lines, samples with escaped label values, +Inf/-Inf/NaN. It is strict — a line
 * it cannot read is an error — so a malformed /metrics fails the test rather than being skipped.
 * (promtool and a real Prometheus check the format independently in the integration tests.)
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  help: Map<string, string>;
  /** Samples of `name` whose labels include all of `labels`. */
  find(name: string, labels?: Record<string, string>): Sample[];
  /** The one sample of `name` matching `labels`; throws if there are none or several. */
  value(name: string, labels?: Record<string, string>): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN' || s === 'Nan') return NaN;
  const n = Number(s);
  if (s === '' || Number.isNaN(n)) throw new Error(`bad sample value "${s}"`);
  return n;
}

function parseLabels(s: string, at: number, line: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1; // after '{'
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
    if (!m) throw new Error(`bad label at column ${i}: ${s}`);
    i += m[0].length;
    let v = '';
    for (;;) {
      const c = line[i++];
      if (c === undefined) throw new Error(`unterminated label value: ${s}`);
      if (c === '"') break;
      if (c === '\\') {
        const e = line[i++];
        v += e === 'n' ? '\n' : e;
      } else v += c;
    }
    if (m[1] in labels) throw new Error(`duplicate label ${m[1]}: ${s}`);
    labels[m[1]] = v;
    if (line[i] === ',') i++;
  }
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (m?.[1] === 'TYPE') types.set(m[2], m[3]);
      else if (m?.[1] === 'HELP') help.set(m[2], m[3]);
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`bad sample line: ${line}`);
    let rest = name.length;
    let labels: Record<string, string> = {};
    if (line[rest] === '{') ({ labels, end: rest } = parseLabels(line, rest, line));
    const fields = line.slice(rest).trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2) throw new Error(`bad sample line: ${line}`);
    samples.push({ name, labels, value: parseValue(fields[0]) });
  }
  const find = (name: string, want: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    types,
    help,
    find,
    value(name, want = {}) {
      const found = find(name, want);
      if (found.length !== 1)
        throw new Error(`expected one sample ${name}${JSON.stringify(want)}, found ${found.length}`);
      return found[0].value;
    },
  };
}
