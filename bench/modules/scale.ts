/**
 * Scale on one host (issue 29): N sessions (`sh -c 'exec sleep 3600'`) created in one store
 * transaction under a running `orchctl controller`, for N = 100 and 1000:
 *  - created → all Running, against three floors measured in the same run: the same N
 *    `tmux new-session -d` launched one client after another by this process on a fresh socket,
 *    in command lists of 10 as the controller's launch batcher sends them (what tmux itself needs),
 *    and the controller's own launch lists, wrapper and output pipe included, with no
 *    controller (what its launches cost tmux and the processes they start);
 *  - the controller's idle CPU after start-up settled, in % of one core, its children (tmux clients
 *    it started) included, beside the tmux server's own: the mean over 90 s at 1000 (30 s at 100)
 *    and each 30 s window's;
 *  - the controller's resident memory, beside a bare `node` process's.
 * And the node-agent mode (scale-node.ts): one `orchctl node` agent on etcd holding 333 sessions,
 * beside the single-host controller with the same 333 as its baseline, in the same run.
 * ORCHCTL_BENCH_SCALE_ONLY=100, 1000 or node runs only that part.
 * Run it on a quiet machine: other work on the two cores shows up in every figure.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { LAUNCH_SCRIPT } from '../../controller/agents/launch.js';
import { launchListArgs } from '../../controller/observers/tmux.js';
import { createWorkspace, logLine, runWorkspace, writeState } from '../../controller/observers/workspace.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { cpuSeconds, ORCHCTL, sleeperSession, tempDir } from '../lib.js';
import type { Bench } from '../types.js';
import { nodeAgentAtScale, rssMB, threadCpu, threadReport } from './scale-node.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How long ext4 without a journal (this machine's root file system) skips a deleted inode when it
 * allocates one: 60 s after the deletion (RECENTCY_MIN in fs/ext4/ialloc.c), 300 s while the inode
 * table block is still dirty, which the flusher writes back after vm.dirty_expire_centisecs (30 s
 * by default). Its allocator tests each such inode one by one, so a burst started right after the
 * last run's thousands of files were removed pays for that scan (a quarter of the controller's main
 * thread in a perf profile, 1.3–2.7 s for the files of 1000 launches instead of ~0.15 s). Each burst
 * here waits 60 s plus the write-back and a margin first, so that its figure is the code's, not the
 * last run's; fileSystemFloorMs says whether that was enough.
 */
function fileSystemSettleMs(): number {
  const centis = Number(fs.readFileSync('/proc/sys/vm/dirty_expire_centisecs', 'utf8').trim());
  const writeBackMs = Math.min(60_000, Number.isFinite(centis) ? centis * 10 : 30_000);
  return Math.max(60_000, writeBackMs) + 5_000;
}

/**
 * How many AgentSessions are Running, counted by SQLite in a read-only connection. The harness runs
 * on the two cores it measures: listing and parsing the 1000 objects every 250 ms took 0.76 CPU-s
 * of a 10 s burst (perf, 2026-11-27), a count in SQL ~1 ms a look.
 */
function runningCounter(db: Database.Database): { get(): number } {
  const q = db.prepare(
    "SELECT count(*) AS n FROM objects WHERE kind = 'AgentSession' " +
      "AND json_extract(data, '$.status.phase') = 'Running'",
  );
  return { get: () => (q.get() as { n: number }).n };
}

/**
 * The file-system floor: the directories and files N launches make, made by the controller's own
 * workspace functions (observers/workspace.ts: the session's and the run's directory, output.log,
 * then prompt.md, state.json and session.log as a launch writes them) under a sibling of the
 * controller's home right before the burst, in ms. ~130 ms for 1000 on a quiet ext4, but 1.3–2.7 s
 * on this machine's root file system (ext4 without a journal) when thousands of files were deleted
 * in the last minutes: its inode allocator then skips each recently deleted inode one by one (perf:
 * recently_deleted, find_get_block_common). The burst pays the same, so this floor tells a slow
 * file system from slow code. Left in place until the run's directory goes: removing it here would
 * be such a deletion.
 */
function fileSystemFloorMs(n: number, dir: string): number {
  const home = path.join(dir, 'fs-floor');
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const ws = runWorkspace(home, 'default', `s-${i}`, 1);
    createWorkspace(ws);
    fs.writeFileSync(ws.promptFile, '\n', { mode: 0o600 });
    writeState(ws, {});
    logLine(ws, 'INFO', 'launched');
  }
  return Math.round(performance.now() - t0);
}

/** Sessions one node agent holds in the node-agent mode (a third of 1000: one of three hosts). */
const NODE_SESSIONS = 333;

