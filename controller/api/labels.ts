/**
 * Label selectors as kubectl parses them (apimachinery pkg/labels/selector.go):
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k` (exists), `!k`; comma means AND.
 */
import { ApiError } from './errors.js';
import { checkLabelValue, checkQualifiedName } from './names.js';

export type Requirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!exists' };

export type Selector = Requirement[];

export function parseSelector(text: string | undefined): Selector {
  if (!text || !text.trim()) return [];
  const reqs: Selector = [];
  // Split on commas that are not inside parentheses.
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      const values = m[3]
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      values.forEach((v) => checkValue(v, p));
      reqs.push({ key: checkKey(m[1], p), op: m[2] as 'in' | 'notin', values });
    } else if ((m = p.match(/^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/))) {
      checkValue(m[3], p);
      reqs.push({ key: checkKey(m[1], p), op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]] });
    } else if ((m = p.match(/^!\s*([^\s!=(),]+)$/))) {
      reqs.push({ key: checkKey(m[1], p), op: '!exists' });
    } else if ((m = p.match(/^([^\s!=(),]+)$/))) {
      reqs.push({ key: checkKey(m[1], p), op: 'exists' });
    } else {
      throw new ApiError('BadRequest', `unable to parse requirement: "${p}" in label selector "${text}"`);
    }
  }
  return reqs;
}

function checkKey(k: string, part: string): string {
  const e = checkQualifiedName(k);
  if (e) throw new ApiError('BadRequest', `invalid label key "${k}" in "${part}": ${e}`);
  return k;
}

function checkValue(v: string, part: string): void {
  const e = checkLabelValue(v);
  if (e) throw new ApiError('BadRequest', `invalid label value "${v}" in "${part}": ${e}`);
}

export function matches(sel: Selector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return sel.every((r) => {
    const has = Object.hasOwn(l, r.key);
    switch (r.op) {
      case 'exists':
        return has;
      case '!exists':
        return !has;
      case 'in':
        return has && r.values.includes(l[r.key]);
      case 'notin':
        return !has || !r.values.includes(l[r.key]);
    }
  });
}

/** metav1.LabelSelector (matchLabels + matchExpressions), as used by SessionPolicy.spec.selector. */
export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export function fromLabelSelector(s: LabelSelectorSpec | undefined): Selector {
  if (!s) return [];
  const reqs: Selector = Object.entries(s.matchLabels ?? {}).map(([key, v]) => ({
    key,
    op: 'in' as const,
    values: [v],
  }));
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'Exists') reqs.push({ key: e.key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') reqs.push({ key: e.key, op: '!exists' });
    else reqs.push({ key: e.key, op: e.operator === 'In' ? 'in' : 'notin', values: e.values ?? [] });
  }
  return reqs;
}
