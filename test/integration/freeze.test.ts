/**
 * The emergency stop end to end (issue 25 §5): the real controller process, real tmux (a socket of
 * its own), a real git repository and the quickstart's simulated agent. `orchctl freeze PROJECT`
 * holds the running agent at once — every process of its run stopped (state T), its screen and
 * output unchanged, ACTIVITY frozen, never Stalled — across a controller kill -9 and restart, and
 * `orchctl thaw` lets it go on and finish its work, nothing lost; both are recorded as Events.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../controller/api/types.js';
import { ROOT } from '../support/cli.js';
import { git, makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** The run's pane process (tmux's pane_pid, its process group) by the run's @orchctl-key. */
async function panePid(key: string): Promise<number | undefined> {
  const r = await execa('tmux', ['-L', h.socket, 'list-panes', '-a', '-F', `${TAGS_FORMAT}\t#{pane_pid}`], {
    reject: false,
  });
  const line = String(r.stdout)
    .split('\n')
    .find((l) => parseTags(l.split('\t')[0]).key === key);
  return line ? Number(line.split('\t')[1]) : undefined;
}

/**
 * The state letter of every live process of process group `pgid` but its leader (from /proc): the
 * launch wrapper, which only waits for the agent, is left running (tmux would continue it).
 */
function groupStates(pgid: number): string[] {
  const out: string[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid && Number(p) !== pgid) out.push(f[0]);
    } catch {
      /* gone */
    }
  }
  return out;
}

const capture = async (name: string) =>
  String((await execa('tmux', ['-L', h.socket, 'capture-pane', '-p', '-t', `=${name}:`])).stdout);

describe('orchctl freeze / thaw', () => {
  it('a frozen agent makes no progress, stays frozen across a controller kill -9, finishes after thaw', async () => {
    await h.apply([
      { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'web' }, spec: { path: h.repo } },
      {
        apiVersion: API_VERSION,
        kind: 'Agent',
        metadata: { name: 'sim' },
        spec: {
          command: [process.execPath, SIM_AGENT],
          promptDelivery: 'argument',
          env: [{ name: 'SIM_AGENT_STEP_MS', value: '400' }],
        },
      },
      {
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name: 'web-1' },
        spec: { agentRef: 'sim', projectRef: 'web', prompt: 'Add the login form. [commits:2]' },
      },
    ]);
    h.start();
    const running = await h.waitFor('web-1 running', async () => {
      const s = await h.session('web-1');
      return phaseOf(s) === 'Running' && s?.status?.tmuxSession ? s : undefined;
    });
    const tmuxSession = running.status!.tmuxSession!;
    const pid = await h.waitFor('its pane', () => panePid('default/web-1#1'));

    // Bad input: nothing selected, or a project that does not exist — an error, nothing marked.
    const none = await h.orchctl(['freeze']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain('give what to freeze: orchctl freeze PROJECT…, -l SELECTOR or --all');
    const missing = await h.orchctl(['freeze', 'nosuch']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('projects.orchctl.io "nosuch" not found');
    expect((await h.session('web-1'))?.metadata.annotations?.['orchctl.io/frozen']).toBeUndefined();

    const frozen = await h.orchctl(['freeze', 'web', '-m', 'incident 42']);
    expect(frozen.exitCode).toBe(0);
    expect(frozen.stdout).toContain('project.orchctl.io/web frozen');
    expect(frozen.stdout).toContain('agentsession.orchctl.io/web-1 frozen');
    const held = await h.waitFor('web-1 held', async () => {
      const s = await h.session('web-1');
      return s?.status?.frozen?.stopped && s;
    });
    expect(held.status?.frozen).toMatchObject({ run: 1, stopped: true });
    expect(held.status?.frozen?.message).toContain('incident 42');
    await h.waitFor('every process of the run stopped', async () => {
      const states = groupStates(pid);
      return states.length > 0 && states.every((x) => x === 'T');
    });
    const table = await h.orchctl(['get', 'sessions']);
    expect(table.stdout).toMatch(/\nweb-1\s+Running\s+sim\s+web\s+1\s+0\s+frozen\s/);

    // The controller dies and comes back: the run is still stopped, its screen unchanged.
    const before = await capture(tmuxSession);
    await h.stopController('SIGKILL');
    h.start();
    // After the restart: a new session of the frozen project does not start; one elsewhere does
    // (which also shows the new controller is reconciling).
    // `other` gets a repository of its own: two agents committing in one work tree race for git's
    // index.lock, and the loser crashes (exit 2), which is not what this test is about.
    const otherRepo = path.join(h.dir, 'other-repo');
    fs.mkdirSync(otherRepo);
    await git(otherRepo, ['init', '-q', '-b', 'main']);
    await git(otherRepo, ['commit', '-q', '--allow-empty', '-m', 'initial']);
    await h.apply([
      { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'other' }, spec: { path: otherRepo } },
      {
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name: 'web-2' },
        spec: { agentRef: 'sim', projectRef: 'web', prompt: 'Add the signup form.' },
      },
      {
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name: 'other-1' },
        spec: { agentRef: 'sim', projectRef: 'other', prompt: 'Fix the footer.' },
      },
    ]);
    await h.waitFor('other-1 started by the new controller', async () => (await h.session('other-1'))?.status?.run);
    const pending = await h.waitFor('web-2 held before it started', async () => {
      const s = await h.session('web-2');
      return s?.status?.frozen && s;
    });
    expect(pending.status?.frozen).toMatchObject({ run: 0, stopped: false });
    expect(pending.status?.run ?? 0).toBe(0);
    const again = await h.waitFor('still held after the restart', async () => {
      const s = await h.session('web-1');
      const states = groupStates(pid);
      return s?.status?.frozen && states.length > 0 && states.every((x) => x === 'T') && s;
    });
    expect(phaseOf(again)).toBe('Running');
    expect(await capture(tmuxSession)).toBe(before);
    expect((again.status?.conditions ?? []).find((c) => c.type === 'Stalled')?.status).not.toBe('True');

    const thawed = await h.orchctl(['thaw', 'web']);
    expect(thawed.exitCode).toBe(0);
    expect(thawed.stdout).toContain('agentsession.orchctl.io/web-1 thawed');
    const done = await h.waitFor(
      'web-1 finished after the thaw',
      async () => {
        const s = await h.session('web-1');
        return phaseOf(s) === 'Succeeded' && s;
      },
      60_000,
    );
    expect(done.status?.run).toBe(1); // the same run went on: nothing restarted
    expect(done.status?.frozen).toBeUndefined();
    const log = await execa('git', ['-C', h.repo, 'log', '--oneline']);
    expect(String(log.stdout).split('\n').length).toBeGreaterThanOrEqual(3); // initial + its 2 commits

    const events = await h.events('web-1');
    expect(events.filter((e) => e.reason === 'Frozen')).toHaveLength(1);
    expect(events.filter((e) => e.reason === 'Thawed')).toHaveLength(1);
    const projectEvents = await h.events('web');
    expect(projectEvents.map((e) => e.reason)).toEqual(expect.arrayContaining(['Frozen', 'Thawed']));
  }, 120_000);
});
