/**
 * Reading manifests: files, directories (optionally recursive) and stdin; multi-document YAML
 * (JSON is YAML too). Each document keeps its parsed YAML tree so that validation errors can
 * name file:line:column and the document index.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML, { isMap, isNode, isScalar, isSeq, LineCounter, type Document, type Node, type Pair } from 'yaml';
import { formatPath, type FieldError, type PathPart } from '../api/validate.js';

export const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

export interface ManifestDoc {
  file: string; // as given (for messages)
  dir: string; // absolute directory for resolving relative paths in specs
  index: number; // 1-based document index within the file
  object: unknown;
  doc: Document.Parsed;
  lines: LineCounter;
}

/** An input problem located in a file; `toString()` is the one-line message users see. */
export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly col: number | undefined,
    readonly docIndex: number | undefined,
    readonly fieldPath: string | undefined,
    readonly detail: string,
  ) {
    super(
      `${file}${line !== undefined ? `:${line}:${col}` : ''}` +
        `${docIndex !== undefined ? ` (document ${docIndex})` : ''} ` +
        `${fieldPath ? `${fieldPath}: ` : ''}${detail}`,
    );
    this.name = 'ManifestError';
  }
}

const MAX_ALIAS_COUNT = 100;

export function parseManifestText(
  text: string,
  file: string,
  dir: string,
): { docs: ManifestDoc[]; errors: ManifestError[] } {
  const lines = new LineCounter();
  const docs: ManifestDoc[] = [];
  const errors: ManifestError[] = [];
  const all = YAML.parseAllDocuments(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(all) ? all : [all];
  list.forEach((doc, i) => {
    const index = i + 1;
    if (doc.errors.length) {
      for (const e of doc.errors) {
        const pos = lines.linePos(e.pos[0]);
        errors.push(
          new ManifestError(file, pos.line, pos.col, index, undefined, `invalid YAML: ${e.message.split('\n')[0]}`),
        );
      }
      return;
    }
    // A list or map as a mapping key has no JSON form (yaml would stringify it, with a warning).
    let badKey: { range?: [number, number, number] | null } | undefined;
    YAML.visit(doc, {
      Pair(_k, pair) {
        if (YAML.isCollection(pair.key)) {
          badKey = pair.key as { range?: [number, number, number] | null };
          return YAML.visit.BREAK;
        }
      },
    });
    if (badKey) {
      const pos = lines.linePos(badKey.range?.[0] ?? 0);
      errors.push(
        new ManifestError(
          file,
          pos.line,
          pos.col,
          index,
          undefined,
          'invalid YAML: a mapping key must be a plain value, not a list or a map',
        ),
      );
      return;
    }
    let object: unknown;
    try {
      object = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      // yaml refuses an alias expansion past the bound ("billion laughs").
      const pos = lines.linePos(doc.range?.[0] ?? 0);
      const why = /alias/i.test((e as Error).message)
        ? `invalid YAML: aliases expand too far (at most ${MAX_ALIAS_COUNT}; an alias bomb?)`
        : `invalid YAML: ${(e as Error).message}`;
      errors.push(new ManifestError(file, pos.line, pos.col, index, undefined, why));
      return;
    }
    if (object === null || object === undefined) return; // empty document (e.g. trailing ---)
    docs.push({ file, dir, index, object, doc, lines });
  });
  if (!docs.length && !errors.length)
    errors.push(
      new ManifestError(
        file,
        1,
        1,
        undefined,
        undefined,
        'no objects in this file (it is empty or holds only comments)',
      ),
    );
  return { docs, errors };
}

/** Lists manifest files for `-f`: a file, a directory (recursive with -R), or '-' for stdin. */
export function manifestFiles(target: string, recursive: boolean): string[] {
  if (target === '-') return ['-'];
  let st: fs.Stats;
  try {
    st = fs.statSync(target);
  } catch {
    throw new Error(`the path "${target}" does not exist`);
  }
  if (!st.isDirectory()) return [target];
  const out: string[] = [];
  for (const entry of fs.readdirSync(target, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(target, entry.name);
    if (entry.isDirectory()) {
      // Hidden directories (.git, editor state) and dependencies never hold manifests.
      if (recursive && !entry.name.startsWith('.') && entry.name !== 'node_modules')
        out.push(...manifestFiles(p, true));
    } else if (MANIFEST_EXTENSIONS.includes(path.extname(entry.name))) out.push(p);
  }
  return out;
}

export function readManifests(
  targets: string[],
  recursive: boolean,
  stdin?: () => string,
): { docs: ManifestDoc[]; errors: ManifestError[] } {
  const docs: ManifestDoc[] = [];
  const errors: ManifestError[] = [];
  for (const t of targets) {
    for (const f of manifestFiles(t, recursive)) {
      const text = f === '-' ? (stdin ?? (() => fs.readFileSync(0, 'utf8')))() : fs.readFileSync(f, 'utf8');
      const dir = f === '-' ? process.cwd() : path.dirname(path.resolve(f));
      const r = parseManifestText(text, f === '-' ? '<stdin>' : f, dir);
      docs.push(...r.docs);
      errors.push(...r.errors);
    }
  }
  return { docs, errors };
}

/** Finds the YAML node for a JSON path; falls back to the deepest existing ancestor. */
function locate(doc: Document.Parsed, p: PathPart[], atKey: boolean): Node | undefined {
  let node: unknown = doc.contents;
  let best: Node | undefined = isNode(node) ? node : undefined;
  for (let i = 0; i < p.length; i++) {
    const part = p[i];
    if (isMap(node)) {
      const pair = node.items.find((it: Pair) => isScalar(it.key) && String(it.key.value) === String(part));
      if (!pair) break;
      const last = i === p.length - 1;
      if (last && atKey && isNode(pair.key)) return pair.key;
      node = pair.value;
      if (isNode(node)) best = node;
      else if (isNode(pair.key)) best = pair.key;
    } else if (isSeq(node) && typeof part === 'number') {
      node = node.items[part];
      if (isNode(node)) best = node;
      else break;
    } else break;
  }
  return best;
}

export function locateError(d: ManifestDoc, e: FieldError): ManifestError {
  const node = locate(d.doc, e.path, !!e.atKey);
  const off = node?.range?.[0];
  const pos = off !== undefined ? d.lines.linePos(off) : undefined;
  return new ManifestError(d.file, pos?.line, pos?.col, d.index, formatPath(e.path) || undefined, e.message);
}
