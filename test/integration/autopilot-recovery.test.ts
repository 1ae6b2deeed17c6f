/**
 * Error recovery end to end (issue 13, seed 002 §2.4): the real controller process, real tmux (a
 * socket per test), real git repositories, the store file and the quickstart's simulated agent
 * failing on request. A transient failure is restarted with a recovery note in the new run's
 * prompt.md up to maxErrorRetries (3) times and then escalated, across a controller kill -9 in the
 * middle (the count goes on from where it was: never reset, never counted twice); an Auth failure
 * is escalated at once; at the cautious level the recovery restart waits for `orchctl approve`.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Autopilot, AutonomyLevel, Decision } from '../../controller/api/autopilot.js';
import type { Project } from '../../controller/api/project.js';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import { ROOT } from '../support/cli.js';
import { git, makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');
const TRANSIENT_LINE = 'Error: connect ETIMEDOUT 203.0.113.7:443 (request to the model API timed out)';
const AUTH_LINE = 'Error: 401 Unauthorized - invalid x-api-key';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

// ---- the world ------------------------------------------------------------------------------------

/** A second git repository beside the harness's, for a second project. */
async function repo(name: string): Promise<string> {
  const dir = path.join(h.dir, name);
  fs.mkdirSync(dir);
  await git(dir, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
  await git(dir, ['add', '.']);
  await git(dir, ['commit', '-qm', 'initial']);
  return dir;
}

const project = (name: string, dir: string) => ({
  apiVersion: API_VERSION,
  kind: 'Project',
  metadata: { name },
  spec: { path: dir },
});

/**
 * The simulated agent at a quick pace: an [error:...] run fails about a second after it starts, long
 * enough to see it launched before it ends (and thinks are at least 1 s apart anyway).
 */
const simAgent = {
  apiVersion: API_VERSION,
  kind: 'Agent',
  metadata: { name: 'sim' },
  spec: {
    command: [process.execPath, SIM_AGENT],
    promptDelivery: 'argument',
    env: [{ name: 'SIM_AGENT_STEP_MS', value: '200' }],
  },
};

/** A person's session of a project (restartPolicy Never, the default: recovery is the autopilot's). */
const personSession = (name: string, projectRef: string, prompt: string) => ({
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name },
  spec: { agentRef: 'sim', projectRef, prompt },
});

/** An Autopilot that acts at once: no cooldowns, the shortest interval, the default 3 error retries. */
const pilot = (level: AutonomyLevel) => ({
  apiVersion: API_VERSION,
  kind: 'Autopilot',
  metadata: { name: 'pilot' },
  spec: {
    autonomyLevel: level,
    projectSelector: {},
    interval: '10s',
    planner: { backend: 'heuristic' },
    guardrails: { cooldowns: { sameProject: '0s', sameAction: '0s' }, maxErrorRetries: 3 },
    sessionTemplate: { agentRef: 'sim' },
  },
});

// ---- reading it back ---------------------------------------------------------------------------

const ns = 'default';
const getProject = async (name: string) => (await h.store.get({ kind: 'Project', namespace: ns, name })) as Project;
const getPilot = async () => (await h.store.get({ kind: 'Autopilot', namespace: ns, name: 'pilot' })) as Autopilot;
async function decisions(projectName: string): Promise<Decision[]> {
  const { items } = await h.store.list('Decision', { namespace: ns });
  return (items as Decision[])
    .filter((d) => d.spec?.target.project === projectName)
    .sort((a, b) => (a.spec?.think ?? 0) - (b.spec?.think ?? 0));
}
const recoveryOf = (ds: Decision[], run: number) => ds.filter((d) => d.spec?.recovery?.run === run);
const promptOf = (session: string, run: number) =>
  fs.readFileSync(path.join(h.home, 'sessions', ns, session, String(run), 'prompt.md'), 'utf8');
const inRun = (name: string, run: number, phase: string) => async () => {
  const s = await h.session(name);
  return s?.status?.run === run && phaseOf(s) === phase && s;
};
const retriesOf = async (name: string) => (await getProject(name)).status?.errorRetries;
const condition = (p: Project, type: string) => p.status?.conditions?.find((c) => c.type === type);
async function notices(about: string): Promise<Resource[]> {
  const { items } = await h.store.list('Event', { namespace: ns });
  return items.filter((e) => e.reason === 'AutopilotNotice' && (e.involvedObject as { name: string }).name === about);
}

/** The tmux pane of a run (by its @orchctl-key tag, namespace/name#run), if tmux has it. */
async function pane(key: string): Promise<{ dead: boolean } | undefined> {
  const r = await execa('tmux', ['-L', h.socket, 'list-panes', '-a', '-F', `${TAGS_FORMAT}\t#{pane_dead}`], {
    reject: false,
  });
  const line = String(r.stdout)
    .split('\n')
    .find((l) => parseTags(l.split('\t')[0]).key === key);
  return line ? { dead: line.split('\t')[1] === '1' } : undefined;
}

