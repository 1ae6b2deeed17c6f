/**
 * examples/autopilot/ as shipped, end to end: its setup.mjs and manifests in a temp copy (so the
 * repository's own workspace is never touched), the real controller (bin/orchctl controller
 * --manifests) on a tmux socket and ORCHCTL_HOME of its own, and the quickstart's simulated agent.
 * The story its README tells: the stale docs-site is started, the protected billing is left alone
 * with a skip that says so, and the person's flaky-api session is restarted twice after transient
 * failures, with the recovery note in each new run's prompt, until run 3 succeeds.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Decision, DecisionSpec } from '../../controller/api/autopilot.js';
import type { AgentSession } from '../../controller/api/session.js';
import type { Project } from '../../controller/api/project.js';
import { parseTable, ROOT } from '../support/cli.js';
import { git, makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';

let h: Harness;
let example: string;

beforeAll(() => {
  expect(fs.existsSync(path.join(ROOT, 'dist/controller/cli/main.js')), 'run `npm run build` first').toBe(true);
});

beforeEach(async () => {
  h = await makeHarness();
  // The same layout as the repository: the example's Agent finds the simulated agent at
  // ../../../quickstart/agent/ from each project directory.
  example = path.join(h.dir, 'examples', 'autopilot');
  fs.cpSync(path.join(ROOT, 'examples/autopilot'), example, {
    recursive: true,
    filter: (src) => path.basename(src) !== 'workspace',
  });
  fs.cpSync(path.join(ROOT, 'examples/quickstart/agent'), path.join(h.dir, 'examples/quickstart/agent'), {
    recursive: true,
  });
  // The only change to the copy: a faster agent (the story is the same at any pace).
  const agents = path.join(example, 'agents.yaml');
  const text = fs.readFileSync(agents, 'utf8');
  const fast = text.replace(/(name: SIM_AGENT_STEP_MS, value: )"\d+"/, '$1"20"');
  expect(fast).not.toBe(text);
  fs.writeFileSync(agents, fast);
});

afterEach(async () => {
  await h.cleanup();
});

/** Every Decision the autopilot writes has a spec. */
type Dec = Decision & { spec: DecisionSpec };
const decisions = async () => (await h.store.list('Decision', { namespace: 'default' })).items as Dec[];
const sessions = async () => (await h.store.list('AgentSession', { namespace: 'default' })).items as AgentSession[];
const project = async (name: string) =>
  (await h.store.get({ kind: 'Project', namespace: 'default', name })) as Project | undefined;
const prompt = (session: string, run: number) =>
  fs.readFileSync(path.join(h.home, 'sessions', 'default', session, String(run), 'prompt.md'), 'utf8');

