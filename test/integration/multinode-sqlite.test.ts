/**
 * Two roles on one machine (issue 16 items 3, 5): one SQLite store shared by a control plane
 * (`orchctl controller --no-node`) and two node agents (`orchctl node`), each with its own
 * ORCHCTL_HOME and tmux socket, all the built bin/orchctl. Sessions are bound by selector and
 * name and run on their node's socket; a node agent killed with -9 leaves its runs alive and its
 * restart adopts them (same pane, same run) and its watchdog replaces the old one (one per node);
 * a node agent stopped past its lease loses its runs to its watchdog, they start again on the
 * other node after the grace (with the note), and when it continues it kills its stale runs before
 * anything else and gets its pinned session back with a new run. Both sockets are sampled all
 * along: no session ever has two live runs.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AgentSession } from '../../controller/api/session.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { BIN, ROOT } from '../support/cli.js';
import { git, shellSession } from '../support/controller-harness.js';
import { stopOutsideWriteLock } from '../support/sqlite-stop.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

const GRACE = '25s'; // the shortest grace node lifecycle allows (above the fuse's 20 s)

interface Proc {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  p?: ResultPromise;
  log: string[];
}

let dir: string;
let repo: string;
let store: SqliteStore;
let base: NodeJS.ProcessEnv;
const procs: Record<string, Proc> = {};
const sockets = { a: `orchctl-mn-${process.pid}-a`, b: `orchctl-mn-${process.pid}-b` };
/** Every sample of both sockets: uid → live panes seen at once. */
const doubles: string[] = [];
let sampling = true;
let sampler: Promise<void> | undefined;

function start(x: Proc): void {
  x.p = execa(BIN, x.args, { cwd: ROOT, env: x.env, extendEnv: false, reject: false, stdin: 'ignore' });
  x.p.stderr?.on('data', (d: Buffer) => x.log.push(...d.toString().split('\n').filter(Boolean)));
}

function proc(name: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const x: Proc = { name, args: [...args, '--log-format', 'json'], env, log: [] };
  procs[name] = x;
  start(x);
  return x;
}

async function livePanes(socket: string): Promise<{ uid: string; pid: number; key: string; epoch: string }[]> {
  const r = await execa('tmux', ['-L', socket, 'list-panes', '-a', '-F', `${TAGS_FORMAT}\t#{pane_dead}\t#{pane_pid}`], {
    reject: false,
  });
  if (r.exitCode !== 0) return [];
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))
    .map(([tags, dead, pid]) => ({ ...parseTags(tags), dead, pid: Number(pid) }))
    .filter((p) => p.uid && p.dead === '0')
    .map(({ uid, pid, key, epoch }) => ({ uid, pid, key, epoch }));
}

