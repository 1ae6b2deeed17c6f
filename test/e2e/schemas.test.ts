/**
 * The editor JSON Schemas in schemas/ are generated from crds/ by `orchctl schema`; this keeps
 * the committed files from going stale and proves they work as editors use them (ajv, draft-07).
 */
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { isGoDuration } from '../../controller/api/duration.js';
import { orchctl, ROOT } from '../support/cli.js';

const SCHEMAS = path.join(ROOT, 'schemas');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-schemas-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const addFormats = addFormatsImport as unknown as (a: Ajv) => Ajv;
const docs = (file: string) => YAML.parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS());

/** ajv as an editor's language server uses the schemas: unknown x-kubernetes-* keywords are annotations. */
function editorAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('go-duration', { type: 'string', validate: isGoDuration });
  for (const f of fs.readdirSync(SCHEMAS).filter((f) => f !== 'all.json'))
    ajv.addSchema(JSON.parse(fs.readFileSync(path.join(SCHEMAS, f), 'utf8')));
  return ajv;
}

describe('schemas/*.json', () => {
  it('equal what `orchctl schema` generates from crds/ now (regenerate with `./bin/orchctl schema`)', async () => {
    const r = await orchctl(path.join(tmp, 'home'), ['schema', '-d', path.join(tmp, 'out')]);
    expect(r.exitCode, r.stderr).toBe(0);
    const generated = fs.readdirSync(path.join(tmp, 'out')).sort();
    expect(fs.readdirSync(SCHEMAS).sort()).toEqual(generated);
    expect(generated).toContain('all.json');
    for (const f of generated)
      expect(fs.readFileSync(path.join(SCHEMAS, f), 'utf8'), `schemas/${f} is stale`).toBe(
        fs.readFileSync(path.join(tmp, 'out', f), 'utf8'),
      );
  });

  it('`orchctl schema KIND` prints the same schema as the file', async () => {
    const r = await orchctl(path.join(tmp, 'home'), ['schema', 'as']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(fs.readFileSync(path.join(SCHEMAS, 'agentsession_v1alpha1.json'), 'utf8'));
  });

  it('each compiles with ajv', () => {
    const ajv = editorAjv();
    for (const f of fs.readdirSync(SCHEMAS)) {
      const schema = JSON.parse(fs.readFileSync(path.join(SCHEMAS, f), 'utf8'));
      expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
      expect(typeof (ajv.getSchema(schema.$id) ?? ajv.compile(schema))).toBe('function');
    }
  });

  it("validate examples/basic's documents, per kind and through all.json", () => {
    const ajv = editorAjv();
    const all = ajv.compile(JSON.parse(fs.readFileSync(path.join(SCHEMAS, 'all.json'), 'utf8')));
    const objects = docs(path.join(ROOT, 'examples/basic/webapp.yaml'));
    expect(objects.map((o) => o.kind)).toEqual(['Project', 'Agent', 'AgentSession', 'SessionPolicy']);
    for (const o of objects) {
      const one = ajv.getSchema(`${o.kind.toLowerCase()}_v1alpha1.json`)!;
      expect(one(o), JSON.stringify(one.errors)).toBe(true);
      expect(all(o), JSON.stringify(all.errors)).toBe(true);
    }
  });

  it('catch what orchctl apply rejects: unknown fields, bad enums, bad durations, unknown kinds', () => {
    const all = editorAjv().compile(JSON.parse(fs.readFileSync(path.join(SCHEMAS, 'all.json'), 'utf8')));
    const bad = path.join(ROOT, 'test/fixtures/manifests/bad');
    for (const f of [
      'unknown-field.yaml',
      'bad-enum.yaml',
      'bad-duration.yaml',
      'unknown-kind.yaml',
      'wrong-type.yaml',
      'missing-required.yaml',
    ]) {
      const objects = docs(path.join(bad, f));
      expect(
        objects.some((o) => !all(o)),
        `${f} passes the editor schema`,
      ).toBe(true);
    }
  });

  it('examples point their yaml-language-server modeline at a schema that exists', () => {
    const file = path.join(ROOT, 'examples/basic/webapp.yaml');
    const m = fs.readFileSync(file, 'utf8').match(/^# yaml-language-server: \$schema=(\S+)$/m);
    expect(m).not.toBeNull();
    expect(fs.existsSync(path.resolve(path.dirname(file), m![1]))).toBe(true);
  });
});
