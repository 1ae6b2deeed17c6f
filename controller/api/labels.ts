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
  if (!text?.trim()) return [];
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
    reqs.push(parseRequirement(raw.trim(), text));
  }
  return reqs;
}

function parseRequirement(p: string, text: string): Requirement {
  const set = p.match(/^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/);
  if (set) {
    const values = set[3]
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    for (const v of values) checkValue(v, p);
    return { key: checkKey(set[1], p), op: set[2] === 'notin' ? 'notin' : 'in', values };
  }
  const eq = p.match(/^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/);
  if (eq) {
    checkValue(eq[3], p);
    return { key: checkKey(eq[1], p), op: eq[2] === '!=' ? 'notin' : 'in', values: [eq[3]] };
  }
  const absent = p.match(/^!\s*([^\s!=(),]+)$/);
  if (absent) return { key: checkKey(absent[1], p), op: '!exists' };
  const present = p.match(/^([^\s!=(),]+)$/);
  if (present) return { key: checkKey(present[1], p), op: 'exists' };
  throw new ApiError('BadRequest', `unable to parse requirement: "${p}" in label selector "${text}"`);
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
      default: // notin
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
