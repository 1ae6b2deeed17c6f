/**
 * Pipelines and messages across hosts (issues 15 and 16), on one machine: one SQLite store, a
 * control plane with no node of its own (`orchctl controller --no-node`, its own ORCHCTL_HOME) and
 * two node agents (`orchctl node`, each its own ORCHCTL_HOME and tmux socket), all the built
 * bin/orchctl. Nothing the control plane runs can read a node's files or panes, so:
 *  - a phase run on node b hands its handoff.md to the next phase on node a (status.handoff);
 *  - a phase blocked on node b is resumed with `orchctl pipeline resume --message`, which arrives in
 *    its pane (typed by node b: the orchctl.io/message annotation, status.messageDelivery);
 *  - `orchctl send` from node a's socket reaches an agent on node b, verified;
 *  - a message to a run paused for a rate limit waits for the pause to end, then arrives after the
 *    continue message.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AgentSpec } from '../../controller/api/kinds.js';
import type { Pipeline } from '../../controller/api/pipeline.js';
import type { AgentSession } from '../../controller/api/session.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { BIN, ROOT } from '../support/cli.js';
import { git } from '../support/controller-harness.js';
import { simAgent } from '../support/pipeline.js';

const LIMIT_AGENT = path.resolve(import.meta.dirname, '../support/limit-agent.mjs');

let dir: string;
let repo: string;
let store: SqliteStore;
let base: NodeJS.ProcessEnv;
const homes: Record<string, string> = {};
const procs: { name: string; p: ResultPromise; log: string[] }[] = [];
const sockets = {
  cp: `orchctl-mm-${process.pid}-cp`,
  a: `orchctl-mm-${process.pid}-a`,
  b: `orchctl-mm-${process.pid}-b`,
};

function proc(name: string, args: string[], env: NodeJS.ProcessEnv): void {
  const p = execa(BIN, [...args, '--log-format', 'json'], { cwd: ROOT, env, extendEnv: false, reject: false });
  const x = { name, p, log: [] as string[] };
  p.stderr?.on('data', (d: Buffer) => x.log.push(...d.toString().split('\n').filter(Boolean)));
  procs.push(x);
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 40_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) {
      const tails = procs.map((x) => `--- ${x.name}\n${x.log.slice(-12).join('\n')}`);
      throw new Error(`timed out after ${ms} ms waiting for ${what}\n${tails.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const session = async (name: string) =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name })) as AgentSession | undefined;
const pipeline = async (name: string) =>
  (await store.get({ kind: 'Pipeline', namespace: 'default', name })) as Pipeline | undefined;
const workspace = (node: 'a' | 'b', name: string, run = 1) =>
  path.join(homes[node], 'sessions', 'default', name, String(run));
const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/** orchctl as a person on a host runs it: that host's home and tmux socket. */
function orchctl(args: string[], host: 'cp' | 'a' = 'cp', input?: string) {
  return execa(BIN, args, {
    cwd: ROOT,
    env: { ...base, ORCHCTL_HOME: homes[host], ORCHCTL_TMUX_SOCKET: sockets[host] },
    extendEnv: false,
    reject: false,
    ...(input ? { input } : {}),
  });
}

async function apply(docs: object[]): Promise<void> {
  const r = await orchctl(['apply', '-f', '-'], 'cp', docs.map((d) => YAML.stringify(d)).join('---\n'));
  expect(r.exitCode, r.stderr).toBe(0);
}

