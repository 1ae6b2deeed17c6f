/**
 * The build's kinds index (dist/kinds.json: every kind without its schema and CRD) is what a
 * read-only command loads; a kind's schema is read only when asked for (issue 29: `get` start-up).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { kindInfoFromCrd } from '../../../controller/api/crds.js';
import { loadCrdsFrom } from '../../../controller/config/crds.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const fromYaml = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => kindInfoFromCrd(YAML.parse(fs.readFileSync(path.join(dir, f), 'utf8')), f));

let tmp: string | undefined;
afterEach(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe('the kinds index', () => {
  it('gives the kinds of the CRD files, their schemas and CRDs included', () => {
    expect(fs.existsSync(path.join(ROOT, 'dist/kinds.json'))).toBe(true); // the build wrote it
    expect(loadCrdsFrom(path.join(ROOT, 'crds'))).toEqual(fromYaml(path.join(ROOT, 'crds')));
  });

  it('is what the kinds are read from, and a schema is read from the CRDs only when asked for', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-kinds-'));
    fs.cpSync(path.join(ROOT, 'crds'), path.join(tmp, 'crds'), { recursive: true });
    fs.mkdirSync(path.join(tmp, 'dist'));
    const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/kinds.json'), 'utf8')) as {
      file: string;
      info: { kind: string; plural: string };
    }[];
    // A mark only the index has: the kinds came from it, not from the YAML.
    for (const x of index) if (x.info.kind === 'AgentSession') x.info.plural = 'marked';
    const later = new Date(Date.now() + 60_000);
    fs.writeFileSync(path.join(tmp, 'dist/kinds.json'), JSON.stringify(index));
    fs.utimesSync(path.join(tmp, 'dist/kinds.json'), later, later);
    const kinds = loadCrdsFrom(path.join(tmp, 'crds'));
    const session = kinds.find((k) => k.kind === 'AgentSession')!;
    expect(session.plural).toBe('marked');
    // No dist/crds.json here: the schema comes from the YAML, when asked for.
    const yaml = fromYaml(path.join(tmp, 'crds')).find((k) => k.kind === 'AgentSession')!;
    expect(session.schema).toEqual(yaml.schema);
    expect(session.crd).toEqual(yaml.crd);
  });

  it('is not used once a CRD file is newer than it', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-kinds-'));
    fs.cpSync(path.join(ROOT, 'crds'), path.join(tmp, 'crds'), { recursive: true });
    fs.mkdirSync(path.join(tmp, 'dist'));
    const index = fs.readFileSync(path.join(ROOT, 'dist/kinds.json'), 'utf8');
    fs.writeFileSync(path.join(tmp, 'dist/kinds.json'), index.replace('"agentsessions"', '"marked"'));
    const earlier = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(tmp, 'dist/kinds.json'), earlier, earlier);
    expect(loadCrdsFrom(path.join(tmp, 'crds')).find((k) => k.kind === 'AgentSession')!.plural).toBe('agentsessions');
  });
});
