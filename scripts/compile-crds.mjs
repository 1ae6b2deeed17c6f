#!/usr/bin/env node
// Build step: parse crds/*.yaml once into dist/crds.json so the CLI does not re-parse YAML on
// every start (it was the largest cost of a cold `orchctl get`). crds/ stays the source of truth;
// the loader falls back to the YAML whenever the JSON is missing or older than any CRD file.
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
