/**
 * The real `bin/orchctl` (built by `npm test`), spawned as a process against a temp
 * ORCHCTL_HOME: apply/get/describe/delete/diff/explain/version as issue 2's "Must show" lists
 * them. Output formats are compared with golden files under test/golden/ (run `npx vitest -u`
 * after an intended change and review the diff).
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import YAML from 'yaml';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { until } from '../support/store-conformance.js';
import { BIN, cliEnv, normalize, normalizeTable, orchctl, parseTable, ROOT, tempHome } from '../support/cli.js';

const EXAMPLES = 'examples/basic';
const MORE = 'test/fixtures/e2e/sessions.yaml';
const MIXED = 'test/fixtures/e2e/mixed';
const BASIC_OBJECTS = [
  'project.orchctl.io/webapp',
  'agent.orchctl.io/claude-code',
  'agentsession.orchctl.io/fix-login',
  'sessionpolicy.orchctl.io/default',
];

let home: string;
const run = (...args: string[]) => orchctl(home, args);
const lines = (s: string) => s.trimEnd().split('\n');

beforeAll(() => {
  expect(fs.existsSync(path.join(ROOT, 'dist/controller/cli/main.js')), 'npm test builds dist/ first').toBe(true);
});

beforeEach(() => {
  home = tempHome();
});

afterEach(() => {
  fs.rmSync(path.dirname(home), { recursive: true, force: true });
});

/** A scratch copy of a manifest directory that a test can edit. */
function scratch(from: string): string {
  const dir = path.join(path.dirname(home), 'manifests');
  fs.cpSync(path.join(ROOT, from), dir, { recursive: true });
  return dir;
}

function edit(file: string, from: string | RegExp, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  const next = text.replace(from, to);
  expect(next, `edit of ${file} changed nothing`).not.toBe(text);
  fs.writeFileSync(file, next);
}

