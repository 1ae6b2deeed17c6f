/**
 * kubectl-style JSONPath: printer-column paths (`.status.phase`,
 * `.status.conditions[?(@.type=="Ready")].status`) and `-o jsonpath=` templates with literal
 * text, `{.path}`, `{"\n"}` and `{range .items[*]}…{end}`. Path evaluation is jsonpath-plus.
 */
import { createRequire } from 'node:module';

// Loaded on first use: most paths are simple and never need it.
type JsonPathFn = (opts: { path: string; json: object; wrap: boolean; eval: 'safe' }) => unknown;
let jsonPathFn: JsonPathFn | undefined;
const JSONPath: JsonPathFn = (opts) => {
  jsonPathFn ??= (createRequire(import.meta.url)('jsonpath-plus') as { JSONPath: JsonPathFn }).JSONPath;
  return jsonPathFn(opts);
};

const SIMPLE = /^\.?[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*|\[\d+\])*$/;

// Split once per path, not once per row and column: a table of 1000 rows walks the same few paths.
const simpleParts = new Map<string, string[] | null>();

/**
 * The keys of a path without filters or wildcards (`.a.b[0].c` → a, b, 0, c: printer columns are
 * mostly these), walked directly by valueAt; undefined for any other path.
 */
export function simpleKeys(path: string): string[] | undefined {
  let keys = simpleParts.get(path);
  if (keys === undefined) {
    const p = path.trim();
    keys = SIMPLE.test(p) ? (p.replace(/^\./, '').match(/[^.[\]]+/g) ?? []) : null;
    simpleParts.set(path, keys);
  }
  return keys ?? undefined;
}

/** The value at simpleKeys' keys, undefined where the path leads nowhere. */
export function valueAt(keys: string[], data: unknown): unknown {
  let cur: unknown = data;
  for (const key of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
    if (cur === undefined) return undefined;
  }
  return cur;
}

export function evalPath(path: string, data: unknown): unknown[] {
  const keys = simpleKeys(path);
  if (keys) {
    const v = valueAt(keys, data);
    return v === undefined ? [] : [v];
  }
  const p = path.trim();
  const expr =
    p === '' || p === '.' || p === '@'
      ? '$'
      : p.startsWith('$')
        ? p
        : p.startsWith('@')
          ? `$${p.slice(1)}`
          : `$${p.startsWith('.') || p.startsWith('[') ? '' : '.'}${p}`;
  return JSONPath({ path: expr, json: data as object, wrap: true, eval: 'safe' }) as unknown[];
}

type Token = { t: 'text'; v: string } | { t: 'expr'; v: string } | { t: 'range'; v: string } | { t: 'end' };

function tokenize(tpl: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < tpl.length) {
    const open = tpl.indexOf('{', i);
    if (open < 0) {
      out.push({ t: 'text', v: tpl.slice(i) });
      break;
    }
    if (open > i) out.push({ t: 'text', v: tpl.slice(i, open) });
    let depth = 0;
    let j = open;
    let inStr = false;
    for (; j < tpl.length; j++) {
      const c = tpl[j];
      if (c === '"' && tpl[j - 1] !== '\\') inStr = !inStr;
      if (inStr) continue;
      if (c === '{') depth++;
      if (c === '}' && --depth === 0) break;
    }
    if (j >= tpl.length) throw new Error(`unclosed action in template "${tpl}"`);
    const body = tpl.slice(open + 1, j).trim();
    if (body.startsWith('"') && body.endsWith('"')) out.push({ t: 'text', v: JSON.parse(body) as string });
    else if (body.startsWith('range ')) out.push({ t: 'range', v: body.slice(6) });
    else if (body === 'end') out.push({ t: 'end' });
    else out.push({ t: 'expr', v: body });
    i = j + 1;
  }
  return out;
}

const show = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v));

function run(tokens: Token[], data: unknown): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (tok.t === 'text') out += tok.v;
    else if (tok.t === 'expr') out += evalPath(tok.v, data).map(show).join(' ');
    else if (tok.t === 'range') {
      let depth = 1;
      let j = i + 1;
      for (; j < tokens.length; j++) {
        if (tokens[j].t === 'range') depth++;
        if (tokens[j].t === 'end' && --depth === 0) break;
      }
      if (j >= tokens.length) throw new Error('{range} without {end} in template');
      const body = tokens.slice(i + 1, j);
      for (const item of evalPath(tok.v, data)) out += run(body, item);
      i = j;
    } else throw new Error('{end} without {range} in template');
  }
  return out;
}

export function renderTemplate(tpl: string, data: unknown): string {
  return run(tokenize(tpl), data);
}
