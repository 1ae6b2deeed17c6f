/**
 * Crash-only behaviour: the controller is kill -9'd while 20 sessions run and started again —
 * every session is adopted (no duplicate tmux session, none lost, status still right). And the
 * tmux server itself is killed — every session reaches a terminal phase and restarts per policy.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { condition, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const N = 20;
const names = Array.from({ length: N }, (_, i) => `worker-${String(i).padStart(2, '0')}`);

async function allSessions() {
  return Promise.all(names.map((n) => h.session(n)));
}

it('kill -9 of the controller while 20 sessions run: a new controller adopts every one, no duplicates', async () => {
  await h.apply(
    names.map((n) => shellSession(n, 'echo "$ORCHCTL_SESSION up"; sleep 300', h.repo, { restartPolicy: 'OnFailure' })),
  );
  h.start(['--workers', '4']);
  const before = await h.waitFor(
    '20 Running',
    async () => {
      const all = await allSessions();
      return all.every((s) => phaseOf(s) === 'Running') && all;
    },
    60_000,
  );
  const tmuxBefore = await h.tmuxSessions();
  expect(tmuxBefore).toHaveLength(N);
  await h.stopController('SIGKILL');

  h.start(['--workers', '4']);
  // The new controller must take the lease of the dead one at once and settle.
  await h.waitFor(
    'new controller leading',
    async () => h.controllerLog.some((l) => l.includes('acquired the lease')),
    15_000,
  );
  await new Promise((r) => setTimeout(r, 3000)); // several observe/resync rounds
  const after = await allSessions();
  const tmuxAfter = await h.tmuxSessions();
  expect(tmuxAfter).toHaveLength(N);
  expect(new Set(tmuxAfter.map((t) => t.uid)).size).toBe(N);
  expect(tmuxAfter.every((t) => !t.dead)).toBe(true);
  for (let i = 0; i < N; i++) {
    const b = before[i]!;
    const a = after[i]!;
    expect(phaseOf(a), a.metadata.name).toBe('Running');
    expect(a.status!.run, a.metadata.name).toBe(b.status!.run);
    expect(a.status!.restarts).toBe(0);
    expect(a.status!.tmuxSession).toBe(b.status!.tmuxSession);
    expect(a.status!.startTime).toBe(b.status!.startTime);
    expect(condition(a, 'Ready')?.status).toBe('True');
  }
  expect(tmuxAfter.map((t) => t.name).sort()).toEqual(tmuxBefore.map((t) => t.name).sort());
  // Room for every step's own wait (60 + 15 + 3 s), as below.
}, 100_000);

it('a session launched by a controller killed before it recorded the launch is adopted, not duplicated', async () => {
  // Simulate the crash window: a tmux session tagged for run 1 exists while status still says Pending.
  await h.apply([shellSession('orphaned-launch', 'sleep 300', h.repo)]);
  const s = (await h.session('orphaned-launch'))!;
  const { Tmux } = await import('../../controller/observers/tmux.js');
  const tmux = new Tmux(h.socket);
  await tmux.launch({
    session: `default_orphaned-launch_${s.metadata.uid!.slice(0, 8)}`,
    cwd: h.repo,
    argv: ['sh', '-c', 'sleep 300'],
    env: {},
    tags: { uid: s.metadata.uid!, key: 'default/orphaned-launch#1' },
  });
  h.start();
  const adopted = await h.waitFor('Running', async () => {
    const x = await h.session('orphaned-launch');
    return phaseOf(x) === 'Running' && x;
  });
  expect(adopted.status!.run).toBe(1);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await h.tmuxSessions()).toHaveLength(1);
});

it('tmux server killed: each session ends (Killed, TmuxSessionLost), processes die; restart per policy', async () => {
  // Each agent records its pid so the test can check nothing outlives its tmux session.
  const agent = 'echo $$ > "$ORCHCTL_WORKSPACE/agent.pid"; exec sleep 300';
  await h.apply(
    names.map((n, i) =>
      shellSession(
        n,
        agent,
        h.repo,
        i % 2 === 0
          ? { restartPolicy: 'OnFailure', restartBackoff: { initialDelay: '500ms' } }
          : { restartPolicy: 'Never' },
      ),
    ),
  );
  h.start(['--workers', '4']);
  const running = await h.waitFor(
    '20 Running with pids',
    async () => {
      const all = await allSessions();
      return (
        all.every((s) => phaseOf(s) === 'Running' && fs.existsSync(path.join(s!.status!.workspace!, 'agent.pid'))) &&
        all
      );
    },
    60_000,
  );
  const pids = running.map((s) => Number(fs.readFileSync(path.join(s!.status!.workspace!, 'agent.pid'), 'utf8')));
  const { execa } = await import('execa');
  await execa('tmux', ['-L', h.socket, 'kill-server']);
  await h.waitFor(
    'every agent process gone with its tmux session',
    async () => pids.every((pid) => !alive(pid)),
    10_000,
  );
  // Every first run ended: Never sessions stay Killed, OnFailure ones may already be on run 2.
  const ended = await h.waitFor(
    'every first run ended',
    async () => {
      const all = await allSessions();
      return all.every((s) => phaseOf(s) === 'Killed' || (s?.status?.run ?? 0) >= 2) && all;
    },
    20_000,
  );
  for (const [i, s] of ended.entries()) {
    if (i % 2 === 1) {
      expect(phaseOf(s), s!.metadata.name).toBe('Killed');
      expect(s!.status!.reason).toBe('TmuxSessionLost');
    }
  }
  // OnFailure sessions come back as run 2; Never sessions stay Killed.
  await h.waitFor(
    'restartable sessions Running again',
    async () => {
      const all = await allSessions();
      return all.every((s, i) =>
        i % 2 === 0
          ? phaseOf(s) === 'Running' && s!.status!.run === 2 && s!.status!.restarts === 1
          : phaseOf(s) === 'Killed',
      );
    },
    30_000,
  );
  expect(await h.tmuxSessions()).toHaveLength(N / 2);
  const lost = (await h.events(names[1])).find((e) => e.reason === 'TmuxSessionLost');
  expect(lost?.type).toBe('Warning');
  // Room for every step's own wait (60 + 10 + 20 + 30 s): on a loaded box a slow step fails by its name
  // and with the controller's log, not as a bare test timeout part-way through another step's wait.
}, 150_000);

it('kill -9 just after a list of launches went to tmux: all Running once, no duplicate, all accounted', async () => {
  await h.apply(
    names.map((n) =>
      shellSession(n, 'exec sleep 300', h.repo, {
        restartPolicy: 'OnFailure',
        restartBackoff: { initialDelay: '500ms' },
      }),
    ),
  );
  // The controller kills itself as the first tmux client holding launches is started (failpoints.ts).
  h.env.ORCHCTL_FAILPOINTS = 'tmux-launch-list-sent';
  const killed = await h.start();
  expect(killed.signal).toBe('SIGKILL');
  delete h.env.ORCHCTL_FAILPOINTS;
  h.start();
  // Sessions of the list sent are adopted; runs recorded but never sent end after the launch grace
  // (30 s) and start again under their restart policy.
  const all = await h.waitFor(
    '20 Running',
    async () => {
      const xs = await allSessions();
      return xs.every((s) => phaseOf(s) === 'Running') && xs;
    },
    90_000,
  );
  const { execa } = await import('execa');
  const { TAGS_FORMAT, parseTags } = await import('../../controller/observers/tmux.js');
  const listed = await execa('tmux', ['-L', h.socket, 'list-sessions', '-F', TAGS_FORMAT]);
  const tagged = String(listed.stdout)
    .split('\n')
    .filter(Boolean)
    .map((l) => `${parseTags(l).uid} ${parseTags(l).key}`);
  // Exactly one tmux session per object, each tagged with its object's uid and current run.
  expect(tagged.sort()).toEqual(
    all.map((s) => `${s!.metadata.uid} default/${s!.metadata.name}#${s!.status!.run}`).sort(),
  );
  expect((await h.tmuxSessions()).every((t) => !t.dead)).toBe(true);
}, 150_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