/** A pipeline of sim-agent phases, each pinned to a zone. */
const zoned = (name: string, phases: [string, string, 'a' | 'b'][]) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Pipeline',
  metadata: { name },
  spec: {
    phases: phases.map(([phase, prompt, zone]) => ({
      name: phase,
      template: { agentRef: 'sim', workdir: repo, prompt, nodeSelector: { zone } },
    })),
  },
});

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-multinode-msg-'));
  repo = path.join(dir, 'repo');
  fs.mkdirSync(repo);
  await git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README.md'), '# multinode messages\n');
  await git(repo, ['add', '.']);
  await git(repo, ['commit', '-qm', 'initial']);
  const db = path.join(dir, 'state.db');
  base = { ...process.env, ORCHCTL_STORE: `sqlite:${db}`, ORCHCTL_METRICS_ADDR: '0', NO_COLOR: '1' };
  delete base.ORCHCTL_NAMESPACE;
  for (const h of ['cp', 'a', 'b'] as const) {
    homes[h] = path.join(dir, h);
    fs.mkdirSync(homes[h]);
  }
  proc('control plane', ['controller', '--no-node'], {
    ...base,
    ORCHCTL_HOME: homes.cp,
    ORCHCTL_TMUX_SOCKET: sockets.cp,
  });
  for (const n of ['a', 'b'] as const)
    proc(`node ${n}`, ['node', '--name', n, '--label', `zone=${n}`, '--observe-interval', '1s', '--resync', '3s'], {
      ...base,
      ORCHCTL_HOME: homes[n],
      ORCHCTL_TMUX_SOCKET: sockets[n],
    });
  store = new SqliteStore(db, { pollIntervalMs: 20 });
  await apply([simAgent]);
}, 60_000);

