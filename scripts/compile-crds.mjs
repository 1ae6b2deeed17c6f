#!/usr/bin/env node
// Build step: parse crds/*.yaml once into dist/crds.json so the CLI does not re-parse YAML on
// every start (it was the largest cost of a cold `orchctl get`). crds/ stays the source of truth;
// the loader falls back to the YAML whenever the JSON is missing or older than any CRD file.
// Then precompile every kind's validator into dist/validators/<Kind>.cjs (ajv standalone code, with the
// run time's own ajv set-up: controller/api/ajv-setup.ts), so no process compiles a schema on its
// first write; a kind whose schema no longer matches its hash there is compiled at run time instead.
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dir = path.join(root, 'crds');
const crds = fs
  .readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort()
  .map((f) => ({ file: f, crd: YAML.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }));
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist', 'crds.json'), JSON.stringify(crds));

const { kindInfoFromCrd } = await import('../dist/controller/api/crds.js');
const { precompiledModules } = await import('../dist/controller/api/precompiled.js');
const validators = path.join(root, 'dist', 'validators');
fs.rmSync(validators, { recursive: true, force: true });
fs.mkdirSync(validators);
const kinds = crds.map(({ file, crd }) => kindInfoFromCrd(crd, file));
// dist/kinds.json: every kind without its schema and CRD (a tenth of crds.json), what a command that
// only reads and prints needs (names, scope, columns); the schemas are read from crds.json on first use.
fs.writeFileSync(
  path.join(root, 'dist', 'kinds.json'),
  JSON.stringify(kinds.map(({ schema, crd, ...info }, i) => ({ file: crds[i].file, info }))),
);
for (const [kind, code] of precompiledModules(kinds)) fs.writeFileSync(path.join(validators, `${kind}.cjs`), code);