/** The pids of the watchdogs guarding node `n` (argv names its heartbeat file). */
function watchdogs(n: 'a' | 'b'): number[] {
  const heartbeat = path.join(dir, n, 'heartbeat');
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        return argv.includes('orchctl-watchdog') && argv.includes(heartbeat);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

async function sample(): Promise<void> {
  while (sampling) {
    const [a, b] = await Promise.all([livePanes(sockets.a), livePanes(sockets.b)]);
    const count = new Map<string, number>();
    for (const x of [...a, ...b]) count.set(x.uid, (count.get(x.uid) ?? 0) + 1);
    for (const [uid, n] of count) if (n > 1) doubles.push(`${new Date().toISOString()} ${uid}: ${n} live runs`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const get = async (name: string) =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name })) as AgentSession | undefined;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) {
      const tails = Object.values(procs).map((x) => `--- ${x.name}\n${x.log.slice(-12).join('\n')}`);
      throw new Error(`timed out after ${ms} ms waiting for ${what}\n${tails.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-multinode-'));
  repo = path.join(dir, 'repo');
  fs.mkdirSync(repo);
  await git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README.md'), '# multinode\n');
  await git(repo, ['add', '.']);
  await git(repo, ['commit', '-qm', 'initial']);
  const db = path.join(dir, 'state.db');
  base = { ...process.env, ORCHCTL_STORE: `sqlite:${db}`, ORCHCTL_METRICS_ADDR: '0', NO_COLOR: '1' };
  delete base.ORCHCTL_NAMESPACE;
  const home = (n: string) => {
    const h = path.join(dir, n);
    fs.mkdirSync(h);
    return h;
  };
  const fast = ['--observe-interval', '1s', '--resync', '3s'];
  proc('control plane', ['controller', '--no-node', '--node-lost-grace', GRACE], {
    ...base,
    ORCHCTL_HOME: home('cp'),
    ORCHCTL_TMUX_SOCKET: `orchctl-mn-${process.pid}-cp`,
  });
  for (const n of ['a', 'b'] as const)
    proc(`node ${n}`, ['node', '--name', n, '--label', `zone=${n}`, '--label', 'pool=any', ...fast], {
      ...base,
      ORCHCTL_HOME: home(n),
      ORCHCTL_TMUX_SOCKET: sockets[n],
    });
  store = new SqliteStore(db, { pollIntervalMs: 20 });
  sampler = sample();
}, 60_000);

afterAll(async () => {
  sampling = false;
  await sampler;
  for (const x of Object.values(procs)) {
    if (!x.p) continue;
    x.p.kill('SIGCONT');
    x.p.kill('SIGKILL');
    await x.p;
  }
  for (const s of [...Object.values(sockets), `orchctl-mn-${process.pid}-cp`])
    await execa('tmux', ['-L', s, 'kill-server'], { reject: false });
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const long = (name: string, spec: Record<string, unknown>) =>
  shellSession(name, 'echo started; exec sleep 600', repo, {
    restartPolicy: 'OnFailure',
    prompt: 'keep going',
    ...spec,
  });

async function apply(docs: object[]): Promise<void> {
  const text = docs.map((d) => YAML.stringify(d)).join('---\n');
  const r = await execa(BIN, ['apply', '-f', '-'], {
    cwd: ROOT,
    env: { ...base, ORCHCTL_HOME: path.join(dir, 'cp') },
    input: text,
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
}

const running = (s: AgentSession | undefined) => s?.status?.phase === 'Running' && s;

it('binds by selector and name, each on its node; kill -9 of a node keeps its runs, adopted on restart', async () => {
  const runningOn = async (name: string, node: 'a' | 'b') => {
    const s = await waitFor(`${name} Running`, async () => running(await get(name)), 40_000);
    expect(s.status?.binding).toMatchObject({ nodeName: node, epoch: 1 });
    expect(s.status?.lifecycle?.epoch).toBe(1);
    const panes = await livePanes(sockets[node]);
    expect(panes.find((p) => p.uid === s.metadata.uid)).toMatchObject({ key: `default/${name}#1`, epoch: '1' });
  };
  await apply([long('sel-a', { nodeSelector: { zone: 'a' } })]);
  await runningOn('sel-a', 'a');
  // Either node fits; spreading puts it on b, which has none yet.
  await apply([long('mover', { nodeSelector: { pool: 'any' } })]);
  await runningOn('mover', 'b');
  await apply([long('sel-b', { nodeSelector: { zone: 'b' } }), long('pinned-b', { nodeName: 'b' })]);
  await runningOn('sel-b', 'b');
  await runningOn('pinned-b', 'b');

  // kill -9 of node a: its tmux server and run live on; a restart adopts the same run.
  const uid = (await get('sel-a'))!.metadata.uid;
  const before = (await livePanes(sockets.a)).find((p) => p.uid === uid)!;
  const a = procs['node a'];
  const watchdog = watchdogs('a');
  expect(watchdog).toHaveLength(1); // one per node, not one per run
  a.p!.kill('SIGKILL');
  await a.p;
  expect((await livePanes(sockets.a)).map((p) => p.pid)).toContain(before.pid);
  expect(watchdogs('a')).toEqual(watchdog); // it outlives the agent and guards on
  a.log.length = 0;
  start(a);
  await waitFor('node a leads again', async () => a.log.some((l) => l.includes('acquired the lease')));
  await new Promise((r) => setTimeout(r, 3000)); // several observe ticks of the new agent
  const after = await get('sel-a');
  expect(after?.status).toMatchObject({ phase: 'Running', run: 1 });
  expect((await livePanes(sockets.a)).find((p) => p.uid === uid)?.pid).toBe(before.pid);
  expect(a.log.some((l) => l.includes('killing stale run'))).toBe(false);
  const { items } = await store.list('Event');
  const started = items.filter((e) => (e as { reason?: string }).reason === 'Started');
  expect(started.filter((e) => JSON.stringify(e).includes('"sel-a"'))).toHaveLength(1);
  // The restarted agent's watchdog replaced the old one.
  await waitFor(
    'one watchdog on node a',
    async () => watchdogs('a').length === 1 && !watchdogs('a').includes(watchdog[0]),
  );
}, 120_000);

