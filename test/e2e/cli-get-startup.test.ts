/**
 * What a cold `orchctl get` loads (issue 29: get of 1000 objects within 2× a bare Node start-up). The
 * real bin/orchctl runs with a preload that records every module it loads: ES modules through a
 * resolve hook, CommonJS ones from the require cache at exit. A read needs neither the schema
 * validator and admission rules (loaded by the validating store on its first write) nor the
 * `bindings` package's search for the SQLite addon, nor describe's printers.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { BIN, cliEnv, ROOT, tempHome } from '../support/cli.js';

const RECORDER = `
import { createRequire, register } from 'node:module';
import fs from 'node:fs';
const out = process.env.ORCHCTL_TEST_MODULES;
register('data:text/javascript,' + encodeURIComponent(\`
  import fs from 'node:fs';
  export async function resolve(s, c, next) {
    const r = await next(s, c);
    fs.appendFileSync(\${JSON.stringify(out)}, r.url + '\\\\n');
    return r;
  }\`));
process.on('exit', () => fs.appendFileSync(out, Object.keys(createRequire(import.meta.url).cache).join('\\n') + '\\n'));
`;

let home: string;
let dir: string;

beforeEach(() => {
  home = tempHome();
  dir = path.dirname(home);
  fs.writeFileSync(path.join(dir, 'recorder.mjs'), RECORDER);
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The files (paths relative to the repository, packages as node_modules/<name>/...) `args` loads. */
async function modulesLoaded(args: string[]): Promise<string[]> {
  const list = path.join(dir, 'modules.txt');
  fs.writeFileSync(list, '');
  const r = await execa(process.execPath, ['--import', path.join(dir, 'recorder.mjs'), BIN, ...args], {
    env: { ...cliEnv(home), ORCHCTL_TEST_MODULES: list },
    reject: false,
    cwd: ROOT,
  });
  expect(r.stderr).toBe('');
  const files = fs
    .readFileSync(list, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((f) => (f.startsWith('file://') ? new URL(f).pathname : f));
  // node_modules is a symlink in some checkouts: name packages from node_modules/ on.
  return [...new Set(files.map((f) => f.replace(/^.*\/node_modules\//, 'node_modules/').replace(`${ROOT}/`, '')))];
}

const packages = (files: string[]) =>
  [...new Set(files.filter((f) => f.startsWith('node_modules/')).map((f) => f.split('/')[1]))].sort();

describe('orchctl get start-up', () => {
  it('loads neither the schema validator, the admission rules, the bindings search nor describe code', async () => {
    const store = new SqliteStore(path.join(home, 'state.db'));
    await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'one', namespace: 'default' },
      spec: { agentRef: 'claude-code', projectRef: 'p', prompt: 'hi' },
    });
    await store.close();
    const files = await modulesLoaded(['get', 'agentsessions']);
    expect(files).toContain('dist/controller/cli/commands/get.js');
    expect(packages(files)).toEqual(['better-sqlite3', 'commander']);
    for (const f of ['dist/controller/api/validate.js', 'dist/controller/client/admission.js'])
      expect(files).not.toContain(f);
    // The Node cells without `describe node` (printers/nodes.ts), describe's printers and the policy matching.
    expect(files).toContain('dist/controller/cli/printers/node-cells.js');
    for (const f of ['printers/nodes.js', 'printers/describe.js'])
      expect(files).not.toContain(`dist/controller/cli/${f}`);
    expect(files).not.toContain('dist/controller/api/policy.js');
  });

  it('a command that writes a spec still loads the checks (what the recorder sees)', async () => {
    const files = await modulesLoaded(['apply', '-f', path.join(ROOT, 'examples/basic')]);
    expect(files).toContain('dist/controller/client/spec-checks.js');
    expect(packages(files)).toContain('ajv');
  });

  it("a command that writes a spec validates with the build's validators, compiling no schema", async () => {
    const files = await modulesLoaded(['apply', '-f', path.join(ROOT, 'examples/basic')]);
    for (const kind of ['Project', 'Agent', 'AgentSession', 'SessionPolicy'])
      expect(files).toContain(`dist/validators/${kind}.cjs`);
    // Of ajv, only the small helpers generated code calls (dist/runtime/) and its version (package.json, in the
    // validators' hash): not its compiler.
    const ajv = files.filter((f) => f.startsWith('node_modules/ajv/') && f !== 'node_modules/ajv/package.json');
    expect(ajv.filter((f) => !f.startsWith('node_modules/ajv/dist/runtime/'))).toEqual([]);
    // Nor the validators of kinds it does not write.
    expect(files).not.toContain('dist/validators/Pipeline.cjs');
  });
});
