/**
 * The session controller as a separate, real process against real tmux and the real database:
 *  - apply → Running: a write of a new AgentSession (from this process, as `orchctl apply`
 *    commits it) until the controller's status says Running (goal median ≤ 0.3 s, p99 ≤ 1 s);
 *  - agent exit → terminal phase: the agent stamps the time it exits, until status is terminal
 *    (goal p99 ≤ 1 s);
 *  - 100 sessions applied at once → all Running (goal ≤ 10 s);
 *  - tmux and git processes spawned per resync with 1, 10 and 100 idle sessions (goal: constant),
 *    counted through wrappers on PATH;
 *  - controller CPU while idle with 100 running sessions (goal ≤ 3 % of one core).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Resource } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { cpuSeconds, ORCHCTL, stats, tempDir, gitRepoWithOneCommit } from '../lib.js';
import type { Bench } from '../types.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Env {
  dir: string;
  home: string;
  socket: string;
  store: SqliteStore;
  controller?: ChildProcess;
  env: NodeJS.ProcessEnv;
}

function makeEnv(name: string, extraPath?: string): Env {
  const dir = tempDir(`ctl-${name}`);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const socket = `orchctl-bench-${name}-${process.pid}`;
  // No metrics server: benchmark controllers run one after another and must not clash on its port.
  const env = {
    ...process.env,
    ORCHCTL_HOME: home,
    ORCHCTL_TMUX_SOCKET: socket,
    ORCHCTL_METRICS_ADDR: '0',
    ...(extraPath ? { PATH: `${extraPath}:${process.env.PATH}` } : {}),
  };
  return { dir, home, socket, env, store: new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 5 }) };
}

function startController(e: Env, args: string[] = []): void {
  e.controller = spawn(ORCHCTL, ['controller', '--log-format', 'json', ...args], {
    env: e.env,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
}

async function teardown(e: Env): Promise<void> {
  e.controller?.kill('SIGKILL');
  spawnSync('tmux', ['-L', e.socket, 'kill-server']);
  await e.store.close();
  fs.rmSync(e.dir, { recursive: true, force: true });
}

function session(name: string, script: string, workdir: string): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { agent: { command: ['sh', '-c', script], promptDelivery: 'none' }, workdir, desiredState: 'Running' },
  };
}

/** Resolves with the time (ms, Date.now) when `pred` first holds for the object named `name`. */
function whenStatus(
  store: SqliteStore,
  names: Set<string>,
  pred: (o: Resource) => boolean,
): { done: Promise<Map<string, number>>; close(): void } {
  const seen = new Map<string, number>();
  let resolve!: (m: Map<string, number>) => void;
  const done = new Promise<Map<string, number>>((r) => (resolve = r));
  const h = store.watch({ kind: 'AgentSession', fromRevision: 0 }, (ev) => {
    const n = ev.object.metadata.name;
    if (names.has(n) && !seen.has(n) && ev.type !== 'DELETED' && pred(ev.object)) {
      seen.set(n, Date.now());
      if (seen.size === names.size) resolve(seen);
    }
  });
  return { done, close: () => h.close() };
}

const phase = (o: Resource) => (o.status as { phase?: string } | undefined)?.phase;
const TERMINAL = new Set(['Succeeded', 'Failed', 'Killed', 'TimedOut']);

async function waitLease(e: Env): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await e.store.getLease('orchctl-controller')) return;
    await sleep(50);
  }
  throw new Error('controller did not start');
}

async function applyToRunning(): Promise<Record<string, unknown>> {
  const e = makeEnv('latency');
  try {
    startController(e);
    await waitLease(e);
    const apply: number[] = [];
    const exit: number[] = [];
    for (let i = 0; i < 30; i++) {
      const name = `lat-${i}`;
      // The agent records when it exits; the watch records when status turns terminal.
      const stamp = path.join(e.dir, `${name}.exited`);
      const w = whenStatus(e.store, new Set([name]), (o) => phase(o) === 'Running');
      const t = whenStatus(e.store, new Set([name]), (o) => TERMINAL.has(phase(o) ?? ''));
      const t0 = Date.now();
      await e.store.create(
        session(
          name,
          `sleep 0.3; node -e 'require("fs").writeFileSync(process.argv[1], String(Date.now()))' ${stamp}; exit 0`,
          e.dir,
        ),
      );
      const running = (await w.done).get(name)!;
      apply.push(running - t0);
      const ended = (await t.done).get(name)!;
      exit.push(ended - Number(fs.readFileSync(stamp, 'utf8')));
      w.close();
      t.close();
    }
    return { applyToRunningMs: stats(apply), exitToTerminalMs: stats(exit) };
  } finally {
    await teardown(e);
  }
}