afterAll(async () => {
  for (const x of procs) {
    x.p.kill('SIGKILL');
    await x.p;
  }
  for (const s of Object.values(sockets)) await execa('tmux', ['-L', s, 'kill-server'], { reject: false });
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('a phase on node b hands its handoff.md to the next phase on node a; the control plane reads no file', async () => {
  await apply([
    zoned('xh', [
      ['design', 'Task: design the greeter [report]', 'b'],
      ['build', 'Task: build the greeter [report]', 'a'],
    ]),
  ]);
  const done = await waitFor('pipeline xh Succeeded', async () => {
    const p = await pipeline('xh');
    return p?.status?.phase === 'Succeeded' && p;
  });
  expect(done.status?.phases?.map((x) => [x.name, x.state])).toEqual([
    ['design', 'Succeeded'],
    ['build', 'Succeeded'],
  ]);
  expect((await session('xh-design'))?.status?.binding?.nodeName).toBe('b');
  expect((await session('xh-build'))?.status?.binding?.nodeName).toBe('a');
  // Written on b, mirrored into status by b, read from there by the control plane, given to a's run.
  const handoff = read(path.join(workspace('b', 'xh-design'), 'handoff.md')).trim();
  expect(handoff).toMatch(/^# Handoff: design the greeter/);
  expect((await session('xh-design'))?.status?.handoff).toMatchObject({ run: 1, text: `${handoff}\n` });
  const prompt = read(path.join(workspace('a', 'xh-build'), 'prompt.md'));
  expect(prompt).toContain(`Task: build the greeter [report]\n\n## Handoff from phase design\n\n${handoff}`);
  expect(prompt).toMatch(/Notes from its progress report: design the greeter — \d commit/);
  expect(fs.existsSync(path.join(homes.cp, 'sessions'))).toBe(false); // nothing of it ran on the control plane
}, 90_000);

it('a phase blocked on node b is resumed: the message is typed there by its node, once', async () => {
  await apply([
    zoned('blk', [
      ['stage', 'Task: deploy to staging [block:Need the staging credentials]', 'b'],
      ['prod', 'Task: deploy to production [report]', 'a'],
    ]),
  ]);
  await waitFor('pipeline blk Blocked', async () => (await pipeline('blk'))?.status?.phase === 'Blocked');
  const msg = 'The credentials are in vault at ops/staging';
  const r = await orchctl(['pipeline', 'resume', 'blk', '--message', msg, '--wait']);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^pipeline\.orchctl\.io\/blk resume requested\nDelivered: stage: Confirmed: /);
  const stage = await session('blk-stage');
  expect(stage?.status?.messageDelivery).toMatchObject({
    id: expect.stringMatching(/^pipeline-resume\//),
    from: 'pipeline/blk',
    state: 'Delivered',
    delivered: true,
    reason: 'Confirmed',
  });
  await waitFor('pipeline blk Succeeded', async () => (await pipeline('blk'))?.status?.phase === 'Succeeded');
  const output = read(path.join(workspace('b', 'blk-stage'), 'output.log'));
  expect(output.split(`Message received: ${msg}`)).toHaveLength(2); // once
  expect(read(path.join(workspace('a', 'blk-prod'), 'prompt.md'))).toContain(`resumed after: ${msg}`);
  const { items } = await store.list('Event');
  const sent = items.filter((e) => (e as { reason?: string }).reason === 'MessageSent');
  expect(sent.filter((e) => JSON.stringify(e).includes('"blk-stage"'))).toHaveLength(1);
}, 90_000);

it('orchctl send on host a reaches an agent on node b; a message to a paused run waits for its end', async () => {
  const claude = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8')) as {
    spec: AgentSpec;
  };
  // Claude Code's delivery and screen detection, on a stand-in that hits a limit resetting in 10 s.
  const { hooks: _, args: __, pricing: ___, ...spec } = claude.spec;
  // It works on its task until the gate file appears, then shows the limit (limit-agent.mjs).
  const gate = path.join(dir, 'limit-gate');
  const env = [
    { name: 'LIMIT_RESET_S', value: '10' },
    { name: 'LIMIT_GATE', value: gate },
  ];
  const limited = { ...spec, command: [process.execPath, LIMIT_AGENT], env };
  const on = (name: string, agent: object, prompt: string) => ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name },
    spec: { agent, workdir: repo, prompt, nodeSelector: { zone: 'b' } },
  });
  await apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'default' },
      spec: { selector: {}, rateLimit: { jitter: '2s', continueMessage: 'Go on from where you stopped.' } },
    },
    on('chat', simAgent.spec, 'Task: say hello [idle]'),
    on('limited', limited, 'Fix the flaky test'),
  ]);

  // An idle agent on b, from a's socket: not here, so through the store, verified by b.
  await waitFor('chat idle', async () => read(path.join(workspace('b', 'chat'), 'output.log')).includes('idle —'));
  const sent = await orchctl(['send', 'chat', 'hello from host a'], 'a');
  expect(sent.exitCode, sent.stderr).toBe(0);
  expect(sent.stdout).toMatch(/^delivered: submitted and confirmed: .* \(by node b\)$/);
  expect(read(path.join(workspace('b', 'chat'), 'output.log'))).toContain('Message received: hello from host a');
  expect((await session('chat'))?.status?.messageDelivery).toMatchObject({ from: 'orchctl-cli', state: 'Delivered' });
  const keys = await orchctl(['send', 'chat', '--keys', 'Enter'], 'a');
  expect(keys.exitCode).not.toBe(0);
  expect(keys.stderr).toMatch(/runs on node b, not on this host's tmux socket/);

  // Paused for the rate limit: the message waits (Waiting, Paused) and goes in after the continue message.
  // It is sent while the agent works, so it is held before the limit comes: a 10 s pause races neither
  // this test's polling nor a CLI starting on a loaded machine.
  await waitFor('limited working', async () => (await session('limited'))?.status?.agent?.state === 'busy');
  const waiting = orchctl(['send', 'limited', 'after the pause', '--timeout', '90s'], 'a');
  await waitFor('the message held while the agent works', async () => {
    const d = (await session('limited'))?.status?.messageDelivery;
    return d?.state === 'Waiting' && d.from === 'orchctl-cli';
  });
  fs.writeFileSync(gate, '');
  const paused = await waitFor('limited paused', async () => {
    const s = await session('limited');
    return s?.status?.pause?.reason === 'RateLimited' && s;
  });
  const until = Date.parse(paused.status!.pause!.until!);
  const r = await waiting;
  expect(r.exitCode, r.stderr).toBe(0);
  expect(Date.now()).toBeGreaterThanOrEqual(until);
  // Held for the pause, as its Event says (the live state has moved on by the time a loaded test looks).
  const events = (await store.list('Event')).items as { reason?: string; message?: string }[];
  const held = events.filter((e) => e.reason === 'MessageWaiting').map((e) => e.message);
  expect(held.join('\n')).toMatch(/from orchctl-cli: the run is paused \(RateLimited until .*\); sent when it resumes/);
  const received = read(path.join(workspace('b', 'limited'), 'received.txt'))
    .trim()
    .split('\n');
  expect(received).toEqual(['Fix the flaky test', 'Go on from where you stopped.', 'after the pause']);
  const s = await session('limited');
  expect(s?.status?.pause).toBeUndefined();
  expect(s?.status?.messageDelivery).toMatchObject({ state: 'Delivered', delivered: true });
}, 120_000);