/** The serial floor: N detached tmux sessions started one client after another, in ms. */
function tmuxFloor(n: number): number {
  const socket = `orchctl-bench-floor-${process.pid}`;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) spawnSync('tmux', ['-L', socket, 'new-session', '-d', '-s', `f${i}`, 'sleep', '3600']);
  const ms = performance.now() - t0;
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  return Math.round(ms);
}

/**
 * The batched floor: the same N sessions in command lists of 10 (`new-session … ; new-session …`),
 * one client after another, as the launch batcher sends them (observers/launch-batch.ts), in ms, and
 * the tmux server's CPU for them in s. What tmux itself needs to create N sessions, without the
 * ~10 ms a client start costs (the serial floor is mostly clients).
 */
function tmuxBatchedFloor(n: number): { ms: number; serverCpuS: number } {
  const socket = `orchctl-bench-floor-batched-${process.pid}`;
  spawnSync('tmux', ['-L', socket, '-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'exit-empty', 'off']);
  const server = tmuxServerPid(socket);
  const c0 = server ? cpuSeconds(server, false) : 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i += 10) {
    const list = Array.from({ length: Math.min(10, n - i) }, (_, j) => [
      ...(j ? [';'] : []),
      ...['new-session', '-d', '-s', `f${i + j}`, 'sleep', '3600'],
    ]).flat();
    spawnSync('tmux', ['-L', socket, ...list]);
  }
  const ms = performance.now() - t0;
  const serverCpuS = server ? cpuSeconds(server, false) - c0 : 0;
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  return { ms: Math.round(ms), serverCpuS: Math.round(serverCpuS * 100) / 100 };
}

/**
 * The launch floor: the same N sessions launched as the controller launches them — its command lists
 * (server set-up, `new-session` through the launch wrapper, the output pipe, the window's name, the
 * tags), ten sessions a list, one client after another — with no controller: what the launches
 * cost tmux and the processes they start. In ms, and the tmux server's CPU in s.
 */
function launchFloor(n: number, dir: string): { ms: number; serverCpuS: number } {
  const socket = `orchctl-bench-floor-launch-${process.pid}`;
  const ws = path.join(dir, 'launch-floor');
  fs.mkdirSync(ws, { recursive: true });
  const launch = (i: number) => ({
    spec: {
      session: `default_f-${i}_00000000`,
      cwd: dir,
      argv: ['sh', '-c', LAUNCH_SCRIPT, 'sh', '-c', 'exec sleep 3600'],
      env: { ORCHCTL_WORKSPACE: path.join(ws, String(i)), ORCHCTL_RUN: '1' },
      tags: { uid: `uid-${i}`, key: `default/f-${i}#1`, store: 'bench', epoch: 1 },
      window: `default/f-${i}`,
    },
    outputLog: path.join(ws, `${i}.log`),
  });
  spawnSync('tmux', ['-L', socket, '-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'exit-empty', 'off']);
  const server = tmuxServerPid(socket);
  const c0 = server ? cpuSeconds(server, false) : 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i += 10) {
    const list = Array.from({ length: Math.min(10, n - i) }, (_, j) => launch(i + j));
    spawnSync('tmux', ['-L', socket, ...launchListArgs(list)]);
  }
  const ms = performance.now() - t0;
  const serverCpuS = server ? cpuSeconds(server, false) - c0 : 0;
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  return { ms: Math.round(ms), serverCpuS: Math.round(serverCpuS * 100) / 100 };
}

/** The tmux server's pid for a socket (the process whose command line names it as a server). */
function tmuxServerPid(socket: string): number | undefined {
  const r = spawnSync('tmux', ['-L', socket, 'display-message', '-p', '#{pid}'], { encoding: 'utf8' });
  const pid = Number(r.stdout.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** A heap snapshot (SIGUSR2), then SIGTERM and the exit (the CPU profile is written on the way out). */
async function heapSnapshotThenStop(p: ChildProcess, dir: string): Promise<void> {
  const size = () =>
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.heapsnapshot'))
      .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  const before = size();
  p.kill('SIGUSR2');
  // Written while it grows: done once its size stood still for two seconds.
  for (let i = 0, last = before, still = 0; i < 240 && still < 4; i++) {
    await sleep(500);
    const now = size();
    still = now > before && now === last ? still + 1 : 0;
    last = now;
  }
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await Promise.race([exited, sleep(60_000)]);
}

interface AtScale {
  sessions: number;
  runningMs: number;
  controllerCpuToRunningS?: number;
  burstControllerCpuS?: number;
  burstTmuxServerCpuS?: number;
  tmuxFloorMs: number;
  tmuxBatchedFloorMs: number;
  tmuxBatchedFloorServerCpuS?: number;
  /** The controller's own launch lists for the same N, with no controller (launchFloor). */
  launchFloorMs?: number;
  launchFloorServerCpuS?: number;
  /** The files and directories of N launches, made right before the burst (fileSystemFloorMs). */
  fileSystemFloorMs?: number;
  idleCpuPercentOfOneCore: number;
  idleCpuByThread: Record<string, number>;
  tmuxServerIdleCpuPercent: number;
  controllerRssMB: number;
  rssIdleMinMB?: number;
  rssIdleMaxMB?: number;
  rssIdleMedianMB?: number;
  idleCpuPercentByWindow?: number[];
  rssIdleMedianByWindowMB?: number[];
}

async function atScale(n: number, idleWindowMs: number): Promise<AtScale> {
  const dir = tempDir(`scale-${n}`);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const socket = `orchctl-bench-scale-${n}-${process.pid}`;
  const env = { ...process.env, ORCHCTL_HOME: home, ORCHCTL_TMUX_SOCKET: socket, ORCHCTL_METRICS_ADDR: '0' };
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 50 });
  const db = new Database(path.join(home, 'state.db'), { readonly: true, fileMustExist: true });
  let ctl: ChildProcess | undefined;
  try {
    // ORCHCTL_BENCH_CPU_PROF=<dir>: the controller writes a CPU profile there when it stops (SIGTERM
    // below); its last `idleWindowMs` is the idle window measured here.
    const prof = process.env.ORCHCTL_BENCH_CPU_PROF;
    const profiling = prof
      ? ['--cpu-prof', `--cpu-prof-dir=${prof}`, '--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${prof}`]
      : [];
    ctl = spawn(process.execPath, [...profiling, ORCHCTL, 'controller', '--log-format', 'json'], {
      env,
      stdio: 'ignore',
    });
    for (let i = 0; i < 200 && !(await store.getLease('orchctl-controller')); i++) await sleep(50);
    const names = Array.from({ length: n }, (_, i) => `s-${i}`);
    const running = runningCounter(db);
    await sleep(fileSystemSettleMs());
    const fsFloorMs = fileSystemFloorMs(n, dir);
    const t0 = performance.now();
    const burstCtl0 = cpuSeconds(ctl.pid!, true);
    await store.txn(names.map((name) => ({ op: 'create' as const, object: sleeperSession(name, dir) })));
    for (;;) {
      if (running.get() === n) break;
      if (performance.now() - t0 > 15 * 60_000) throw new Error(`not all ${n} sessions Running in 15 minutes`);
      await sleep(250);
    }
    const runningMs = Math.round(performance.now() - t0);
    const cpuToRunningS = cpuSeconds(ctl.pid!, true); // start-up and the burst, children included
    // The burst's CPU: the controller's (children included) and the tmux server's (started by the
    // first launch, so all of its CPU so far), in seconds.
    const burstControllerCpuS = Math.round((cpuSeconds(ctl.pid!, true) - burstCtl0) * 100) / 100;
    const burstServer = tmuxServerPid(socket);
    const burstTmuxServerCpuS = burstServer ? Math.round(cpuSeconds(burstServer, false) * 100) / 100 : 0;
    await sleep(10_000); // start-up work (first observations) settles
    const server = tmuxServerPid(socket);
    const t0s = threadCpu(ctl.pid!);
    const idle = await idleWindows(ctl.pid!, server, idleWindowMs);
    const t1s = threadCpu(ctl.pid!);
    const rss = rssMB(ctl.pid!);
    const smaps = smapsRollupMB(ctl.pid!);
    if (prof) await heapSnapshotThenStop(ctl, prof);
    const batched = tmuxBatchedFloor(n);
    const launched = launchFloor(n, dir);
    return {
      sessions: n,
      runningMs,
      controllerCpuToRunningS: Math.round(cpuToRunningS * 10) / 10,
      burstControllerCpuS,
      burstTmuxServerCpuS,
      tmuxFloorMs: tmuxFloor(n),
      tmuxBatchedFloorMs: batched.ms,
      tmuxBatchedFloorServerCpuS: batched.serverCpuS,
      launchFloorMs: launched.ms,
      launchFloorServerCpuS: launched.serverCpuS,
      fileSystemFloorMs: fsFloorMs,
      ...idle.cpu,
      idleCpuByThread: threadReport(t0s, t1s, idleWindowMs / 1000),
      controllerRssMB: rss,
      ...idle.rss,
      ...smaps,
    };
  } finally {
    if (ctl) await stopController(ctl);
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    db.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * SIGTERM, and SIGKILL if it has not exited within its shutdown grace (30 s) and a margin. A SIGKILL
 * first would leave its tmux control client behind when a reply was unread (tmux 3.3a), and the
 * kill-server after it would then never finish (observers/tmux-control.ts).
 */
async function stopController(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 40_000);
  await exited;
  clearTimeout(timer);
}

/** The length of one idle window: the figure is given for each, so that one holding a major GC shows. */
const IDLE_WINDOW_MS = 30_000;

/**
 * The idle figures over `totalMs` from now, in windows of IDLE_WINDOW_MS: the controller's CPU
 * (children included) and the tmux server's in % of one core, the mean over the whole and each
 * window's; the RSS read every second (one reading swings by ±25 MB with where the heap is between
 * two major collections and the ArrayBuffers waiting for one), its median and range over the whole
 * and each window's median. A 30 s window swings by 2× between runs of the same code with whether
 * it holds a major GC or a housekeeping sweep (60 s apart), so the mean is taken over several.
 */
async function idleWindows(pid: number, server: number | undefined, totalMs: number) {
  const pct = (s: number, ms: number) => Math.round((s / (ms / 1000)) * 1000) / 10;
  const windows = Math.max(1, Math.round(totalMs / IDLE_WINDOW_MS));
  const cpu = (): [number, number] => [cpuSeconds(pid, true), server ? cpuSeconds(server, false) : 0];
  const first = cpu();
  const byWindow: number[] = [];
  const rssByWindow: number[] = [];
  const rssSamples: number[] = [];
  const t0 = performance.now();
  for (let w = 0, last = first; w < windows; w++) {
    const samples: number[] = [];
    for (const end = t0 + ((w + 1) * totalMs) / windows; performance.now() < end; ) {
      samples.push(rssMB(pid));
      await sleep(Math.min(1000, Math.max(0, end - performance.now())));
    }
    const now = cpu();
    byWindow.push(pct(now[0] - last[0], totalMs / windows));
    rssByWindow.push(rssSpread(samples).rssIdleMedianMB ?? 0);
    rssSamples.push(...samples);
    last = now;
  }
  const end = cpu();
  const ms = performance.now() - t0;
  return {
    cpu: {
      idleCpuPercentOfOneCore: pct(end[0] - first[0], ms),
      idleCpuPercentByWindow: byWindow,
      tmuxServerIdleCpuPercent: pct(end[1] - first[1], ms),
    },
    rss: { ...rssSpread(rssSamples), rssIdleMedianByWindowMB: rssByWindow },
  };
}

function rssSpread(samples: number[]): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    rssIdleMinMB: sorted[0] ?? 0,
    rssIdleMedianMB: sorted[Math.floor(sorted.length / 2)] ?? 0,
    rssIdleMaxMB: sorted.at(-1) ?? 0,
  };
}

/** The controller's resident memory by kind (/proc/<pid>/smaps_rollup): anonymous (heap) against file-backed. */
function smapsRollupMB(pid: number): Record<string, number> {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return {
    rssAnonymousMB: Math.round(kb('Anonymous') / 1024),
    rssFileMB: Math.round((kb('Rss') - kb('Anonymous')) / 1024),
  };
}

function bareNodeRssMB(): number {
  const r = spawnSync(
    process.execPath,
    ['-e', 'console.log(require("fs").readFileSync("/proc/self/status","utf8").match(/VmRSS:\\s+(\\d+)/)[1])'],
    { encoding: 'utf8' },
  );
  return Math.round(Number(r.stdout.trim()) / 1024);
}

/** The node-agent mode: one node agent with NODE_SESSIONS on etcd, and the single host with as many. */
async function nodeMode(bare: number): Promise<Record<string, unknown>> {
  // The same window as at 1000 (90 s by default): a 30 s one swung 1.2–2.8 % for the same code.
  const singleHost = await atScale(NODE_SESSIONS, thousandIdleMs());
  const nodeAgent = await nodeAgentAtScale(NODE_SESSIONS, thousandIdleMs());
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  return {
    singleHost,
    nodeAgent,
    ratios: {
      idleCpuNodeVsSingleHost: ratio(nodeAgent.nodeAgentIdleCpuPercentOfOneCore, singleHost.idleCpuPercentOfOneCore),
      rssNodeVsBareNode: ratio(nodeAgent.nodeAgentRssMB, bare),
      runningNodeVsSingleHost: ratio(nodeAgent.runningMs, singleHost.runningMs),
    },
    summary:
      `node agent with ${NODE_SESSIONS}: →Running ${nodeAgent.runningMs} ms, idle CPU ` +
      `${nodeAgent.nodeAgentIdleCpuPercentOfOneCore} % (goal ≤ 2; by 30 s window ` +
      `${nodeAgent.nodeAgentIdleCpuPercentByWindow.join(', ')}), RSS ${nodeAgent.nodeAgentRssMB} MB; ` +
      `single host with ${NODE_SESSIONS}: →Running ${singleHost.runningMs} ms, idle CPU ` +
      `${singleHost.idleCpuPercentOfOneCore} %, RSS ${singleHost.controllerRssMB} MB; bare node ${bare} MB`,
  };
}

/**
 * The idle window at 1000 and in the node mode: 90 s (three windows of 30 s) by default, so that the
 * whole bench stays under ~8 minutes; ORCHCTL_BENCH_SCALE_IDLE_S sets it (30–600 s) for a longer look.
 */
function thousandIdleMs(): number {
  const raw = process.env.ORCHCTL_BENCH_SCALE_IDLE_S;
  if (raw === undefined || raw === '') return 90_000;
  const s = Number(raw);
  if (!Number.isInteger(s) || s < 30 || s > 600)
    throw new Error(`ORCHCTL_BENCH_SCALE_IDLE_S: whole seconds from 30 to 600, not ${JSON.stringify(raw)}`);
  return s * 1000;
}

export const scaleBench: Bench = {
  name: 'scale',
  description: `one host at 100 and 1000 sessions, a node agent at ${NODE_SESSIONS}: →Running, idle CPU, RSS`,
  async run() {
    // ORCHCTL_BENCH_SCALE_ONLY=100, 1000 or node: only that part (profiling one size, a quicker look).
    const only = process.env.ORCHCTL_BENCH_SCALE_ONLY;
    if (only && !['100', '1000', 'node'].includes(only))
      throw new Error(`ORCHCTL_BENCH_SCALE_ONLY: 100, 1000 or node, not ${JSON.stringify(only)}`);
    const bare = bareNodeRssMB();
    if (only === 'node') return { node: await nodeMode(bare), bareNodeRssMB: bare };
    const skipped: AtScale = {
      sessions: 0,
      runningMs: 0,
      tmuxFloorMs: 1,
      tmuxBatchedFloorMs: 1,
      idleCpuPercentOfOneCore: 0,
      idleCpuByThread: {},
      tmuxServerIdleCpuPercent: 0,
      controllerRssMB: 0,
    };
    const hundred = only === '1000' ? skipped : await atScale(100, 30_000);
    const thousand = only === '100' ? skipped : await atScale(1000, thousandIdleMs());
    const node = only ? undefined : await nodeMode(bare);
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    return {
      hundred,
      thousand,
      ...(node ? { node } : {}),
      bareNodeRssMB: bare,
      ratios: {
        runningVsTmuxFloor100: ratio(hundred.runningMs, hundred.tmuxFloorMs),
        runningVsTmuxFloor1000: ratio(thousand.runningMs, thousand.tmuxFloorMs),
        runningVsBatchedFloor100: ratio(hundred.runningMs, hundred.tmuxBatchedFloorMs),
        runningVsBatchedFloor1000: ratio(thousand.runningMs, thousand.tmuxBatchedFloorMs),
        runningVsLaunchFloor1000: ratio(thousand.runningMs, thousand.launchFloorMs ?? 0),
        rssVsBareNode1000: ratio(thousand.controllerRssMB, bare),
      },
      summary:
        `100→Running ${hundred.runningMs} ms (tmux floor ${hundred.tmuxFloorMs} ms); ` +
        `1000→Running ${thousand.runningMs} ms (floor ${thousand.tmuxFloorMs} ms serial, ` +
        `${thousand.tmuxBatchedFloorMs} ms in lists of 10, ${thousand.launchFloorMs} ms as the controller's ` +
        `launch lists without it; its files ${thousand.fileSystemFloorMs} ms); idle CPU at 1000 ` +
        `${thousand.idleCpuPercentOfOneCore} % (by 30 s window ${thousand.idleCpuPercentByWindow?.join(', ')}; ` +
        `tmux server ${thousand.tmuxServerIdleCpuPercent} %); ` +
        `RSS ${thousand.controllerRssMB} MB (idle window ${thousand.rssIdleMinMB}–${thousand.rssIdleMaxMB} MB, ` +
        `median ${thousand.rssIdleMedianMB}; bare node ${bare} MB)${node ? `; ${node.summary}` : ''}`,
    };
  },
};