async function hundredAtOnce(): Promise<Record<string, unknown>> {
  const e = makeEnv('hundred');
  try {
    startController(e);
    await waitLease(e);
    const names = Array.from({ length: 100 }, (_, i) => `many-${String(i).padStart(3, '0')}`);
    const w = whenStatus(e.store, new Set(names), (o) => phase(o) === 'Running');
    const file = path.join(e.dir, 'hundred.yaml');
    fs.writeFileSync(file, names.map((n) => JSON.stringify(session(n, 'sleep 3600', e.dir))).join('\n---\n'));
    const t0 = Date.now();
    const r = spawnSync(ORCHCTL, ['apply', '-f', file], { env: e.env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const seen = await Promise.race([w.done, sleep(120_000).then(() => undefined)]);
    if (!seen) throw new Error('not all 100 sessions reached Running within 120 s');
    w.close();
    return { hundredToRunningMs: Math.max(...seen.values()) - t0, firstRunningMs: Math.min(...seen.values()) - t0 };
  } finally {
    await teardown(e);
  }
}

/**
 * Crash recovery with 20 running sessions: kill -9 the controller and start a new one (time
 * until it holds the lease and has looked at every session — it writes a Node heartbeat after
 * its first pass); then kill the tmux server (time until every session's status is terminal).
 */
async function crashRecovery(): Promise<Record<string, unknown>> {
  const e = makeEnv('crash');
  try {
    startController(e);
    await waitLease(e);
    const names = Array.from({ length: 20 }, (_, i) => `crash-${String(i).padStart(2, '0')}`);
    const w = whenStatus(e.store, new Set(names), (o) => phase(o) === 'Running');
    await e.store.txn(names.map((name) => ({ op: 'create' as const, object: session(name, 'sleep 3600', e.dir) })));
    await w.done;
    w.close();
    e.controller!.kill('SIGKILL');
    await sleep(200);
    const t0 = Date.now();
    startController(e);
    let leaseMs = -1;
    for (;;) {
      const l = await e.store.getLease('orchctl-controller');
      if (l?.holderIdentity.includes(`_${e.controller!.pid}_`)) {
        leaseMs = Date.now() - t0;
        break;
      }
      if (Date.now() - t0 > 30_000) throw new Error('the new controller did not take the lease');
      await sleep(10);
    }
    const tmuxCount = spawnSync('tmux', ['-L', e.socket, 'list-sessions'], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n').length;
    const ended = whenStatus(e.store, new Set(names), (o) => TERMINAL.has(phase(o) ?? ''));
    const k0 = Date.now();
    spawnSync('tmux', ['-L', e.socket, 'kill-server']);
    const seen = await Promise.race([ended.done, sleep(30_000).then(() => undefined)]);
    ended.close();
    if (!seen) throw new Error('sessions did not reach a terminal phase after the tmux server was killed');
    return {
      restartToLeaseMs: leaseMs,
      tmuxSessionsAfterRestart: tmuxCount,
      tmuxKillToAllTerminalMs: Math.max(...seen.values()) - k0,
    };
  } finally {
    await teardown(e);
  }
}

/** Wrappers that count invocations of tmux and git, then run the real binaries. */
function countingWrappers(dir: string): { binDir: string; count(): { tmux: number; git: number } } {
  const binDir = path.join(dir, 'bin');
  fs.mkdirSync(binDir);
  const log = path.join(dir, 'calls.log');
  for (const tool of ['tmux', 'git']) {
    const real = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    // Long-lived `tmux wait-for` is one process for the controller's life, not per resync.
    fs.writeFileSync(
      path.join(binDir, tool),
      `#!/bin/sh\ncase "$*" in *wait-for*) ;; *) echo ${tool} >> '${log}' ;; esac\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
  }
  return {
    binDir,
    count() {
      const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [];
      return { tmux: lines.filter((l) => l === 'tmux').length, git: lines.filter((l) => l === 'git').length };
    },
  };
}

async function idleCost(n: number, windowMs: number, measureCpu: boolean): Promise<Record<string, number>> {
  const e0 = tempDir(`count-${n}`);
  const wrappers = countingWrappers(e0);
  const e = makeEnv(`idle-${n}`, wrappers.binDir);
  try {
    // A real git repository, so git observation has something to look at.
    gitRepoWithOneCommit(e.dir);
    // One loop = the observe tick (every live session is looked at, sharing one tmux snapshot);
    // the full resync keeps its default (30 s) so the CPU figure is the default configuration's.
    const resyncMs = 5000;
    startController(e, ['--observe-interval', `${resyncMs}ms`]);
    await waitLease(e);
    const names = Array.from({ length: n }, (_, i) => `idle-${String(i).padStart(3, '0')}`);
    const w = whenStatus(e.store, new Set(names), (o) => phase(o) === 'Running');
    await e.store.txn(names.map((name) => ({ op: 'create' as const, object: session(name, 'sleep 3600', e.dir) })));
    await w.done;
    w.close();
    await sleep(3000); // let start-up work (prompt delivery, first observations) settle
    const c0 = wrappers.count();
    const cpu0 = measureCpu ? cpuSeconds(e.controller!.pid!) : 0;
    await sleep(windowMs);
    const c1 = wrappers.count();
    const cpu1 = measureCpu ? cpuSeconds(e.controller!.pid!) : 0;
    const resyncs = windowMs / resyncMs; // observe ticks in the window
    return {
      sessions: n,
      windowSeconds: windowMs / 1000,
      tmuxPerResync: Math.round(((c1.tmux - c0.tmux) / resyncs) * 10) / 10,
      gitPerResync: Math.round(((c1.git - c0.git) / resyncs) * 10) / 10,
      ...(measureCpu ? { cpuPercentOfOneCore: Math.round(((cpu1 - cpu0) / (windowMs / 1000)) * 1000) / 10 } : {}),
    };
  } finally {
    await teardown(e);
    fs.rmSync(e0, { recursive: true, force: true });
  }
}

export const controllerBench: Bench = {
  name: 'controller',
  description: 'session controller: apply→Running, exit→terminal, 100 at once, processes per resync, idle CPU',
  async run() {
    const latency = await applyToRunning();
    const hundred = await hundredAtOnce();
    const crash = await crashRecovery();
    const perResync = [
      await idleCost(1, 20_000, false),
      await idleCost(10, 20_000, false),
      await idleCost(100, 30_000, true),
    ];
    const idle = perResync[2];
    const a = latency.applyToRunningMs as { median: number; p99: number };
    const x = latency.exitToTerminalMs as { p99: number };
    return {
      ...latency,
      ...hundred,
      crashRecovery: crash,
      processesPerResync: perResync.map(({ cpuPercentOfOneCore: _c, ...r }) => r),
      idleCpuPercentOfOneCore100Sessions: idle.cpuPercentOfOneCore,
      machine: { cpus: os.cpus().length, load1: os.loadavg()[0] },
      goals: {
        applyToRunning: `median ${a.median} ms (goal ≤ 300), p99 ${a.p99} ms (goal ≤ 1000)`,
        exitToTerminal: `p99 ${x.p99} ms (goal ≤ 1000)`,
        hundredToRunning: `${hundred.hundredToRunningMs} ms (goal ≤ 10000)`,
        crash:
          `kill -9 → new controller leading in ${crash.restartToLeaseMs} ms ` +
          `with ${crash.tmuxSessionsAfterRestart} tmux sessions (20 expected); ` +
          `tmux server killed → all 20 terminal in ${crash.tmuxKillToAllTerminalMs} ms (goal ≤ 2000)`,
        idleCpu: `${idle.cpuPercentOfOneCore} % of one core (goal ≤ 3 %)`,
        processesPerResync:
          perResync.map((r) => `${r.sessions}: tmux ${r.tmuxPerResync}, git ${r.gitPerResync}`).join('; ') +
          ' (goal: constant)',
      },
      summary:
        `apply→Running median ${a.median} ms p99 ${a.p99}; exit→terminal p99 ${x.p99}; ` +
        `100→Running ${hundred.hundredToRunningMs} ms; idle CPU ${idle.cpuPercentOfOneCore}%`,
    };
  },
};
