/**
 * A run that orchctl kills has its end recorded at once, never a Running phase without a pane
 * (issue 23 item 3): a control plane (`orchctl controller --no-node`) and one node agent on one
 * SQLite file, the built bin/orchctl, real tmux. The node is stopped (SIGSTOP) past its lease: its
 * watchdog hangs up the run, and after the grace node lifecycle unbinds the session — there is no
 * other node to take it — and ends the run in that same write (Pending, reason NodeLost, its
 * completion time), rather than leaving it Running while it waits. When the node continues it
 * kills the stale run first, the session is bound to it again and gets run 2, told why, with no
 * restart counted. The store is sampled all along: never Running while unbound.
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
import { pollFor } from '../support/until.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

const GRACE = '25s'; // the shortest grace node lifecycle allows (above the fuse's 20 s)

let dir: string;
let store: SqliteStore;
let base: NodeJS.ProcessEnv;
const socket = `orchctl-lost-${process.pid}-a`;
const procs: { name: string; p: ResultPromise; log: string[] }[] = [];
let node: (typeof procs)[number];
/** Every sample in which the session was Running with no binding (a run nobody owns any more). */
const runningUnbound: string[] = [];
let samples = 0;
let sampling = true;
let sampler: Promise<void> | undefined;

function proc(name: string, args: string[], env: NodeJS.ProcessEnv) {
  const p = execa(BIN, [...args, '--log-format', 'json'], { cwd: ROOT, env, extendEnv: false, reject: false });
  const x = { name, p, log: [] as string[] };
  p.stderr?.on('data', (d: Buffer) => x.log.push(...d.toString().split('\n').filter(Boolean)));
  procs.push(x);
  return x;
}

const get = async () =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name: 'mover' })) as AgentSession | undefined;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, ms = 40_000): Promise<T> =>
  pollFor(what, fn, ms, {
    everyMs: 200,
    context: async () => procs.map((x) => `--- ${x.name}\n${x.log.slice(-12).join('\n')}`).join('\n'),
  }) as Promise<T>;

async function livePanes(): Promise<{ uid: string; pid: number }[]> {
  const r = await execa('tmux', ['-L', socket, 'list-panes', '-a', '-F', `${TAGS_FORMAT}\t#{pane_dead}\t#{pane_pid}`], {
    reject: false,
  });
  if (r.exitCode !== 0) return [];
  return String(r.stdout)
    .split('\n')
    .map((l) => l.split('\t'))
    .map(([tags, dead, pid]) => ({ uid: parseTags(tags).uid, dead, pid }))
    .filter(({ uid, dead }) => uid && dead === '0')
    .map(({ uid, pid }) => ({ uid, pid: Number(pid) }));
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-lost-run-'));
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(repo);
  await git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README.md'), '# lost run\n');
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
  proc('control plane', ['controller', '--no-node', '--node-lost-grace', GRACE], {
    ...base,
    ORCHCTL_HOME: home('cp'),
    ORCHCTL_TMUX_SOCKET: `orchctl-lost-${process.pid}-cp`,
  });
  node = proc('node a', ['node', '--name', 'a', '--observe-interval', '1s', '--resync', '3s'], {
    ...base,
    ORCHCTL_HOME: home('a'),
    ORCHCTL_TMUX_SOCKET: socket,
  });
  store = new SqliteStore(db, { pollIntervalMs: 20 });
  const session = shellSession('mover', 'echo started; exec sleep 600', repo, {
    restartPolicy: 'OnFailure',
    prompt: 'keep going',
  });
  const r = await execa(BIN, ['apply', '-f', '-'], {
    cwd: ROOT,
    env: { ...base, ORCHCTL_HOME: path.join(dir, 'cp') },
    input: YAML.stringify(session),
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  sampler = (async () => {
    while (sampling) {
      const s = await get().catch(() => undefined);
      if (s?.status?.phase === 'Running' && !s.status.binding)
        runningUnbound.push(`${new Date().toISOString()} run ${s.status.run}: Running, unbound`);
      samples++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
}, 60_000);

afterAll(async () => {
  sampling = false;
  await sampler;
  for (const x of procs) {
    x.p.kill('SIGCONT');
    x.p.kill('SIGKILL');
    await x.p;
  }
  for (const s of [socket, `orchctl-lost-${process.pid}-cp`])
    await execa('tmux', ['-L', s, 'kill-server'], { reject: false });
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

it('a run that ends with its lost node is recorded ended when unbound, before its stale pane is killed', async () => {
  const first = await waitFor('mover Running on a', async () => {
    const s = await get();
    return s?.status?.phase === 'Running' && s.status.binding?.nodeName === 'a' && s;
  });
  expect((await livePanes()).map((p) => p.uid)).toContain(first.metadata.uid);
  const restarts = first.status?.restarts ?? 0;

  await stopOutsideWriteLock((s) => node.p.kill(s), path.join(dir, 'state.db'));
  // The watchdog hangs the run up (heartbeat older than 20 s); after the grace the session is unbound.
  const unbound = await waitFor('mover unbound', async () => {
    const s = await get();
    return !s?.status?.binding && s?.status?.conditions?.some((c) => c.type === 'Scheduled') && s;
  });
  expect(await livePanes()).toEqual([]);
  expect(unbound.status).toMatchObject({ phase: 'Pending', reason: 'NodeLost', run: 1, lifecycle: { epoch: 1 } });
  expect(unbound.status?.message).toContain('run 1 ended with its node');
  expect(unbound.status?.completionTime).toBeDefined();
  expect(unbound.status?.tmuxSession).toBeUndefined();

  // The node continues: it kills its stale run (already recorded ended), is bound the session again
  // under epoch 2 and starts run 2 at once, told why, no restart counted.
  node.p.kill('SIGCONT');
  await waitFor('the stale run killed', async () => node.log.some((l) => l.includes('killing stale run')));
  const back = await waitFor('mover Running on a again', async () => {
    const s = await get();
    return s?.status?.phase === 'Running' && s.status.lifecycle?.epoch === 2 && s;
  });
  expect(back.status).toMatchObject({ run: 2, binding: { nodeName: 'a', epoch: 2 } });
  expect(back.status?.restarts ?? 0).toBe(restarts);
  expect(fs.readFileSync(path.join(back.status!.workspace!, 'prompt.md'), 'utf8')).toContain('was on node a');
  const { items } = await store.list('Event');
  expect(items.some((e) => (e as { reason?: string }).reason === 'RunMoved')).toBe(true);

  expect(samples).toBeGreaterThan(100);
  expect(runningUnbound).toEqual([]);
}, 120_000);