it('SIGSTOP past the lease: fused, runs move after the grace; on SIGCONT stale runs die first', async () => {
  const b = procs['node b'];
  const mover = (await get('mover'))!;
  await stopOutsideWriteLock((s) => b.p!.kill(s), path.join(dir, 'state.db'));
  const stoppedAt = Date.now();
  // The node's lease runs out (15 s): NodeLost on its sessions.
  const lost = (c: { type: string; status: string }) => c.type === 'NodeLost' && c.status === 'True';
  await waitFor('NodeLost', async () => (await get('mover'))?.status?.conditions?.some(lost), 30_000);
  // Its watchdog hangs up its agents (heartbeat older than 20 s) while the agent itself is stopped.
  await waitFor('the fuse on node b', async () => !(await livePanes(sockets.b)).length, 30_000);
  expect(fs.readFileSync(path.join(dir, 'b', 'fused'), 'utf8')).toMatch(/heartbeat older than 20 s/);
  // After the grace the session that may go elsewhere runs on a, as run 2 under epoch 2, told why.
  const onA = await waitFor(
    'mover Running on a',
    async () => {
      const s = await get('mover');
      // Running as bound there: the run's epoch is the binding's (before a takes over, the old run's status shows).
      return s?.status?.binding?.nodeName === 'a' && s.status.lifecycle?.epoch === s.status.binding.epoch && running(s);
    },
    40_000,
  );
  // The grace counts from the last renewal seen, at most one renewal period (5 s) before the stop.
  expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(20_000);
  expect(onA.status).toMatchObject({ run: 2, lifecycle: { epoch: 2 }, binding: { epoch: 2 } });
  expect(fs.readFileSync(path.join(onA.status!.workspace!, 'prompt.md'), 'utf8')).toContain('was on node b');
  // The ones that can only run on b wait for it, unbound.
  const pinned = await waitFor('pinned-b unbound', async () => {
    const s = await get('pinned-b');
    return !s?.status?.binding && s;
  });
  expect(pinned.status?.conditions?.find((c) => c.type === 'Scheduled')?.status).toBe('False');

  // b continues: it takes its lease back and kills its stale runs before it reconciles anything.
  b.log.length = 0;
  b.p!.kill('SIGCONT');
  for (const name of ['pinned-b', 'sel-b']) {
    const back = await waitFor(
      `${name} running again on b`,
      async () => {
        const s = await get(name);
        return s?.status?.binding?.nodeName === 'b' && (s.status.run ?? 0) >= 2 && running(s);
      },
      40_000,
    );
    expect(back.status?.lifecycle?.epoch).toBe(back.status?.binding?.epoch);
    expect(back.status?.binding?.epoch).toBeGreaterThanOrEqual(2);
  }
  const tookBack = b.log.findIndex((l) => l.includes('taking it back'));
  const killed = b.log.findIndex((l) => l.includes('killing stale run default/mover#1 '));
  const firstReconcile = b.log.findIndex((l) => l.includes('agentsession default/'));
  expect(tookBack).toBeGreaterThanOrEqual(0);
  expect(killed).toBeGreaterThan(tookBack);
  expect(firstReconcile).toBeGreaterThan(killed);
  expect((await livePanes(sockets.b)).some((p) => p.uid === mover.metadata.uid)).toBe(false);
  expect(doubles).toEqual([]);
}, 180_000);