it('tells its story: starts the stale project, skips the protected one, recovers the flaky one', async () => {
  const setup = await execa(process.execPath, [path.join(example, 'setup.mjs')], { reject: false });
  expect(setup.exitCode, setup.stderr).toBe(0);
  for (const repo of ['docs-site', 'billing', 'flaky-api']) {
    const dir = path.join(example, 'workspace', repo);
    const days = (Date.now() - Date.parse((await git(dir, ['log', '-1', '--format=%cI'])).stdout)) / 86_400_000;
    expect(Math.round(days), repo).toBe(5);
    // Nothing in a demo repository may be read as a manifest.
    const files = (await git(dir, ['ls-files'])).stdout.split('\n');
    expect(files.filter((f) => /\.(ya?ml|json)$/.test(f))).toEqual([]);
  }

  h.start(['--manifests', example]);

  // flaky-api: runs 1 and 2 fail with a transient error, the autopilot restarts it twice, run 3 succeeds.
  const flaky = await h.waitFor(
    'flaky-api Succeeded on run 3',
    async () => {
      const s = await h.session('flaky-api');
      return phaseOf(s) === 'Succeeded' && s;
    },
    45_000,
  );
  expect(flaky.status?.run).toBe(3);
  const restarts = (await decisions())
    .filter((d) => d.spec.action === 'restart')
    .sort((a, b) => a.spec.think - b.spec.think);
  expect(restarts.map((d) => [d.spec.target, d.status?.phase, d.spec.planner, d.spec.recovery?.class])).toEqual([
    [{ project: 'flaky-api', session: 'flaky-api' }, 'Executed', 'recovery', 'Transient'],
    [{ project: 'flaky-api', session: 'flaky-api' }, 'Executed', 'recovery', 'Transient'],
  ]);
  expect(restarts.map((d) => [d.spec.recovery?.run, d.spec.recovery?.attempt])).toEqual([
    [1, 1],
    [2, 2],
  ]);
  expect(restarts[0].spec.recovery?.evidence).toContain('ETIMEDOUT');
  expect(prompt('flaky-api', 1)).not.toContain('Why this run was restarted');
  for (const run of [2, 3]) {
    const text = prompt('flaky-api', run);
    expect(text).toContain('## Why this run was restarted');
    expect(text).toContain(
      `Recovery attempt ${run - 1} of 3: the previous run (run ${run - 1}) failed with a Transient`,
    );
    expect(text).toContain('Add a /version route to the API'); // the session keeps its own task
  }
  // The success clears the project's error-retry count (at the think after run 3 ended).
  await h.waitFor('flaky-api errorRetries cleared', async () => {
    const p = await project('flaky-api');
    return !!p?.status && !p.status.errorRetries;
  });

  // docs-site: stale and the highest priority that is not protected: started once, with its goals.
  const start = await h.waitFor('the start of docs-site', async () =>
    (await decisions()).find((d) => d.spec.action === 'start' && d.spec.target.project === 'docs-site'),
  );
  expect(start.status?.phase).toBe('Executed');
  expect(start.spec.reason).toMatch(/^stale: idle 5 days, priority 10$/);
  const started = start.status?.result?.session;
  expect(started).toMatch(/^docs-site-/);
  const docs = await h.waitFor('the docs-site session Succeeded', async () => {
    const s = await h.session(started!);
    return phaseOf(s) === 'Succeeded' && s;
  });
  expect(docs.spec?.projectRef).toBe('docs-site');
  expect(docs.spec?.restartPolicy).toBe('Never');
  expect(prompt(started!, 1)).toContain('Goals: write the installation guide');

  // billing: stale too (and a higher priority), but protected: only skips, which say why.
  const billing = (await decisions()).filter((d) => d.spec.target.project === 'billing');
  expect(billing.length).toBeGreaterThan(0);
  for (const d of billing) {
    expect(d.spec.action).toBe('skip');
    expect(d.status?.phase).toBe('Logged');
    expect(d.spec.reason).toMatch(/^stale \(idle 5 days\) but protected: left alone$/);
  }
  expect((await sessions()).filter((s) => s.spec?.projectRef === 'billing')).toEqual([]);

  // Nothing else was started or restarted: one start in all, the two restarts, no stops.
  const acted = (await decisions()).filter((d) => ['start', 'stop', 'restart'].includes(d.spec.action));
  expect(acted.map((d) => `${d.spec.action} ${d.spec.target.project}`).sort()).toEqual([
    'restart flaky-api',
    'restart flaky-api',
    'start docs-site',
  ]);

  // What a person reads: `orchctl get decisions`.
  const table = await h.orchctl(['get', 'decisions']);
  expect(table.exitCode, table.stderr).toBe(0);
  const [header, ...rows] = parseTable(table.stdout);
  expect(header).toEqual(['NAME', 'ACTION', 'PROJECT', 'SESSION', 'PHASE', 'WHY', 'AGE']);
  const row = (r: string[]) => r.slice(1, 5).join(' ');
  expect(rows.filter((r) => row(r) === 'start docs-site <none> Executed')).toHaveLength(1);
  expect(rows.filter((r) => row(r) === 'restart flaky-api flaky-api Executed')).toHaveLength(2);
  expect(rows.filter((r) => row(r) === 'skip billing <none> Logged').length).toBeGreaterThan(0);
  expect(rows.filter((r) => !['start', 'restart', 'skip'].includes(r[1]))).toEqual([]);
}, 90_000);

it('every manifest of the example names the editor schema with a modeline that resolves', () => {
  const dir = path.join(ROOT, 'examples/autopilot');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  expect(files.sort()).toEqual(['agents.yaml', 'autopilot.yaml', 'projects.yaml', 'sessions.yaml']);
  for (const f of files) {
    const first = fs.readFileSync(path.join(dir, f), 'utf8').split('\n')[0];
    const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
    expect(m, f).not.toBeNull();
    expect(fs.existsSync(path.resolve(dir, m![1])), f).toBe(true);
  }
});
