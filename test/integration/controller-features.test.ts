/**
 * Controller features around the lifecycle: --once, --manifests (GitOps-style re-apply),
 * per-session worktrees removed by the finalizer, the Node object, orphan tmux sessions,
 * and the lease that keeps a second controller on standby.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { git, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

it('--once runs one full pass and exits: the session is launched and recorded as Running', async () => {
  await h.apply([shellSession('one-pass', 'sleep 30', h.repo)]);
  const r = await h.start(['--once']);
  expect(r.exitCode).toBe(0);
  const s = (await h.session('one-pass'))!;
  expect(phaseOf(s)).toBe('Running');
  expect(await h.tmuxSessions()).toHaveLength(1);
  // The next controller adopts it rather than starting it again.
  const again = await h.start(['--once']);
  expect(again.exitCode).toBe(0);
  expect((await h.session('one-pass'))!.status!.run).toBe(1);
  expect(await h.tmuxSessions()).toHaveLength(1);
  // --once also needs the lease: it refuses while another controller holds it.
  const leader = h.start();
  await h.waitFor('the new controller holds the lease', async () =>
    (await h.store.getLease('orchctl-controller'))?.holderIdentity.includes(`_${leader.pid}_`),
  );
  const blocked = await execa('node', ['bin/orchctl', 'controller', '--once'], {
    env: h.env,
    reject: false,
    cwd: path.resolve(import.meta.dirname, '../..'),
  });
  expect(blocked.exitCode).toBe(1);
  expect(String(blocked.stderr)).toContain('another controller');
});

it('--manifests applies a directory and re-applies it when a file changes; a bad edit changes nothing', async () => {
  const dir = path.join(h.dir, 'manifests');
  fs.mkdirSync(dir);
  const file = path.join(dir, 'session.yaml');
  const write = (prompt: string) =>
    fs.writeFileSync(
      file,
      YAML.stringify(
        shellSession(
          'gitops',
          'printf "%s" "$1" > "$ORCHCTL_WORKSPACE/seen"',
          h.repo,
          { prompt },
          {
            promptDelivery: 'argument',
            command: ['sh', '-c', 'printf "%s" "$1" > "$ORCHCTL_WORKSPACE/seen"', 'agent'],
          },
        ),
      ),
    );
  write('first version');
  h.start(['--manifests', dir]);
  const s1 = await h.waitFor('run 1 Succeeded', async () => {
    const s = await h.session('gitops');
    return phaseOf(s) === 'Succeeded' && s;
  });
  expect(fs.readFileSync(path.join(s1.status!.workspace!, 'seen'), 'utf8')).toBe('first version\n');
  write('second version');
  const s2 = await h.waitFor('run 2 Succeeded with the new prompt', async () => {
    const s = await h.session('gitops');
    return phaseOf(s) === 'Succeeded' && s?.status?.run === 2 && s;
  });
  expect(fs.readFileSync(path.join(s2.status!.workspace!, 'seen'), 'utf8')).toBe('second version\n');
  // An invalid edit is reported and nothing changes.
  const generation = s2.metadata.generation;
  fs.writeFileSync(
    file,
    fs
      .readFileSync(file, 'utf8')
      .replace('restartPolicy', 'restartPolicyX')
      .replace(/workdir:/, 'workdir:') + 'bogus: [\n',
  );
  await h.waitFor('error logged', async () => h.controllerLog.some((l) => l.includes('manifests not applied')));
  expect((await h.session('gitops'))!.metadata.generation).toBe(generation);
});

it('a worktree session works on its own branch; deleting the session removes the worktree', async () => {
  await h.apply([
    { apiVersion: 'orchctl.io/v1alpha1', kind: 'Project', metadata: { name: 'repo' }, spec: { path: h.repo } },
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'isolated' },
      spec: {
        agent: {
          command: [
            'sh',
            '-c',
            'echo change > wt.txt && git add wt.txt && ' +
              'git -c user.email=a@b -c user.name=a commit -qm "in worktree" && sleep 30',
          ],
          promptDelivery: 'none',
        },
        projectRef: 'repo',
        worktree: { enabled: true },
      },
    },
  ]);
  h.start();
  const s = await h.waitFor('one commit on the worktree branch', async () => {
    const s = await h.session('isolated');
    return s?.status?.git?.commits === 1 && s;
  });
  const wt = s.status!.workdir!;
  expect(wt).toBe(path.join(h.home, 'worktrees', 'default', 'isolated'));
  expect(s.status!.git!.branch).toBe('orchctl/isolated');
  expect(fs.existsSync(path.join(h.repo, 'wt.txt'))).toBe(false); // the main checkout is untouched
  const r = await h.orchctl(['delete', 'session', 'isolated', '--wait', '--timeout', '30s']);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(fs.existsSync(wt)).toBe(false);
  const list = await git(h.repo, ['worktree', 'list']);
  expect(String(list.stdout)).not.toContain('isolated');
  // The branch and its commit stay: work is never thrown away.
  expect(String((await git(h.repo, ['log', '--oneline', 'orchctl/isolated'])).stdout)).toContain('in worktree');
});

it('the Node object describes the host, and untagged tmux sessions on the socket are reported as orphans', async () => {
  await execa('tmux', ['-L', h.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'somebody-elses', 'sleep 60']);
  h.start();
  const node = await h.waitFor('Node with the orphan', async () => {
    const { items } = await h.store.list('Node');
    const n = items[0];
    return (n?.status as { orphanSessions?: string[] } | undefined)?.orphanSessions?.includes('somebody-elses') && n;
  });
  const st = node.status as Record<string, any>;
  expect(st.capacity.cpu).toBeGreaterThan(0);
  expect(st.capacity.memoryBytes).toBeGreaterThan(st.free.memoryBytes);
  expect(st.free.diskBytes).toBeGreaterThan(0);
  expect(st.loadAverage).toHaveLength(3);
  expect(st.versions.tmux).toMatch(/^\d/);
  expect(st.versions.git).toMatch(/^\d/);
  expect(st.controller.pid).toBe(h.controller!.pid);
  expect(st.conditions.find((c: { type: string }) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  const { items: events } = await h.store.list('Event');
  expect(events.find((e) => e.reason === 'OrphanTmuxSession')?.message).toContain('somebody-elses');
  // Reported, never touched.
  expect((await h.tmuxSessions()).map((t) => t.name)).toContain('somebody-elses');
  const get = await h.orchctl(['get', 'nodes']);
  expect(get.stdout).toMatch(/^NAME\s+STATUS\s+SESSIONS\s+CPU\s+MEMORY\s+AGE\n\S+\s+Ready\s/);
});

it('the orphan warning names the tmux socket the session is on, and how to remove it there', async () => {
  await execa('tmux', ['-L', h.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'stray', 'sleep 60']);
  h.start();
  const event = await h.waitFor('OrphanTmuxSession', async () =>
    (await h.store.list('Event')).items.find((e) => e.reason === 'OrphanTmuxSession'),
  );
  expect(event.message).toContain(`orphan tmux session "stray" on tmux socket "${h.socket}"`);
  expect(event.message).toContain(`tmux -L ${h.socket} kill-session -t stray`);
  expect(event.message).not.toContain('orchctl socket');
  expect(h.controllerLog.some((l) => l.includes(`tmux -L ${h.socket} kill-session -t stray`))).toBe(true);
});

it('a second controller stands by while the first holds the lease, and takes over when it stops', async () => {
  h.start();
  await h.waitFor('first leads', async () => h.controllerLog.some((l) => l.includes('acquired the lease')));
  const second = execa('node', ['bin/orchctl', 'controller', '--log-format', 'json'], {
    env: h.env,
    reject: false,
    cwd: path.resolve(import.meta.dirname, '../..'),
  });
  let secondLog = '';
  second.stderr?.on('data', (d: Buffer) => (secondLog += d.toString()));
  try {
    await h.waitFor('second stands by', async () => secondLog.includes('standing by'));
    await h.stopController('SIGTERM'); // releases the lease
    await h.waitFor('second takes over', async () => secondLog.includes('acquired the lease'), 10_000);
    await h.apply([shellSession('after-handover', 'exit 0', h.repo)]);
    await h.waitFor('second reconciles', async () => phaseOf(await h.session('after-handover')) === 'Succeeded');
  } finally {
    second.kill('SIGKILL');
    await second;
  }
});

it('an idle running session is not rewritten on every look, even in a repository without commits', async () => {
  const empty = path.join(h.dir, 'empty-repo');
  fs.mkdirSync(empty);
  await git(empty, ['init', '-q']);
  await h.apply([shellSession('idle', 'echo started; sleep 60', empty)]);
  h.start();
  const s = await h.waitFor('Running with its output', async () => {
    const s = await h.session('idle');
    return phaseOf(s) === 'Running' && s?.status?.lastOutput === 'started' && s;
  });
  const rv = (await h.session('idle'))!.metadata.resourceVersion;
  await new Promise((r) => setTimeout(r, 2500)); // several observe ticks (--observe-interval 1s)
  const after = (await h.session('idle'))!;
  expect(after.metadata.resourceVersion).toBe(rv);
  expect(after.status!.git?.commits ?? 0).toBe(0); // an empty repository has nothing to report
  expect(s.status!.headBefore).toBeUndefined();
});