async function getJson(...args: string[]): Promise<any> {
  const r = await run('get', ...args, '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

async function storeRevision(): Promise<number> {
  const r = await run('version', '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).store.revision;
}

/** Gives the applied sessions a status, as the controller would (a third process writing the same file). */
async function writeStatuses(): Promise<void> {
  const store = new SqliteStore(path.join(home, 'state.db'));
  try {
    const set = async (ns: string, name: string, status: Record<string, unknown>) => {
      const o = (await store.get({ kind: 'AgentSession', namespace: ns, name }))!;
      await store.updateStatus({ ...o, status });
    };
    await set('default', 'fix-login', {
      phase: 'Running',
      restarts: 1,
      run: 2,
      tmuxSession: 'orchctl-fix-login',
      git: { commits: 3 },
      usage: {
        run: 2,
        inputTokens: 12_000,
        outputTokens: 345,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        totalTokens: 12_345,
        priced: false,
        byModel: [],
      },
      message: 'agent is working',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Running',
          message: 'agent is working',
          lastTransitionTime: '2025-01-01T10:00:00Z',
        },
      ],
    });
    await set('default', 'refactor-api', { phase: 'Failed', restarts: 3, exitCode: 2, message: 'exited with 2' });
  } finally {
    await store.close();
  }
}

describe('apply', () => {
  it('creates every object of examples/basic, then reports them unchanged', async () => {
    const first = await run('apply', '-f', EXAMPLES);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(lines(first.stdout)).toEqual(BASIC_OBJECTS.map((o) => `${o} created`));
    expect(first.stderr).toBe('');
    const rev = await storeRevision();
    const again = await run('apply', '-f', EXAMPLES);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(lines(again.stdout)).toEqual(BASIC_OBJECTS.map((o) => `${o} unchanged`));
    expect(await storeRevision()).toBe(rev);
    // The objects are there, with the system metadata the store sets.
    const s = await getJson('agentsession', 'fix-login');
    expect(s.metadata).toMatchObject({
      name: 'fix-login',
      namespace: 'default',
      generation: 1,
      labels: { team: 'web' },
    });
    expect(s.metadata.uid).toBeTruthy();
    expect(s.spec).toEqual({
      agentRef: 'claude-code',
      projectRef: 'webapp',
      prompt: 'Fix the login bug in issues/42.md and add a test.',
      desiredState: 'Running',
      maxDuration: '45m',
      restartPolicy: 'OnFailure',
    });
    // Paths are resolved against the manifest's directory.
    expect((await getJson('project', 'webapp')).spec.path).toBe(path.join(ROOT, 'examples/basic/workspace/webapp'));
  });

  it('reads manifests from stdin and prints names with -o name', async () => {
    const r = await orchctl(home, ['apply', '-f', '-', '-o', 'name'], {
      input: fs.readFileSync(path.join(ROOT, EXAMPLES, 'webapp.yaml')),
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual(BASIC_OBJECTS);
  });

  it('a changed field: configured, generation bumped; a removed one stays live (three-way merge)', async () => {
    const dir = scratch(EXAMPLES);
    const file = path.join(dir, 'webapp.yaml');
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    edit(file, 'maxDuration: 45m', 'maxDuration: 1h');
    const changed = await run('apply', '-f', dir);
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(lines(changed.stdout)).toEqual([
      'project.orchctl.io/webapp unchanged',
      'agent.orchctl.io/claude-code unchanged',
      'agentsession.orchctl.io/fix-login configured',
      'sessionpolicy.orchctl.io/default unchanged',
    ]);
    let s = await getJson('as', 'fix-login');
    expect(s.spec.maxDuration).toBe('1h');
    expect(s.metadata.generation).toBe(2);
    // Labels are metadata: configured, but generation stays.
    edit(file, 'labels: {team: web}', 'labels: {team: web, tier: frontend}');
    expect(lines((await run('apply', '-f', dir)).stdout)).toContain('agentsession.orchctl.io/fix-login configured');
    s = await getJson('as', 'fix-login');
    expect(s.metadata.labels).toEqual({ team: 'web', tier: 'frontend' });
    expect(s.metadata.generation).toBe(2);
    // Fields removed from the manifest are removed from the live object (or go back to their default).
    edit(file, /\s*maxDuration: 1h\n/, '\n');
    edit(file, /\s*restartPolicy: OnFailure.*\n/, '\n');
    edit(file, 'labels: {team: web, tier: frontend}', 'labels: {team: web}');
    expect(lines((await run('apply', '-f', dir)).stdout)).toContain('agentsession.orchctl.io/fix-login configured');
    s = await getJson('as', 'fix-login');
    expect(s.spec.maxDuration).toBeUndefined();
    expect(s.spec.restartPolicy).toBe('Never');
    expect(s.metadata.labels).toEqual({ team: 'web' });
    expect(s.metadata.generation).toBe(3);
    expect(lines((await run('apply', '-f', dir)).stdout)).toContain('agentsession.orchctl.io/fix-login unchanged');
  });

  it('keeps status and fields written by others when configuring', async () => {
    expect((await run('apply', '-f', EXAMPLES, '-f', MORE)).exitCode).toBe(0);
    await writeStatuses();
    const dir = scratch(EXAMPLES);
    edit(path.join(dir, 'webapp.yaml'), 'prompt: Fix the login bug', 'prompt: Really fix the login bug');
    expect(lines((await run('apply', '-f', dir)).stdout)).toContain('agentsession.orchctl.io/fix-login configured');
    const s = await getJson('as', 'fix-login');
    expect(s.status.phase).toBe('Running');
    expect(s.spec.prompt).toBe('Really fix the login bug in issues/42.md and add a test.');
  });

  it('one invalid document among valid ones: exit 1, file:line:col and JSON path, nothing created', async () => {
    const r = await run('apply', '-f', MIXED);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error: ${MIXED}/b-sessions.yaml:15:16 (document 2) spec.maxDuration: must be a duration like 45m\n` +
        'error: no objects were changed (1 error)\n',
    );
    for (const kind of ['agents', 'projects', 'agentsessions', 'sessionpolicies']) {
      const g = await run('get', kind);
      expect(g.exitCode).toBe(0);
      expect(g.stdout).toBe('');
      expect(g.stderr).toBe('No resources found in default namespace.\n');
    }
    expect(await storeRevision()).toBe(0);
  });

  it('an invalid document leaves existing objects untouched too', async () => {
    const dir = scratch(EXAMPLES);
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    const before = await getJson('as', 'fix-login');
    const rev = await storeRevision();
    edit(path.join(dir, 'webapp.yaml'), 'maxDuration: 45m', 'maxDuration: 2h');
    edit(path.join(dir, 'webapp.yaml'), 'maxConcurrentSessions: 5', 'maxConcurrentSessions: many');
    const r = await run('apply', '-f', dir);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `${path.join(dir, 'webapp.yaml')}:35:26 (document 4) spec.maxConcurrentSessions: must be of type integer`,
    );
    expect(await storeRevision()).toBe(rev);
    expect(await getJson('as', 'fix-login')).toEqual(before);
  });

  it('--dry-run=client and --dry-run=server report but write nothing', async () => {
    const client = await run('apply', '-f', EXAMPLES, '--dry-run=client');
    expect(client.exitCode, client.stderr).toBe(0);
    expect(lines(client.stdout)).toEqual(BASIC_OBJECTS.map((o) => `${o} created (dry run)`));
    const server = await run('apply', '-f', EXAMPLES, '--dry-run=server');
    expect(server.exitCode, server.stderr).toBe(0);
    expect(lines(server.stdout)).toEqual(BASIC_OBJECTS.map((o) => `${o} created (server dry run)`));
    expect(await storeRevision()).toBe(0);
    expect((await run('get', 'as')).stderr).toBe('No resources found in default namespace.\n');
    // On existing objects too.
    const dir = scratch(EXAMPLES);
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    const rev = await storeRevision();
    edit(path.join(dir, 'webapp.yaml'), 'maxDuration: 45m', 'maxDuration: 2h');
    for (const mode of ['client', 'server']) {
      const r = await run('apply', '-f', dir, `--dry-run=${mode}`);
      expect(lines(r.stdout)).toContain(
        `agentsession.orchctl.io/fix-login configured (${mode === 'server' ? 'server ' : ''}dry run)`,
      );
    }
    expect(await storeRevision()).toBe(rev);
    expect((await getJson('as', 'fix-login')).spec.maxDuration).toBe('45m');
    // An unknown mode is refused.
    const bad = await run('apply', '-f', dir, '--dry-run=maybe');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toBe('error: Invalid dry-run value (maybe). Must be "none", "server", or "client".\n');
  });

  it('--prune -l deletes applied objects that left the files and match the selector', async () => {
    const dir = path.join(path.dirname(home), 'prune');
    fs.mkdirSync(dir);
    const doc = (name: string, labels: string) =>
      `apiVersion: orchctl.io/v1alpha1\nkind: AgentSession\nmetadata: {name: ${name}, labels: {${labels}}}\n` +
      'spec: {agentRef: a, workdir: /tmp}\n';
    fs.writeFileSync(path.join(dir, 'a.yaml'), doc('keep', 'app: demo'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), doc('drop', 'app: demo'));
    fs.writeFileSync(path.join(dir, 'c.yaml'), doc('other', 'app: other'));
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    fs.rmSync(path.join(dir, 'b.yaml'));
    fs.rmSync(path.join(dir, 'c.yaml'));
    const r = await run('apply', '-f', dir, '--prune', '-l', 'app=demo');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual(['agentsession.orchctl.io/keep unchanged', 'agentsession.orchctl.io/drop pruned']);
    const names = (await getJson('as')).items.map((o: any) => o.metadata.name);
    expect(names).toEqual(['keep', 'other']); // "other" does not match the selector
    const noSel = await run('apply', '-f', dir, '--prune');
    expect(noSel.exitCode).toBe(1);
    expect(noSel.stderr).toMatch(/^error: all resources selected for prune without explicitly passing --all/);
  });
});

describe('get', () => {
  beforeEach(async () => {
    expect((await run('apply', '-f', EXAMPLES, '-f', MORE)).exitCode).toBe(0);
    await writeStatuses();
  });

  it('prints a table from the printer columns (golden)', async () => {
    const r = await run('get', 'agentsessions');
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
    await expect(normalizeTable(r.stdout)).toMatchFileSnapshot('../golden/get-agentsessions.txt');
    const rows = parseTable(r.stdout);
    expect(rows[0]).toEqual([
      'NAME',
      'PHASE',
      'AGENT',
      'PROJECT',
      'RUN',
      'RESTARTS',
      'ACTIVITY',
      'TASKS',
      'CONTEXT',
      'COST',
      'AGE',
    ]);
    expect(rows[1].slice(0, 6)).toEqual(['fix-login', 'Running', 'claude-code', 'webapp', '2', '1']);
    expect(rows[1][10]).toMatch(/^\d+s$/);
  });

  it('-o wide adds the priority columns (golden)', async () => {
    const r = await run('get', 'as', '-o', 'wide');
    await expect(normalizeTable(r.stdout)).toMatchFileSnapshot('../golden/get-agentsessions-wide.txt');
    expect(parseTable(r.stdout)[0]).toEqual([
      'NAME',
      'PHASE',
      'AGENT',
      'PROJECT',
      'RUN',
      'RESTARTS',
      'ACTIVITY',
      'TASKS',
      'CONTEXT',
      'COST',
      'TASK',
      'COMMITS',
      'TOKENS',
      'EXIT',
      'TMUX',
      'NODE',
      'MESSAGE',
      'AGE',
    ]);
  });

  it('-A lists every namespace with a NAMESPACE column; --show-labels adds LABELS (golden)', async () => {
    const r = await run('get', 'sessions', '-A', '--show-labels');
    await expect(normalizeTable(r.stdout)).toMatchFileSnapshot('../golden/get-agentsessions-all-namespaces.txt');
    expect(parseTable(r.stdout).map((row) => `${row[0]}/${row[1]}`)).toEqual([
      'NAMESPACE/NAME',
      'default/fix-login',
      'default/refactor-api',
      'docs/write-docs',
    ]);
  });

  it('-n selects a namespace, -l filters by labels', async () => {
    expect(parseTable((await run('get', 'as', '-n', 'docs')).stdout).map((r) => r[0])).toEqual(['NAME', 'write-docs']);
    expect(parseTable((await run('get', 'as', '-l', 'team=api')).stdout).map((r) => r[0])).toEqual([
      'NAME',
      'refactor-api',
    ]);
    expect(parseTable((await run('get', 'as', '-A', '-l', 'team in (docs,web)')).stdout).map((r) => r[1])).toEqual([
      'NAME',
      'fix-login',
      'write-docs',
    ]);
    expect(parseTable((await run('get', 'as', '-l', '!tier', '--no-headers')).stdout).map((r) => r[0])).toEqual([
      'fix-login',
    ]);
    const none = await run('get', 'as', '-l', 'team=nobody');
    expect(none.exitCode).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe('No resources found in default namespace.\n');
  });

  it('-o yaml of one object round-trips through apply (golden)', async () => {
    const r = await run('get', 'as', 'fix-login', '-o', 'yaml');
    expect(r.exitCode).toBe(0);
    await expect(normalize(r.stdout)).toMatchFileSnapshot('../golden/get-agentsession.yaml');
    const obj = YAML.parse(r.stdout);
    expect(obj.kind).toBe('AgentSession');
    expect(obj.status.phase).toBe('Running');
    const back = await orchctl(home, ['apply', '-f', '-'], { input: r.stdout });
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.stdout).toBe('agentsession.orchctl.io/fix-login unchanged\n');
  });

  it('-o json of a list (golden)', async () => {
    const r = await run('get', 'as', '-o', 'json');
    await expect(normalize(r.stdout)).toMatchFileSnapshot('../golden/get-agentsessions.json');
    const list = JSON.parse(r.stdout);
    expect(list.kind).toBe('List');
    expect(list.items.map((o: any) => o.metadata.name)).toEqual(['fix-login', 'refactor-api']);
  });

  it('-o name and several kinds at once (golden)', async () => {
    const names = await run('get', 'agentsessions,agents,sessionpolicies', '-o', 'name');
    expect(names.stdout).toBe(
      [
        'agentsession.orchctl.io/fix-login',
        'agentsession.orchctl.io/refactor-api',
        'agent.orchctl.io/claude-code',
        'sessionpolicy.orchctl.io/default',
        '',
      ].join('\n'),
    );
    const table = await run('get', 'agents,sessionpolicies');
    await expect(normalizeTable(table.stdout)).toMatchFileSnapshot('../golden/get-multi-kind.txt');
    expect(table.stdout).toContain('agent.orchctl.io/claude-code');
    // TYPE/NAME form
    expect(
      parseTable((await run('get', 'agent/claude-code', 'as/fix-login', '--no-headers')).stdout).map((r) => r[0]),
    ).toEqual(['agent.orchctl.io/claude-code', 'agentsession.orchctl.io/fix-login']);
  });

  it('-o jsonpath templates (golden)', async () => {
    const one = await run('get', 'as', 'fix-login', '-o', 'jsonpath={.status.phase}');
    expect(one.stdout).toBe('Running');
    const tpl =
      'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\\t"}{.status.phase}{"\\t"}' +
      '{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}';
    const r = await run('get', 'as', '-A', '-o', tpl);
    expect(r.exitCode, r.stderr).toBe(0);
    await expect(r.stdout).toMatchFileSnapshot('../golden/get-jsonpath.txt');
    expect(r.stdout).toBe('default/fix-login\tRunning\tTrue\ndefault/refactor-api\tFailed\t\ndocs/write-docs\t\t\n');
  });

  it('"No resources found" goes to stderr with exit 0; a missing name exits 1', async () => {
    const empty = await run('get', 'evaluations');
    expect(empty).toEqual({ exitCode: 0, stdout: '', stderr: 'No resources found in default namespace.\n' });
    const cluster = await run('get', 'nodes');
    expect(cluster).toEqual({ exitCode: 0, stdout: '', stderr: 'No resources found\n' });
    const missing = await run('get', 'as', 'nope');
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('error: agentsession "nope" not found in namespace "default"\n');
    const ignored = await run('get', 'as', 'nope', '--ignore-not-found');
    expect(ignored).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });

  it('-w streams a change made by another process', async () => {
    const watch = execa(BIN, ['get', 'as', '-w', '--output-watch-events'], {
      cwd: ROOT,
      env: cliEnv(home),
      extendEnv: false,
      reject: false,
    });
    const out: string[] = [];
    readline.createInterface({ input: watch.stdout! }).on('line', (l) => out.push(l));
    try {
      await until(() => out.some((l) => l.startsWith('ADDED') && l.includes('refactor-api')), 'the initial rows');
      expect(parseTable(out.join('\n'))[0]).toEqual([
        'EVENT',
        'NAME',
        'PHASE',
        'AGENT',
        'PROJECT',
        'RUN',
        'RESTARTS',
        'ACTIVITY',
        'TASKS',
        'CONTEXT',
        'COST',
        'AGE',
      ]);
      const dir = path.join(path.dirname(home), 'watch');
      fs.mkdirSync(dir);
      fs.writeFileSync(
        path.join(dir, 's.yaml'),
        'apiVersion: orchctl.io/v1alpha1\nkind: AgentSession\nmetadata: {name: watch-me}\n' +
          'spec: {agentRef: late-agent, workdir: /tmp}\n',
      );
      expect((await run('apply', '-f', dir)).exitCode).toBe(0);
      await until(() => out.some((l) => l.includes('watch-me')), 'the new row');
      const added = parseTable(out.find((l) => l.includes('watch-me'))!)[0];
      expect(added.slice(0, 6)).toEqual(['ADDED', 'watch-me', 'Pending', 'late-agent', '<none>', '<none>']);
      expect((await run('delete', 'as', 'watch-me')).exitCode).toBe(0);
      await until(() => out.some((l) => l.startsWith('DELETED') && l.includes('watch-me')), 'the DELETED row');
      // Objects in other namespaces are not part of this watch.
      expect(out.some((l) => l.includes('write-docs'))).toBe(false);
    } finally {
      watch.kill('SIGTERM');
    }
    const done = await watch;
    expect(done.exitCode).toBe(0);
    expect(String(done.stderr)).not.toMatch(/^\s+at /m);
  });
});

describe('describe', () => {
  it('prints fields, status, conditions and events at the bottom (golden)', async () => {
    expect((await run('apply', '-f', EXAMPLES, '-f', MORE)).exitCode).toBe(0);
    await writeStatuses();
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');
    const dir = path.join(path.dirname(home), 'events');
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'events.yaml'),
      YAML.stringify({
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'Event',
        metadata: { name: 'fix-login.started' },
        involvedObject: { apiVersion: 'orchctl.io/v1alpha1', kind: 'AgentSession', name: 'fix-login' },
        reason: 'Started',
        message: 'tmux session orchctl-fix-login started',
        type: 'Normal',
        count: 3,
        firstTimestamp: ago(2 * 3600_000),
        lastTimestamp: ago(30 * 60_000),
        source: { component: 'orchctl-controller', host: 'devbox' },
      }),
    );
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    const r = await run('describe', 'agentsession', 'fix-login');
    expect(r.exitCode, r.stderr).toBe(0);
    await expect(normalize(r.stdout)).toMatchFileSnapshot('../golden/describe-agentsession.txt');
    const out = lines(r.stdout);
    expect(out[0]).toBe('Name:         fix-login');
    expect(out.at(-1)).toMatch(
      /^ {2}Normal\s+Started\s+30m \(x3 over 120m\)\s+orchctl-controller\s+tmux session orchctl-fix-login started$/,
    );
    expect(out.indexOf('Events:')).toBeGreaterThan(out.findIndex((l) => l.startsWith('Status:')));
    const missing = await run('describe', 'as', 'nope');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toBe('error: agentsession "nope" not found in namespace "default"\n');
  });
});

describe('delete', () => {
  beforeEach(async () => {
    expect((await run('apply', '-f', EXAMPLES, '-f', MORE)).exitCode).toBe(0);
  });
  const names = async (...args: string[]) => (await getJson('as', ...args)).items.map((o: any) => o.metadata.name);

  it('by name', async () => {
    const r = await run('delete', 'agentsession', 'fix-login');
    expect(r).toEqual({
      exitCode: 0,
      stdout: 'agentsession.orchctl.io "fix-login" deleted from default namespace\n',
      stderr: '',
    });
    expect(await names()).toEqual(['refactor-api']);
    const again = await run('delete', 'agentsession', 'fix-login');
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toBe('error: agentsession "fix-login" not found in namespace "default"\n');
    expect(await run('delete', 'agentsession', 'fix-login', '--ignore-not-found')).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: '',
    });
  });

  it('by -f', async () => {
    const r = await run('delete', '-f', EXAMPLES);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lines(r.stdout)).toEqual([
      'project.orchctl.io "webapp" deleted from default namespace',
      'agent.orchctl.io "claude-code" deleted from default namespace',
      'agentsession.orchctl.io "fix-login" deleted from default namespace',
      'sessionpolicy.orchctl.io "default" deleted from default namespace',
    ]);
    expect(await names()).toEqual(['refactor-api']);
    expect((await run('get', 'agents')).stderr).toBe('No resources found in default namespace.\n');
  });

  it('by -l, and -n', async () => {
    const r = await run('delete', 'as', '-l', 'team=api');
    expect(r.stdout).toBe('agentsession.orchctl.io "refactor-api" deleted from default namespace\n');
    expect(await names()).toEqual(['fix-login']);
    expect(await names('-n', 'docs')).toEqual(['write-docs']);
    expect((await run('delete', 'as', 'write-docs', '-n', 'docs')).exitCode).toBe(0);
    expect(await names('-A')).toEqual(['fix-login']);
    const none = await run('delete', 'as', '-l', 'team=nobody');
    expect(none).toEqual({ exitCode: 0, stdout: '', stderr: 'No resources found\n' });
  });

  it('--dry-run deletes nothing', async () => {
    const r = await run('delete', 'as', 'fix-login', '--dry-run=server');
    expect(r.stdout).toBe('agentsession.orchctl.io "fix-login" deleted from default namespace (server dry run)\n');
    expect(await names()).toEqual(['fix-login', 'refactor-api']);
  });
});

describe('diff', () => {
  it('exits 0 without differences and 1 with them, printing a unified diff (golden)', async () => {
    const dir = scratch(EXAMPLES);
    const created = await run('diff', '-f', dir);
    expect(created.exitCode).toBe(1); // nothing is live yet: everything is new
    expect(created.stdout).toContain('+++ MERGED/agentsessions.orchctl.io.default.fix-login');
    expect((await run('apply', '-f', dir)).exitCode).toBe(0);
    const same = await run('diff', '-f', dir);
    expect(same).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    edit(path.join(dir, 'webapp.yaml'), 'maxDuration: 45m', 'maxDuration: 1h');
    const changed = await run('diff', '-f', dir);
    expect(changed.exitCode).toBe(1);
    expect(changed.stderr).toBe('');
    await expect(normalize(changed.stdout, { [dir]: '<DIR>' })).toMatchFileSnapshot('../golden/diff-agentsession.txt');
    expect(changed.stdout).toContain('-  maxDuration: 45m\n+  maxDuration: 1h\n');
    // diff writes nothing
    expect((await getJson('as', 'fix-login')).spec.maxDuration).toBe('45m');
    const bad = await run('diff', '-f', MIXED);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain('b-sessions.yaml:15:16 (document 2) spec.maxDuration: must be a duration like 45m');
  });
});

describe('explain', () => {
  it('documents a kind and its fields', async () => {
    const r = await run('explain', 'agentsessions');
    expect(r.exitCode, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out.slice(0, 3)).toEqual(['GROUP:      orchctl.io', 'KIND:       AgentSession', 'VERSION:    v1alpha1']);
    expect(out).toContain('DESCRIPTION:');
    expect(out).toContain('FIELDS:');
    expect(out).toContain('  spec\t<Object>');
    expect(out).toContain('  metadata\t<Object>');
  });

  it('documents a nested field (golden)', async () => {
    const r = await run('explain', 'as.spec.restartPolicy');
    expect(r.exitCode, r.stderr).toBe(0);
    await expect(r.stdout).toMatchFileSnapshot('../golden/explain-agentsession-restartpolicy.txt');
    expect(r.stdout).toContain('FIELD: restartPolicy <string>');
    expect(r.stdout).toContain('enum: Never, OnFailure, Always');
    const nested = await run('explain', 'agentsession.spec.agent.stop', '--recursive');
    expect(nested.stdout).toContain('FIELD: stop <Object>');
    expect(nested.stdout).toContain('  gracePeriod\t<string (duration)>');
    const bad = await run('explain', 'as.spec.nope');
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toBe('error: field "nope" does not exist in agentsessions.spec\n');
  });
});

describe('version', () => {
  it('prints the client version, the store and the controller', async () => {
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    const client = await run('version', '--client');
    expect(client.exitCode).toBe(0);
    expect(client.stdout).toBe(
      `Client Version: v${version} (node ${process.version}, ${process.platform}/${process.arch})\n`,
    );
    expect(fs.existsSync(home)).toBe(false); // --client does not touch the state directory
    const full = await run('version');
    expect(lines(full.stdout)).toEqual([
      `Client Version: v${version} (node ${process.version}, ${process.platform}/${process.arch})`,
      `Store: sqlite ${path.join(home, 'state.db')} (revision 0)`,
      'Controller: not running',
    ]);
    const json = JSON.parse((await run('version', '-o', 'json')).stdout);
    expect(json).toEqual({
      clientVersion: { orchctl: `v${version}`, node: process.version, platform: `${process.platform}/${process.arch}` },
      store: { backend: 'sqlite', path: path.join(home, 'state.db'), revision: 0 },
      controller: null,
    });
  });
});

describe('state files', () => {
  it('are created readable by their owner only', async () => {
    expect((await run('apply', '-f', EXAMPLES)).exitCode).toBe(0);
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    for (const f of fs.readdirSync(home)) expect(fs.statSync(path.join(home, f)).mode & 0o777, f).toBe(0o600);
  });
});

describe('bad input', () => {
  it.each([
    [['get', 'widgets'], /^error: unknown resource type "widgets" \(known: agents, /],
    [['get', 'sesions'], /^error: unknown resource type "sesions"; did you mean "agentsessions"\?/],
    [['get', 'as', '-l', 'a b c'], /^error: unable to parse requirement: "a b c"/],
    [['get', 'as', '-o', 'xml'], /^error: unable to match a printer suitable for the output format "xml"/],
    [['apply', '-f', 'does/not/exist.yaml'], /^error: the path "does\/not\/exist.yaml" does not exist/],
    [
      ['apply', '-f', 'test/fixtures/manifests/bad/invalid-yaml.yaml'],
      /^error: test\/fixtures\/manifests\/bad\/invalid-yaml.yaml:6:3 \(document 1\) invalid YAML/,
    ],
    [
      ['apply', '-f', 'test/fixtures/manifests/bad/unknown-kind.yaml'],
      /^error: test\/fixtures\/manifests\/bad\/unknown-kind.yaml:2:7 \(document 1\) kind: no kind "AgentSesion"/,
    ],
    [['apply', '-f', 'test/fixtures/manifests/bad'], /invalid YAML/],
    [['apply'], /required option '-f, --filename <path>' not specified/],
    [['delete', 'as'], /^error: resource\(s\) were provided, but no name was specified/],
    [['explain', 'widgets'], /unknown resource type "widgets"/],
    [['no-such-command'], /unknown command 'no-such-command'/],
    [['get', 'as', '--no-such-flag'], /unknown option '--no-such-flag'/],
    [['completion', 'fish'], /^error: unsupported shell "fish": use bash or zsh/],
  ])('orchctl %j exits 1 with a message and no stack trace', async (args, message) => {
    const r = await run(...args);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(await storeRevisionIfAny()).toBe(0);
  });

  it('a usage error is one line and a pointer to the help, not the help itself', async () => {
    for (const args of [['no-such-command'], ['get', 'as', '--no-such-flag'], ['apply']]) {
      const r = await run(...args);
      expect(r.exitCode).toBe(1);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(2);
      expect(lines[0]).toMatch(/^error: /);
      expect(lines[1]).toBe("Run 'orchctl --help' for usage.");
    }
  });

  it('--version prints the version', async () => {
    const r = await run('--version');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^orchctl v\d+\.\d+\.\d+\n$/);
  });

  it('no message says "server" or "exit code undefined"', async () => {
    const outputs = await Promise.all([
      run('get', 'widgets'),
      run('get', 'as', 'nope'),
      run('delete', 'as', 'nope'),
      run('describe', 'as', 'nope'),
    ]);
    for (const r of outputs) expect(r.stderr).not.toMatch(/server|undefined/i);
  });

  it('a bad -o jsonpath template on existing objects', async () => {
    expect((await run('apply', '-f', EXAMPLES)).exitCode).toBe(0);
    const r = await run('get', 'as', '-o', 'jsonpath={.metadata.name');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe('error: unclosed action in template "{.metadata.name"\n');
  });

  it('a state file that is not a database', async () => {
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(
      path.join(home, 'state.db'),
      'this is not sqlite, just text that is long enough to have a header '.repeat(20),
    );
    const r = await run('get', 'as');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `error: cannot use the store ${path.join(home, 'state.db')}: file is not a database ` +
        '(the file is damaged or not an orchctl store: stop the controller and restore a backup with ' +
        '`orchctl store restore FILE`, or move the file aside to start an empty store (running agents are then ' +
        'reported as orphans, never killed))\n',
    );
  });

  it('a store with damaged pages: get, describe, version and diff name the file and what to do', async () => {
    expect((await run('apply', '-f', EXAMPLES)).exitCode).toBe(0);
    const db = path.join(home, 'state.db');
    // Every page but the first (the header and the schema) gets a garbage b-tree header.
    const fd = fs.openSync(db, 'r+');
    for (let page = 1; page * 4096 < fs.statSync(db).size; page++)
      fs.writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, page * 4096);
    fs.closeSync(fd);
    for (const args of [['get', 'as'], ['describe', 'as'], ['version'], ['diff', '-f', EXAMPLES]]) {
      const r = await run(...args);
      expect(r.exitCode, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(
        /^error: cannot use the store .*state\.db: database disk image is malformed/,
      );
      expect(r.stderr, args.join(' ')).toContain(`${db}:`);
      expect(r.stderr, args.join(' ')).toContain('restore a backup with `orchctl store restore FILE`');
    }
  });

  it('an ORCHCTL_HOME that is a file', async () => {
    fs.mkdirSync(path.dirname(home), { recursive: true });
    fs.writeFileSync(home, 'not a directory');
    const r = await run('get', 'as');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: /);
  });
});

/** The store revision, or 0 when the command never created a state file. */
async function storeRevisionIfAny(): Promise<number> {
  if (!fs.existsSync(path.join(home, 'state.db'))) return 0;
  return storeRevision();
}

describe('completion', () => {
  it('prints a bash script and completes kinds and names', async () => {
    const script = await run('completion', 'bash');
    expect(script.exitCode).toBe(0);
    expect(script.stdout).toContain('complete -o default -F _orchctl_complete orchctl');
    expect((await run('apply', '-f', EXAMPLES)).exitCode).toBe(0);
    const kinds = lines((await run('__complete', 'get')).stdout);
    expect(kinds).toEqual(expect.arrayContaining(['agentsessions', 'as', 'agents', 'projects']));
    const names = lines((await run('__complete', 'get', 'as')).stdout);
    expect(names).toContain('fix-login');
  });
});
