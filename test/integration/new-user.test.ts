/**
 * What a new user meets, with the real controller, tmux and bin/orchctl: the canonical example
 * runs on a fresh clone; a Project whose path is missing and an agent CLI that is not installed
 * say so and wait instead of restarting in a loop; a new session reads Pending; delete says when
 * a finalizer still holds the object; long Event messages do not widen every table row; the
 * quickstart's log is readable when piped, and a second `npm start` says how to run it again.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Resource } from '../../controller/api/types.js';
import { ROOT } from '../support/cli.js';
import { ScriptedServer } from '../support/fake-judge-server.js';
import { condition, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const project = async (name: string) => h.store.get({ kind: 'Project', namespace: 'default', name });
const projectReady = async (name: string) =>
  (
    (await project(name))?.status as { conditions?: { type: string; status: string; reason: string }[] } | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

/** A stand-in `claude` on PATH: shows an input prompt, takes one line, keeps running. */
function fakeClaude(): string {
  const bin = path.join(h.dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'claude'),
    '#!/bin/sh\nprintf "> "\nIFS= read -r line\nprintf "%s" "$line" > "$ORCHCTL_WORKSPACE/task"\nexec sleep 600\n',
    { mode: 0o755 },
  );
  return bin;
}

describe('the canonical example', () => {
  it('examples/basic applies and runs on a fresh clone (with its agent CLI installed)', async () => {
    h.env.PATH = `${fakeClaude()}:${h.env.PATH}`;
    const r = await h.orchctl(['apply', '-f', path.join(ROOT, 'examples/basic')]);
    expect(r.exitCode, r.stderr).toBe(0);
    h.start();
    const s = await h.waitFor(
      'fix-login got its task',
      async () => {
        const x = await h.session('fix-login');
        const ws = x?.status?.workspace;
        return phaseOf(x) === 'Running' && !!ws && fs.existsSync(path.join(ws, 'task')) && x;
      },
      60_000,
    );
    expect(fs.readFileSync(path.join(s.status!.workspace!, 'task'), 'utf8')).toBe(
      'Fix the login bug in issues/42.md and add a test.',
    );
    await h.waitFor('Project Ready', async () => (await projectReady('webapp'))?.status === 'True');
  }, 90_000);
});

describe('what a session needs and does not have', () => {
  it('a Project whose path is missing: Ready=False on it; the session waits, then runs once it appears', async () => {
    const dir = path.join(h.dir, 'not-yet');
    await h.apply([
      { apiVersion: 'orchctl.io/v1alpha1', kind: 'Project', metadata: { name: 'later' }, spec: { path: dir } },
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name: 'w' },
        spec: { projectRef: 'later', agent: { command: ['sh', '-c', 'exec sleep 600'], promptDelivery: 'none' } },
      },
    ]);
    h.start();
    await h.waitFor('Project Ready=False', async () => {
      const c = await projectReady('later');
      return c?.status === 'False' && c.reason === 'PathNotFound';
    });
    const s = await h.waitFor('the session waits', async () => {
      const x = await h.session('w');
      return x?.status?.reason === 'ProjectPathNotFound' && x;
    });
    expect(phaseOf(s)).toBe('Pending');
    expect(condition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ProjectPathNotFound' });
    expect(s.status?.restarts ?? 0).toBe(0);
    expect(await h.tmuxSessions()).toEqual([]);
    fs.mkdirSync(dir);
    await h.waitFor('Running once the path exists', async () => phaseOf(await h.session('w')) === 'Running', 45_000);
  }, 90_000);

  it('an agent CLI that is not installed: CommandNotFound, nothing launched, no restart loop', async () => {
    await h.apply([
      shellSession('nocli', '', h.repo, { restartPolicy: 'Always' }, { command: ['orchctl-no-such-agent'] }),
    ]);
    h.start();
    const s = await h.waitFor('CommandNotFound', async () => {
      const x = await h.session('nocli');
      return x?.status?.reason === 'CommandNotFound' && x;
    });
    expect(s.status?.message).toBe('orchctl-no-such-agent: command not found — install it or run orchctl doctor');
    expect(phaseOf(s)).toBe('Pending');
    expect(await h.tmuxSessions()).toEqual([]);
    // Somebody is told (routed tier 2), once: the Event is written with the status that records it.
    const told = (await h.events('nocli')).filter((e) => e.reason === 'CommandNotFound');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ type: 'Warning', message: s.status?.message });
    expect(told[0].count ?? 1).toBe(1);
  }, 60_000);

  it('exit 127 (a command inside the agent not found) ends as CommandNotFound and is not restarted', async () => {
    await h.apply([
      shellSession('inner', 'exec orchctl-no-such-inner-tool', h.repo, { restartPolicy: 'OnFailure', maxRestarts: 5 }),
    ]);
    h.start();
    const s = await h.waitFor('Failed with CommandNotFound', async () => {
      const x = await h.session('inner');
      return phaseOf(x) === 'Failed' && x;
    });
    expect(s.status).toMatchObject({ reason: 'CommandNotFound', exitCode: 127, restarts: 0 });
    await new Promise((r) => setTimeout(r, 4000)); // a resync (3 s here) later: still not restarted
    const later = await h.session('inner');
    expect(phaseOf(later)).toBe('Failed');
    expect(later?.status?.restarts).toBe(0);
    expect(later?.status?.run).toBe(1);
  }, 60_000);
});

