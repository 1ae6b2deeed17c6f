/**
 * Agents get only the environment they are given (issue 23), with a real controller and real
 * tmux: a controller started with a secret in its own environment (for its judge or planner)
 * launches agents whose environment — read from /proc/PID/environ — and the tmux server's global
 * environment hold no such variable; an Agent's or a SessionPolicy's `inheritEnv` passes exactly
 * what it names. A tmux server that already ran with the controller's environment (an older
 * orchctl, or started by hand) is cut back before the first launch.
 */
import fs from 'node:fs';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE_ENV, envNameMatches } from '../../controller/api/environment.js';
import type { AgentSession } from '../../controller/api/kinds.js';
import { makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const SECRET = `secret-for-controller-${process.pid}-9f8e7d6c5b`;

/** What tmux and the shell add to every pane's environment (not the controller's to give). */
const TMUX_OR_SHELL = /^(TMUX|TMUX_PANE|TERM|TERM_PROGRAM|TERM_PROGRAM_VERSION|COLORTERM|PWD|OLDPWD|SHLVL|_)$/;

function environOf(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** The agent's process: the launch wrapper (the pane's process) waits for it as its child. */
function childOf(ppid: number): number | undefined {
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) return Number(p);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

async function panePid(s: AgentSession): Promise<number> {
  const r = await execa('tmux', [
    '-L',
    h.socket,
    'display-message',
    '-p',
    '-t',
    `=${s.status!.tmuxSession}:`,
    '#{pane_pid}',
  ]);
  return Number(String(r.stdout).trim());
}

async function running(name: string): Promise<AgentSession> {
  return h.waitFor(`${name} Running`, async () => {
    const s = await h.session(name);
    return phaseOf(s) === 'Running' && s;
  });
}

/** The running agent's environment, once its process is there. */
async function agentEnviron(name: string): Promise<{ agent: Record<string, string>; wrapper: Record<string, string> }> {
  const pane = await panePid(await running(name));
  const agent = await h.waitFor(`${name}'s agent process`, async () => childOf(pane));
  return { agent: environOf(agent), wrapper: environOf(pane) };
}

/** Names beyond the base, orchctl's own variables and what tmux and the shell add. */
const extraNames = (env: Record<string, string>) =>
  Object.keys(env)
    .filter((n) => !envNameMatches(n, BASE_ENV) && !n.startsWith('ORCHCTL_') && !TMUX_OR_SHELL.test(n))
    .sort();

async function globalEnvironment(): Promise<string> {
  return String((await execa('tmux', ['-L', h.socket, 'show-environment', '-g'])).stdout);
}

const agent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Agent',
  metadata: { name },
  spec: { command: ['sh', '-c', 'exec sleep 600'], promptDelivery: 'none', ...extra },
});
const session = (name: string, agentRef: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name, labels },
  spec: { agentRef, workdir: h.repo },
});

describe("an agent's environment", () => {
  it("holds none of the controller's variables; inheritEnv passes exactly what it names", async () => {
    Object.assign(h.env, {
      SECRET_FOR_CONTROLLER: SECRET,
      PASSED_BY_NAME: 'named-value',
      POLICY_ONE: 'one',
      POLICY_TWO: 'two',
      NOT_NAMED: 'not-named',
    });
    await h.apply([
      agent('plain'),
      agent('named', { inheritEnv: ['PASSED_BY_NAME'] }),
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'inherit' },
        spec: { selector: { matchLabels: { env: 'policy' } }, inheritEnv: ['POLICY_*'] },
      },
      session('plain', 'plain'),
      session('named', 'named'),
      session('by-policy', 'plain', { env: 'policy' }),
    ]);
    h.start();

    const plain = await agentEnviron('plain');
    for (const env of [plain.agent, plain.wrapper]) {
      expect(env.SECRET_FOR_CONTROLLER).toBeUndefined();
      expect(Object.values(env)).not.toContain(SECRET);
    }
    expect(extraNames(plain.agent)).toEqual([]);
    // The base comes from the controller's environment, as it is there.
    for (const name of ['PATH', 'HOME']) expect(plain.agent[name]).toBe(h.env[name]);
    // orchctl's own variables reach the agent (its hooks need them).
    expect(plain.agent.ORCHCTL_WORKSPACE).toBe((await h.session('plain'))!.status!.workspace);

    const named = await agentEnviron('named');
    expect(extraNames(named.agent)).toEqual(['PASSED_BY_NAME']);
    expect(named.agent.PASSED_BY_NAME).toBe('named-value');

    const byPolicy = await agentEnviron('by-policy');
    expect(extraNames(byPolicy.agent)).toEqual(['POLICY_ONE', 'POLICY_TWO']);
    expect([byPolicy.agent.POLICY_ONE, byPolicy.agent.POLICY_TWO]).toEqual(['one', 'two']);

    // Nor does tmux hold them: its global environment is what every pane starts from.
    const global = await globalEnvironment();
    expect(global).not.toContain('SECRET_FOR_CONTROLLER');
    expect(global).not.toContain(SECRET);
    expect(global).not.toContain('NOT_NAMED');
    const server = Number(String((await execa('tmux', ['-L', h.socket, 'display-message', '-p', '#{pid}'])).stdout));
    expect(Object.values(environOf(server))).not.toContain(SECRET);
  }, 90_000);

  it('a tmux server already running with the controller environment has it cut back before a launch', async () => {
    // As an older orchctl left it: the server started by a client holding the secret.
    await execa('tmux', ['-L', h.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'earlier', 'sleep 600'], {
      env: { ...process.env, SECRET_FOR_CONTROLLER: SECRET },
      extendEnv: false,
    });
    expect(await globalEnvironment()).toContain('SECRET_FOR_CONTROLLER');
    h.env.SECRET_FOR_CONTROLLER = SECRET;
    await h.apply([agent('plain'), session('plain', 'plain')]);
    h.start();
    const plain = await agentEnviron('plain');
    expect(Object.values(plain.agent)).not.toContain(SECRET);
    expect(extraNames(plain.agent)).toEqual([]);
    expect(await globalEnvironment()).not.toContain('SECRET_FOR_CONTROLLER');
  }, 60_000);

  it('describe shows inheritEnv; apply refuses a name that is not a variable name, naming the field', async () => {
    await h.apply([
      agent('named', { inheritEnv: ['ANTHROPIC_*', 'GITHUB_TOKEN'] }),
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'inherit' },
        spec: { inheritEnv: ['AWS_*'] },
      },
    ]);
    const a = await h.orchctl(['describe', 'agent', 'named']);
    expect(a.stdout).toMatch(/Inherit Env:\n\s+ANTHROPIC_\*\n\s+GITHUB_TOKEN\n/);
    const p = await h.orchctl(['describe', 'sessionpolicy', 'inherit']);
    expect(p.stdout).toMatch(/Inherit Env:\n\s+AWS_\*\n/);

    for (const bad of ['NOT-A-NAME', '*', 'A*B']) {
      const r = await h.orchctl(['apply', '-f', '-'], JSON.stringify(agent('bad', { inheritEnv: ['OK', bad] })));
      expect(r.exitCode, bad).toBe(1);
      expect(r.stderr, bad).toContain('spec.inheritEnv[1]');
    }
    const many = Array.from({ length: 65 }, (_, i) => `V${i}`);
    const r = await h.orchctl(['apply', '-f', '-'], JSON.stringify(agent('bad', { inheritEnv: many })));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('spec.inheritEnv');
    expect(await h.store.get({ kind: 'Agent', namespace: 'default', name: 'bad' })).toBeUndefined();
  }, 60_000);
});
