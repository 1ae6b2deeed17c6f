/**
 * Contexts through the built bin/orchctl (docs/contexts.md): `orchctl config set-context`,
 * `use-context`, `get-contexts`, `current-context`, `delete-context` and `view` write and read
 * $ORCHCTL_HOME/config (mode 0600); every command then uses the store the context names, with
 * --context > ORCHCTL_STORE > currentContext > the embedded default; a bad file is reported with
 * file:line:column and field by every command and is never rewritten; `store backup/restore`
 * refuse an etcd context and point to etcdctl.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, orchctl, parseTable, tempHome } from '../support/cli.js';

let home: string;
let work: string;

beforeEach(() => {
  home = tempHome();
  work = path.join(path.dirname(home), 'work');
  fs.mkdirSync(work, { recursive: true });
});

/** orchctl run from `work` (relative paths are relative to it), with extra environment. */
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  orchctl(home, args, { cwd: work, env: { ...cliEnv(home), ...env } });

async function ok(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const r = await run(args, env);
  expect(r.exitCode, `orchctl ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

const AGENT = (name: string) =>
  `apiVersion: orchctl.io/v1alpha1\nkind: Agent\nmetadata:\n  name: ${name}\nspec:\n  command: [sh]\n`;

async function applyAgent(name: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const file = path.join(work, `${name}.yaml`);
  fs.writeFileSync(file, AGENT(name));
  expect(await ok([...args, 'apply', '-f', file], env)).toBe(`agent.orchctl.io/${name} created\n`);
}

const agents = async (args: string[] = [], env: NodeJS.ProcessEnv = {}) =>
  (await ok([...args, 'get', 'agents', '-o', 'name'], env)).trim().split('\n').filter(Boolean);

describe('orchctl config', () => {
  it('set-context, use-context, get-contexts and current-context; the commands follow the context', async () => {
    expect(await ok(['config', 'get-contexts'])).toBe('CURRENT   NAME   STORE   NODE\n');
    const none = await run(['config', 'current-context']);
    expect([none.exitCode, none.stderr]).toEqual([1, 'error: current-context is not set\n']);

    expect(await ok(['config', 'set-context', 'team', '--sqlite', 'team/state.db', '--node', 'laptop'])).toBe(
      'Context "team" created.\n',
    );
    expect(await ok(['config', 'set-context', 'etcd', '--etcd-endpoints', '127.0.0.1:2379,127.0.0.1:2381'])).toBe(
      'Context "etcd" created.\n',
    );
    const file = path.join(home, 'config');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // A context that exists but is not current changes nothing yet: the embedded default is used.
    await applyAgent('in-default');
    expect(fs.existsSync(path.join(home, 'state.db'))).toBe(true);

    expect(await ok(['config', 'use-context', 'team'])).toBe('Switched to context "team".\n');
    expect(await ok(['config', 'current-context'])).toBe('team\n');
    expect(parseTable(await ok(['config', 'get-contexts']))).toEqual([
      ['CURRENT', 'NAME', 'STORE', 'NODE'],
      ['*', 'team', `sqlite ${path.join(work, 'team/state.db')}`, 'laptop'],
      ['etcd', 'etcd http://127.0.0.1:2379,http://127.0.0.1:2381'],
    ]);
    expect(await ok(['config', 'get-contexts', '-o', 'name'])).toBe('team\netcd\n');

    await applyAgent('in-team');
    expect(fs.existsSync(path.join(work, 'team/state.db'))).toBe(true);
    expect(await agents()).toEqual(['agent.orchctl.io/in-team']);

    // ORCHCTL_STORE beats the current context; --context beats both.
    const envStore = { ORCHCTL_STORE: `sqlite:${path.join(work, 'env.db')}` };
    await applyAgent('in-env', [], envStore);
    expect(await agents([], envStore)).toEqual(['agent.orchctl.io/in-env']);
    expect(await agents(['--context', 'team'], envStore)).toEqual(['agent.orchctl.io/in-team']);
    const noted = await run(['config', 'use-context', 'team'], envStore);
    expect([noted.stdout, noted.stderr]).toEqual([
      'Switched to context "team".\n',
      'note: $ORCHCTL_STORE is set and takes precedence over the current context\n',
    ]);

    // The controller's `version` and `doctor` say which store they use.
    const v = JSON.parse(await ok(['version', '-o', 'json']));
    expect(v.store).toMatchObject({ backend: 'sqlite', path: path.join(work, 'team/state.db') });
    const d = JSON.parse((await run(['doctor', '-o', 'json'])).stdout);
    expect(d.store).toEqual({
      backend: 'sqlite',
      location: `sqlite ${path.join(work, 'team/state.db')}`,
      chosenBy: `context "team" (currentContext in ${file})`,
      context: 'team',
    });

    expect(await ok(['config', 'delete-context', 'team'])).toBe(
      `deleted context team from ${file} (it was the current context: orchctl now uses the embedded default ` +
        'unless told otherwise)\n',
    );
    expect(await agents()).toEqual(['agent.orchctl.io/in-default']);
    expect((await run(['config', 'current-context'])).exitCode).toBe(1);
    expect(await ok(['config', 'view'])).toBe(
      'apiVersion: orchctl.io/v1alpha1\nkind: Config\ncontexts:\n  - name: etcd\n    store:\n      etcd:\n' +
        '        endpoints:\n          - http://127.0.0.1:2379\n          - http://127.0.0.1:2381\n',
    );
  });

  it('refuses what would make a bad file, and an unknown context, writing nothing', async () => {
    const plain = await run(['config', 'set-context', 'far', '--etcd-endpoints', '10.1.2.3:2379']);
    expect(plain.exitCode).toBe(1);
    expect(plain.stderr).toMatch(/endpoints\[0\]: plaintext to 10\.1\.2\.3:2379 is refused/);
    const both = await run(['config', 'set-context', 'x', '--sqlite', 'a.db', '--etcd-prefix', '/p']);
    expect(both.stderr).toBe('error: --sqlite and --etcd-* flags cannot be used together\n');
    const unknown = await run(['config', 'use-context', 'nope']);
    expect(unknown.stderr).toBe('error: no context exists with the name: "nope"\n');
    expect(fs.existsSync(path.join(home, 'config'))).toBe(false);

    const get = await run(['--context', 'nope', 'get', 'agents']);
    expect(get.exitCode).toBe(1);
    expect(get.stderr).toMatch(/^error: context "nope" not found in .*config \(there is no such file\)/);
    expect(fs.existsSync(path.join(home, 'state.db'))).toBe(false);
  });

  it('a bad config file: every command names file:line:column and field, and nothing rewrites it', async () => {
    fs.mkdirSync(home, { recursive: true });
    const file = path.join(home, 'config');
    const text = '# hand-edited\ncurrentContext: a\ncontexts:\n  - name: a\n    store:\n      sqlite: {file: a.db}\n';
    fs.writeFileSync(file, text, { mode: 0o644 });
    const lines = [
      `error: ${file}:6:15 contexts[0].store.sqlite.path: Required value`,
      `error: ${file}:6:16 contexts[0].store.sqlite.file: unknown field "contexts[0].store.sqlite.file"`,
    ];
    for (const args of [
      ['get', 'agents'],
      ['config', 'use-context', 'a'],
      ['config', 'set-context', 'b', '--sqlite', 'b.db'],
      ['config', 'get-contexts'],
    ]) {
      const r = await run(args);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr.trimEnd().split('\n'), args.join(' ')).toEqual(lines);
    }
    // ORCHCTL_STORE does not need the file: it is not read.
    await applyAgent('beside', [], { ORCHCTL_STORE: `sqlite:${path.join(work, 'beside.db')}` });
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(home)).toEqual(['config']);
  });

  it('store backup and restore are SQLite-only: an etcd context is told to use etcdctl', async () => {
    await ok(['config', 'set-context', 'cluster', '--etcd-endpoints', 'http://127.0.0.1:2379', '--etcd-prefix', '/o']);
    const backup = await run(['--context', 'cluster', 'store', 'backup', path.join(work, 'b.db')]);
    expect(backup.exitCode).toBe(1);
    expect(backup.stderr).toBe(
      'error: orchctl store backup works on an SQLite store; context "cluster" (--context) is ' +
        'etcd http://127.0.0.1:2379 prefix /o/: use etcdctl snapshot save FILE (docs/contexts.md)\n',
    );
    const restore = await run(['store', 'restore', path.join(work, 'b.db')], {
      ORCHCTL_STORE: 'etcd://127.0.0.1:2379',
    });
    expect(restore.stderr).toMatch(/^error: orchctl store restore works on an SQLite store; \$ORCHCTL_STORE is etcd/);
    expect(restore.stderr).toMatch(/use etcdutl snapshot restore FILE \(on every member\)/);
    expect(fs.existsSync(path.join(work, 'b.db'))).toBe(false);

    // A SQLite context is backed up from its own file.
    await ok(['config', 'set-context', 'lite', '--sqlite', 'lite.db']);
    await applyAgent('x', ['--context', 'lite']);
    expect(await ok(['--context', 'lite', 'store', 'backup', 'b.db'])).toMatch(
      new RegExp(`^backed up ${path.join(work, 'lite.db')} \\(revision \\d+\\) to ${path.join(work, 'b.db')}`),
    );
  });
});