describe('the CLI for a new user', () => {
  it('a session no controller has seen yet shows Pending', async () => {
    await h.apply([shellSession('fresh', 'true', h.repo)]);
    const r = await h.orchctl(['get', 'agentsessions']);
    expect(r.stdout).toMatch(/^fresh\s+Pending\s/m);
  });

  it('delete of a session held by its finalizer with no controller running says so', async () => {
    await h.apply([shellSession('held', 'exec sleep 600', h.repo)]);
    h.start();
    await h.waitFor('Running', async () => phaseOf(await h.session('held')) === 'Running');
    await h.stopController();
    const r = await h.orchctl(['delete', 'agentsession', 'held']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(
      'agentsession.orchctl.io "held" marked for deletion from default namespace; ' +
        'the controller finishes it when one runs (none is running now)',
    );
    expect(r.stdout + r.stderr).not.toContain('undefined');
  }, 60_000);

  it('get events cuts long messages in the table and keeps them whole in -o wide', async () => {
    const long = `the agent printed a very long line: ${'x'.repeat(450)} END`;
    await h.apply([shellSession('chatty', 'true', h.repo)]);
    const s = (await h.session('chatty'))!;
    await h.store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Event',
      metadata: { name: 'chatty.1', namespace: 'default' },
      involvedObject: { kind: 'AgentSession', name: 'chatty', namespace: 'default', uid: s.metadata.uid },
      reason: 'Talked',
      message: long,
      type: 'Normal',
      count: 1,
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
    } as unknown as Resource);
    const table = await h.orchctl(['get', 'events']);
    const row = table.stdout.split('\n').find((l) => l.includes('Talked'))!;
    expect(row.length).toBeLessThan(200);
    expect(row).toContain('…');
    expect(row).not.toContain('END');
    const wide = await h.orchctl(['get', 'events', '-o', 'wide']);
    expect(wide.stdout).toContain(`${'x'.repeat(450)} END`);
  });
});

describe('the quickstart', () => {
  it('logs for people when piped, and a second start says how to run the demo again', async () => {
    const env = { ...h.env, ORCHCTL_HOME: path.join(h.dir, 'qs-home'), ORCHCTL_TMUX_SOCKET: `${h.socket}-qs` };
    const start = async () => {
      const p = execa(process.execPath, [path.join(ROOT, 'examples/quickstart/start.mjs')], {
        cwd: ROOT,
        env,
        extendEnv: false,
        reject: false,
        all: true,
      });
      let out = '';
      p.all!.on('data', (d: Buffer) => (out += d.toString()));
      await h.waitFor('the controller leading', async () => out.includes('acquired the lease'), 60_000);
      p.kill('SIGTERM');
      await p;
      return out;
    };
    try {
      const first = await start();
      expect(first).not.toMatch(/^\{"level"/m); // not JSON lines
      expect(first).toMatch(/INFO.*acquired the lease/);
      expect(first).not.toContain('This demo ran here before');
      const second = await start();
      expect(second).toContain('This demo ran here before');
      expect(second).toContain('npm run quickstart:reset && npm start');
    } finally {
      await execa('tmux', ['-L', `${h.socket}-qs`, 'kill-server'], { reject: false });
    }
  }, 120_000);

  it('with the shipped notification policy and a webhook channel, an escalation reaches the webhook', async () => {
    const rx = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
    const env = {
      ...h.env,
      ORCHCTL_HOME: path.join(h.dir, 'qs-notify'),
      ORCHCTL_TMUX_SOCKET: `${h.socket}-qn`,
      DEMO_WEBHOOK: `${rx.url}/hook`,
    };
    // The policy's channel is `default` (a desktop notify-send in manifests/notifications/): make it a webhook.
    const channel = [
      'apiVersion: orchctl.io/v1alpha1',
      'kind: NotificationChannel',
      'metadata: {name: default}',
      'spec: {type: webhook, urlFrom: {env: DEMO_WEBHOOK}}',
    ].join('\n');
    const apply = await execa(
      process.execPath,
      [
        path.join(ROOT, 'bin/orchctl'),
        'apply',
        '-f',
        path.join(ROOT, 'manifests/notifications/policy.yaml'),
        '-f',
        '-',
      ],
      { cwd: ROOT, env, extendEnv: false, reject: false, input: channel },
    );
    expect(apply.stderr).toBe('');
    const p = execa(process.execPath, [path.join(ROOT, 'examples/quickstart/start.mjs')], {
      cwd: ROOT,
      env,
      extendEnv: false,
      reject: false,
    });
    try {
      const escalation = await h.waitFor(
        'the escalation of migrate-storage at the webhook',
        async () =>
          rx.requests.find(
            (r) => (r.body as { title?: string }).title === 'Escalated: AgentSession default/migrate-storage',
          ),
        90_000,
      );
      const body = escalation.body as { tier: number; events: { lastTimestamp: string }[] };
      expect(body.tier).toBe(1);
      expect(String(escalation.headers['idempotency-key'])).toMatch(/^orchctl-[0-9a-f-]{36}$/);
      // Tier 3 (how runs ended) is batched for 4 hours, tier 4 never sent: only tier 1 arrives now.
      for (const r of rx.requests) expect((r.body as { tier: number }).tier).toBe(1);
    } finally {
      p.kill('SIGTERM');
      await p;
      await rx.close();
      await execa('tmux', ['-L', `${h.socket}-qn`, 'kill-server'], { reject: false });
    }
  }, 150_000);
});