/**
 * The autopilot thinks `n` more times (its interval, or a wake-up) while `check` holds at every
 * poll (a failed check fails at once): how an absence is asserted without a bare sleep.
 */
async function throughThinks(n: number, check: () => Promise<void>): Promise<void> {
  const thinks = async () => (await getPilot()).status?.thinks ?? 0;
  const from = await thinks();
  const deadline = Date.now() + n * 10_000 + 15_000;
  for (;;) {
    await check();
    if ((await thinks()) >= from + n) return;
    if (Date.now() > deadline) throw new Error(`the autopilot did not think ${n} more times (from think ${from})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---- the tests ------------------------------------------------------------------------------------

describe('autopilot error recovery with the simulated agent', () => {
  it('transient: 3 recovery restarts, then escalated; count survives kill -9; Auth: escalated at once', async () => {
    const keys = await repo('keys-repo');
    await h.apply([
      project('flaky', h.repo),
      project('keys', keys),
      simAgent,
      personSession('flaky-1', 'flaky', 'Add a retry() helper. [error:transient]'),
      personSession('keys-1', 'keys', 'Rotate the API client. [error:auth]'),
      pilot('full'),
    ]);
    h.start();

    // Run 2: started by recovery restart 1 (the count and the restart stamp are one write).
    await h.waitFor('recovery restart 1', async () => (await retriesOf('flaky'))?.count === 1);
    expect(await retriesOf('flaky')).toMatchObject({ lastFailure: { session: 'flaky-1', run: 1, class: 'Transient' } });
    // Restart 2 written and run 3 launched (its tmux pane exists): kill -9 the controller. Run 3
    // fails while no controller runs; the next one finds its dead pane and the count at 2.
    await h.waitFor(
      'recovery restart 2 and run 3 launched',
      async () => (await retriesOf('flaky'))?.count === 2 && (await pane('default/flaky-1#3')) !== undefined,
    );
    await h.stopController('SIGKILL');
    await h.waitFor('run 3 ended with no controller', async () => (await pane('default/flaky-1#3'))?.dead);
    expect(await retriesOf('flaky')).toMatchObject({
      count: 2,
      lastFailure: { session: 'flaky-1', run: 2, class: 'Transient' },
    });
    expect((await h.session('flaky-1'))?.status?.run).toBe(3);
    h.start();

    // Run 4 fails; retries are used up, so it escalates: one notify Decision, Executed.
    const escalation = await h.waitFor(
      'the escalation after run 4',
      async () => recoveryOf(await decisions('flaky'), 4).find((d) => d.status?.phase === 'Executed'),
      60_000,
    );
    expect(escalation.spec).toMatchObject({ action: 'notify', planner: 'recovery' });
    expect(escalation.spec?.recovery).toMatchObject({ class: 'Transient', run: 4, attempt: 3 });
    expect(escalation.spec?.reason).toContain('3 recovery restart(s) used, maxErrorRetries is 3');

    const s = (await h.session('flaky-1'))!;
    expect(s.status).toMatchObject({ run: 4, phase: 'Failed' });
    for (const run of [2, 3, 4]) {
      const prompt = promptOf('flaky-1', run);
      expect(prompt).toContain('Add a retry() helper.');
      expect(prompt).toContain('## Why this run was restarted');
      expect(prompt).toContain(`Recovery attempt ${run - 1} of 3: the previous run (run ${run - 1}) failed`);
      expect(prompt).toContain('with a Transient error');
      expect(prompt).toContain(TRANSIENT_LINE);
    }
    expect(promptOf('flaky-1', 1)).not.toContain('Why this run was restarted');

    const flaky = await getProject('flaky');
    expect(flaky.status?.errorRetries).toMatchObject({
      count: 3,
      lastFailure: { session: 'flaky-1', run: 4, class: 'Transient' },
      escalated: { reason: escalation.spec?.reason },
    });
    expect(condition(flaky, 'Escalated')).toMatchObject({ status: 'True', reason: 'AutopilotEscalated' });
    const warned = await notices('flaky');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ type: 'Warning', reason: 'AutopilotNotice' });
    expect(String(warned[0].message)).toContain('Project flaky needs a person');

    // Exactly one decision per failed run, exactly three restarts — across the kill -9.
    const flakyDecisions = await decisions('flaky');
    for (const run of [1, 2, 3]) {
      const [d, ...more] = recoveryOf(flakyDecisions, run);
      expect(more).toEqual([]);
      expect(d.spec).toMatchObject({ action: 'restart', target: { session: 'flaky-1' } });
      expect(d.spec?.recovery).toMatchObject({ class: 'Transient', run, attempt: run });
      expect(d.status?.phase).toBe('Executed');
    }
    expect(recoveryOf(flakyDecisions, 4)).toHaveLength(1);
    expect(flakyDecisions.filter((d) => d.spec?.action === 'restart')).toHaveLength(3);
    const restarting = (await h.events('flaky-1')).filter((e) => e.reason === 'Restarting');
    expect(restarting.map((e) => String(e.message).split(' for ')[0])).toEqual([
      'Starting run 2',
      'Starting run 3',
      'Starting run 4',
    ]);

    // The Auth failure: escalated at once, no restart, the count untouched.
    const [authDecision, ...moreAuth] = await decisions('keys');
    expect(moreAuth).toEqual([]);
    expect(authDecision.spec).toMatchObject({ action: 'notify', recovery: { class: 'Auth', run: 1, attempt: 0 } });
    expect(authDecision.spec?.recovery?.evidence).toContain(AUTH_LINE);
    expect(authDecision.spec?.reason).toContain('Auth failure is not retried');
    expect(authDecision.status?.phase).toBe('Executed');
    const keysProject = await getProject('keys');
    expect(keysProject.status?.errorRetries).toMatchObject({ count: 0, lastFailure: { run: 1, class: 'Auth' } });
    expect(keysProject.status?.errorRetries?.escalated).toBeDefined();
    expect(condition(keysProject, 'Escalated')).toMatchObject({ status: 'True' });
    expect(await notices('keys')).toMatchObject([{ type: 'Warning' }]);

    // Two more thinks (the 10s interval): nothing more is done about either project.
    const decided = (await h.store.list('Decision', { namespace: ns })).items.length;
    await throughThinks(2, async () => {
      expect((await h.session('flaky-1'))?.status?.run).toBe(4);
      expect((await h.session('keys-1'))?.status?.run).toBe(1);
      expect((await h.store.list('Decision', { namespace: ns })).items.length).toBe(decided);
    });
    expect((await getProject('flaky')).status?.errorRetries?.count).toBe(3);
    expect(fs.existsSync(path.join(h.home, 'sessions', ns, 'flaky-1', '5'))).toBe(false);
  }, 150_000);

  it('at the cautious level the recovery restart waits for `orchctl approve decision`, then runs', async () => {
    await h.apply([
      project('flaky', h.repo),
      simAgent,
      // Fails run 1 only: the approved recovery restart succeeds.
      personSession('flaky-1', 'flaky', 'Add a retry() helper. [error:transient:1]'),
      pilot('cautious'),
    ]);
    h.start();
    const pending = await h.waitFor('a pending recovery restart', async () =>
      recoveryOf(await decisions('flaky'), 1).find((d) => d.status?.phase === 'PendingApproval'),
    );
    expect(pending.spec).toMatchObject({ action: 'restart', recovery: { class: 'Transient', attempt: 1 } });
    // Waiting for a person changes nothing: no count, no run 2 (through the next interval think).
    await throughThinks(1, async () => {
      expect((await h.session('flaky-1'))?.status).toMatchObject({ run: 1, phase: 'Failed' });
      expect((await getProject('flaky')).status?.errorRetries?.count ?? 0).toBe(0);
      expect(recoveryOf(await decisions('flaky'), 1)).toHaveLength(1);
    });

    const r = await h.orchctl(['approve', 'decision', pending.metadata.name]);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(pending.metadata.name);
    const run2 = await h.waitFor('run 2 Succeeded', inRun('flaky-1', 2, 'Succeeded'), 30_000);
    // A new run the autopilot asked for: RUN 2, RESTARTS 0, and the Decision named as its reason.
    expect(run2.status).toMatchObject({ restarts: 0, lastStart: { run: 2, reason: 'Autopilot' } });
    expect(run2.status!.lastStart!.message).toMatch(new RegExp(`^Decision ${pending.metadata.name} \\(`));
    const [executed, ...more] = recoveryOf(await decisions('flaky'), 1);
    expect(more).toEqual([]);
    expect(executed.status).toMatchObject({ phase: 'Executed' });
    expect(executed.status?.message).toMatch(/^approved/);
    const prompt = promptOf('flaky-1', 2);
    expect(prompt).toContain('Recovery attempt 1 of 3: the previous run (run 1) failed with a Transient error');
    expect(prompt).toContain(TRANSIENT_LINE);
    // The run that succeeded after the failure clears the count at the next think.
    const recovered = await h.waitFor('the count cleared', async () => {
      const p = await getProject('flaky');
      return !p.status?.errorRetries && condition(p, 'Escalated')?.reason === 'Recovered' && p;
    });
    expect(condition(recovered, 'Escalated')).toMatchObject({ status: 'False' });
    expect(await notices('flaky')).toEqual([]);
  });
});
