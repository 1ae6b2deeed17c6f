/**
 * What a cold `orchctl get` loads (issue 29: get of 1000 objects within 2× a bare Node start-up). The
 * real bin/orchctl runs with a preload that records every module it loads: ES modules through a
 * resolve hook, CommonJS ones from the require cache at exit. bin/orchctl runs the bundle of dist/cli/
 * (scripts/bundle-cli.mjs); the sources a bundle file holds are read from its source map. A read needs
 * neither the schema validator and admission rules (loaded by the validating store on its first write)
 * nor the `bindings` package's search for the SQLite addon, nor describe's printers; and it reads a few
 * files of ours, not one a module (Node reads ES modules one at a time).
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
process.on('exit', () => {
  fs.appendFileSync(out, Object.keys(createRequire(import.meta.url).cache).join('\\n') + '\\n');
  // Node's own modules the process loaded, as node:<name>.
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
  fs.appendFileSync(out, builtins.map((m) => 'node:' + m.slice(13)).join('\\n') + '\\n');
});
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

/** The bundle's files (dist/cli/) among `files`. */
const bundleFiles = (files: string[]) => files.filter((f) => f.startsWith('dist/cli/'));

/**
 * The sources (paths relative to the repository) the bundle's files among `files` were built from. The
 * bundler's own helpers (chunks/rolldown-runtime-*.js) have no map: none of ours is in them.
 */
function sourcesOf(files: string[]): string[] {
  return bundleFiles(files).flatMap((f) => {
    const file = path.join(ROOT, `${f}.map`);
    if (!f.endsWith('.js') || !fs.existsSync(file)) return [];
    const map = JSON.parse(fs.readFileSync(file, 'utf8')) as { sources: string[] };
    return map.sources.map((s) => path.relative(ROOT, path.resolve(ROOT, path.dirname(f), s)));
  });
}

const packages = (files: string[]) =>
  [...new Set(files.filter((f) => f.startsWith('node_modules/')).map((f) => f.split('/')[1]))].sort();

async function oneSession(): Promise<void> {
  const store = new SqliteStore(path.join(home, 'state.db'));
  await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 'one', namespace: 'default' },
    spec: { agentRef: 'claude-code', projectRef: 'p', prompt: 'hi' },
  });
  await store.close();
}

describe('orchctl get start-up', () => {
  it('loads neither the schema validator, the admission rules, the bindings search nor describe code', async () => {
    await oneSession();
    const files = await modulesLoaded(['get', 'agentsessions']);
    const sources = sourcesOf(files);
    expect(sources).toContain('controller/cli/commands/get.ts');
    // commander is in the bundle; better-sqlite3 (its addon) is not.
    expect(packages(files)).toEqual(['better-sqlite3']);
    for (const f of ['controller/api/validate.ts', 'controller/client/admission.ts']) expect(sources).not.toContain(f);
    // The Node cells without `describe node` (printers/nodes.ts), describe's printers and the policy matching.
    expect(sources).toContain('controller/cli/printers/node-cells.ts');
    for (const f of ['printers/nodes.ts', 'printers/describe.ts']) expect(sources).not.toContain(`controller/cli/${f}`);
    expect(sources).not.toContain('controller/api/policy.ts');
  });

  it('reads the bundle: its entry and one chunk of our modules, not a file for each', async () => {
    await oneSession();
    const files = await modulesLoaded(['get', 'agentsessions']);
    const ours = files.filter((f) => !f.startsWith('node_modules/') && !f.startsWith('node:'));
    // bin/orchctl, dist/cli/main.js, the chunk of everything `get` imports, and rolldown's helpers.
    expect(ours).toHaveLength(4);
    expect(bundleFiles(ours)).toHaveLength(3);
    // Nothing of dist/controller/ (tsc's output, a file a module): all of `get` comes from the bundle.
    expect(ours.filter((f) => f.startsWith('dist/controller/'))).toEqual([]);
    expect(sourcesOf(files).length).toBeGreaterThan(30);
  });

  it("does not load node:child_process (commander's, for subcommands run as executables)", async () => {
    await oneSession();
    const files = await modulesLoaded(['get', 'agentsessions']);
    expect(files).toContain('node:fs');
    expect(files).not.toContain('node:child_process');
  });

  it('a command that writes a spec still loads the checks (what the recorder sees)', async () => {
    const files = await modulesLoaded(['apply', '-f', path.join(ROOT, 'examples/basic')]);
    expect(sourcesOf(files)).toContain('controller/client/spec-checks.ts');
    expect(packages(files)).toContain('ajv');
  });

  it("a command that writes a spec validates with the build's validators, compiling no schema", async () => {
    const files = await modulesLoaded(['apply', '-f', path.join(ROOT, 'examples/basic')]);
    // The bundle's own (scripts/bundle-cli.mjs): their hash is of the set-up's code as the bundle holds it.
    for (const kind of ['Project', 'Agent', 'AgentSession', 'SessionPolicy'])
      expect(files).toContain(`dist/cli/validators/${kind}.cjs`);
    // Of ajv, only the small helpers generated code calls (dist/runtime/) and its version (package.json, in the
    // validators' hash): not its compiler.
    const ajv = files.filter((f) => f.startsWith('node_modules/ajv/') && f !== 'node_modules/ajv/package.json');
    expect(ajv.filter((f) => !f.startsWith('node_modules/ajv/dist/runtime/'))).toEqual([]);
    // Nor the validators of kinds it does not write.
    expect(files).not.toContain('dist/cli/validators/Pipeline.cjs');
  });
});
