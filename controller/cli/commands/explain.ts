import type { KindInfo, OpenApiSchema } from '../../api/crds.js';
import { GROUP, VERSION } from '../../api/types.js';
import { objectMetaSchema } from '../../api/schema.js';
import { openContext, type GlobalOptions } from '../context.js';
import { out } from '../output.js';

function typeName(s: OpenApiSchema): string {
  if (s['x-kubernetes-int-or-string']) return 'IntOrString';
  if (s.type === 'array') return `[]${s.items ? typeName(s.items) : 'Object'}`;
  if (s.type === 'object')
    return s.properties
      ? 'Object'
      : s.additionalProperties
        ? `map[string]${typeof s.additionalProperties === 'object' ? typeName(s.additionalProperties) : 'Object'}`
        : 'Object';
  if (s.format === 'duration') return 'string (duration)';
  if (s.format === 'date-time') return 'string (date-time)';
  return typeof s.type === 'string' ? s.type : 'Object';
}

function wrap(text: string, indent: number, width = 80): string {
  const words = text.replace(/\s+/g, ' ').trim().split(' ');
  const lines: string[] = [];
  let cur = '';
  for (const w of words) {
    if (cur && cur.length + w.length + 1 > width - indent) {
      lines.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) lines.push(cur);
  return lines.map((l) => ' '.repeat(indent) + l).join('\n');
}

function rootSchema(kind: KindInfo): OpenApiSchema {
  const s = structuredClone(kind.schema);
  s.properties = {
    ...(s.properties ?? {}),
    metadata: { ...objectMetaSchema(kind), description: 'Standard object metadata.' },
  };
  return s;
}

/** Descends objects and arrays' item schemas along a dotted path. */
function descend(schema: OpenApiSchema, parts: string[], kind: KindInfo): OpenApiSchema {
  let s = schema;
  const walked: string[] = [];
  for (const p of parts) {
    while (s.type === 'array' && s.items) s = s.items;
    const next = s.properties?.[p];
    walked.push(p);
    if (!next) throw new Error(`field "${p}" does not exist in ${[kind.plural, ...walked.slice(0, -1)].join('.')}`);
    s = next;
  }
  return s;
}

function fieldsOf(s: OpenApiSchema, depth: number, recursive: boolean): string[] {
  while (s.type === 'array' && s.items) s = s.items;
  const req = new Set<string>(s.required ?? []);
  const lines: string[] = [];
  const props = s.properties ?? {};
  for (const name of Object.keys(props).sort()) {
    const f = props[name];
    const ind = '  '.repeat(depth + 1);
    lines.push(`${ind}${name}\t<${typeName(f)}>${req.has(name) ? ' -required-' : ''}`);
    if (recursive) lines.push(...fieldsOf(f, depth + 1, true));
    else {
      if (f.enum) lines.push(`${ind}enum: ${f.enum.join(', ')}`);
      if (f.default !== undefined) lines.push(`${ind}default: ${JSON.stringify(f.default)}`);
      lines.push(wrap(f.description ?? '<no description>', ind.length + 2), '');
    }
  }
  return lines;
}

export async function explainCommand(target: string, opts: { recursive?: boolean }, g: GlobalOptions): Promise<void> {
  const ctx = openContext(g, { readonly: true });
  try {
    const [kindName, ...path] = target.split('.');
    const kind = ctx.reg.resolve(kindName);
    const s = descend(rootSchema(kind), path, kind);
    const lines = [`GROUP:      ${GROUP}`, `KIND:       ${kind.kind}`, `VERSION:    ${VERSION}`, ''];
    if (path.length) lines.push(`FIELD: ${path[path.length - 1]} <${typeName(s)}>`, '');
    lines.push('DESCRIPTION:', wrap(s.description ?? '<no description>', 4));
    if (s.enum) lines.push(`    enum: ${s.enum.join(', ')}`);
    if (s.default !== undefined) lines.push(`    default: ${JSON.stringify(s.default)}`);
    lines.push('');
    const fields = fieldsOf(s, 0, !!opts.recursive);
    if (fields.length) lines.push('FIELDS:', ...fields);
    out(lines.join('\n').replace(/\n+$/, '') + '\n');
  } finally {
    await ctx.close();
  }
}
