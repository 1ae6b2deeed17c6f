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
const simpleParts = new Map<string, string[]>();

/** `.a.b[0].c` without filters or wildcards: walked directly (printer columns are mostly these). */
function simplePath(p: string, data: unknown): unknown[] {
  let parts = simpleParts.get(p);
  if (!parts) {
    parts = p.replace(/^\./, '').match(/[^.[\]]+/g) ?? [];
    simpleParts.set(p, parts);
  }
  let cur: unknown = data;
  for (const part of parts) {
    if (cur === null || typeof cur !== 'object') return [];
    cur = (cur as Record<string, unknown>)[part];
    if (cur === undefined) return [];
  }
  return [cur];
}

export function evalPath(path: string, data: unknown): unknown[] {
  const p = path.trim();
  if (SIMPLE.test(p)) return simplePath(p, data);
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
