/**
 * The CRDs of crds/ read from disk (or from dist/crds.json, the build's copy) into the registry of
 * kinds api/crds.ts makes from them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type CrdDocument, type KindInfo, kindInfoFromCrd, makeRegistry, type Registry } from '../api/crds.js';
import { yaml } from '../api/lazy.js';
import { packageRoot } from './paths.js';

export function loadCrdsFrom(dir: string): KindInfo[] {
  const files = fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  return compiledKinds(dir, files) ?? wholeKinds(dir, files);
}

/** Every kind with its schema and CRD: from dist/crds.json when it is current, else parsed from the YAML. */
function wholeKinds(dir: string, files: string[]): KindInfo[] {
  const compiled = compiledCrds(dir, files);
  if (compiled) return compiled.map(({ file, crd }) => kindInfoFromCrd(crd, file));
  return files.map((f) => kindInfoFromCrd(yaml().parse(fs.readFileSync(path.join(dir, f), 'utf8')), f));
}

/** Whether the build's file `json` is at least as new as every CRD file. */
function current(json: string, dir: string, files: string[]): boolean {
  const built = fs.statSync(json).mtimeMs;
  return !files.some((f) => fs.statSync(path.join(dir, f)).mtimeMs > built);
}

/**
 * dist/kinds.json, written by the build beside crds.json: the kinds without their schemas and CRDs
 * (a tenth of its size). Those are read only when one is first asked for — by explain, schema or a
 * write's checks — never by a command that only reads and prints, such as `get`.
 */
function compiledKinds(dir: string, files: string[]): KindInfo[] | undefined {
  const json = path.join(path.dirname(dir), 'dist', 'kinds.json');
  try {
    if (!current(json, dir, files)) return undefined;
    const list = JSON.parse(fs.readFileSync(json, 'utf8')) as { file: string; info: KindInfo }[];
    if (list.length !== files.length || list.some((x, i) => x.file !== files[i])) return undefined;
    let whole: KindInfo[] | undefined;
    const of = (i: number) => {
      whole ??= wholeKinds(dir, files);
      return whole[i];
    };
    return list.map(({ info }, i) =>
      Object.defineProperties(info, {
        schema: { get: () => of(i).schema, enumerable: true },
        crd: { get: () => of(i).crd, enumerable: true },
      }),
    );
  } catch {
    return undefined;
  }
}

/**
 * dist/crds.json, written by the build from crds/*.yaml (scripts/compile-crds.mjs), when it is
 * at least as new as every CRD file; parsing YAML was most of a cold `orchctl get`.
 */
function compiledCrds(dir: string, files: string[]): { file: string; crd: CrdDocument }[] | undefined {
  const json = path.join(path.dirname(dir), 'dist', 'crds.json');
  try {
    if (!current(json, dir, files)) return undefined;
    const list = JSON.parse(fs.readFileSync(json, 'utf8')) as { file: string; crd: CrdDocument }[];
    return list.length === files.length && list.every((x, i) => x.file === files[i]) ? list : undefined;
  } catch {
    return undefined;
  }
}

let cached: Registry | undefined;

/** The registry of built-in kinds, loaded once per process from crds/. */
export function registry(): Registry {
  cached ??= makeRegistry(loadCrdsFrom(path.join(packageRoot(), 'crds')));
  return cached;
}
