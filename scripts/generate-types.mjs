#!/usr/bin/env node
// Generates controller/api/generated/<kind>.ts from crds/*.yaml with json-schema-to-typescript, so
// the CRD schemas are the one source of the kinds' shapes: the hand-written types in controller/api
// are aliases of these or are checked against them at compile time (controller/api/generated/checks.ts).
// The schema fed to the generator is the one ajv validates with (api/schema.ts manifestSchema), so
// int-or-string, nullable and preserve-unknown-fields mean the same here as at admission.
// `--check`: regenerate in memory and fail, naming the file, when a committed file differs (npm run lint).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { compile } from 'json-schema-to-typescript';
import { loadCrdsFrom } from '../controller/config/crds.ts';
import { manifestSchema } from '../controller/api/schema.ts';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const outDir = path.join(root, 'controller', 'api', 'generated');
const check = process.argv.includes('--check');
const ENVELOPE = new Set(['apiVersion', 'kind', 'metadata']);

/** Word-wraps a description so the doc comments it becomes stay within the 120-character lines. */
function wrap(text, width = 96) {
  const lines = [];
  let line = '';
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n').replaceAll('*/', '*\\/');
}

/** Descriptions become doc comments; defaults and examples stay in the CRD (admission applies them). */
function prepare(node) {
  if (Array.isArray(node)) return node.map(prepare);
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'default' || k === 'examples') continue;
    if (k === 'description') out[k] = wrap(v);
    else if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, prepare(s)]));
    else out[k] = prepare(v);
  }
  return out;
}

async function generate(kind) {
  const m = manifestSchema(kind);
  const properties = Object.fromEntries(Object.entries(m.properties).filter(([p]) => !ENVELOPE.has(p)));
  const required = (m.required ?? []).filter((p) => !ENVELOPE.has(p));
  const schema = prepare({
    type: 'object',
    title: `${kind.kind}Schema`,
    properties,
    required,
    additionalProperties: false,
  });
  const ts = await compile(schema, `${kind.kind}Schema`, {
    bannerComment: '',
    additionalProperties: false,
    strictIndexSignatures: false,
    format: false,
    unknownAny: true,
    // minItems would make tuples ([T, ...T[]]); admission checks the bounds, the types keep arrays.
    ignoreMinAndMaxItems: true,
  });
  const fields = ['spec', 'status']
    .filter((p) => p in properties)
    .map(
      (p) =>
        `export type ${kind.kind}Schema${p === 'spec' ? 'Spec' : 'Status'} = NonNullable<${kind.kind}Schema['${p}']>;`,
    );
  return [
    `// Generated from crds/${kind.crd.spec.names.plural}.yaml by \`npm run generate:types\``,
    '// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.',
    '',
    ts.trim(),
    ...fields,
    '',
  ].join('\n');
}

/** Formats as the rest of the code base (biome), so `npm run lint` holds for generated files too. */
function format(file, text) {
  const biome = path.join(root, 'node_modules', '.bin', 'biome');
  return execFileSync(biome, ['format', `--stdin-file-path=${file}`], { input: text, encoding: 'utf8' });
}

const files = new Map();
for (const kind of loadCrdsFrom(path.join(root, 'crds'))) {
  const file = path.join(outDir, `${kind.kind.toLowerCase()}.ts`);
  files.set(file, format(file, await generate(kind)));
}
if (check) {
  const rel = (f) => path.relative(root, f);
  const present = fs.existsSync(outDir) ? fs.readdirSync(outDir).filter((f) => f !== 'checks.ts') : [];
  const stale = [...files].filter(([f, text]) => !fs.existsSync(f) || fs.readFileSync(f, 'utf8') !== text);
  const extra = present.map((f) => path.join(outDir, f)).filter((f) => !files.has(f));
  for (const [f] of stale) console.error(`${rel(f)} is stale: regenerate with \`npm run generate:types\``);
  for (const f of extra) console.error(`${rel(f)} has no CRD in crds/: remove it or regenerate`);
  process.exit(stale.length || extra.length ? 1 : 0);
}
fs.mkdirSync(outDir, { recursive: true });
for (const [f, text] of files) fs.writeFileSync(f, text);
console.log(`wrote ${files.size} files to ${path.relative(root, outDir)}`);
