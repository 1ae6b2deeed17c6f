/**
 * Several hosts on one machine against the single-host default, in one run (issue 16). The
 * multi-host setup is test/support/multihost.ts: a real 3-member etcd cluster, three `orchctl
 * node` agents and `orchctl controller --no-node` processes, everything with its defaults (lease
 * 15 s, node-lost grace 40 s, observe every 5 s). The baseline is `orchctl controller` on the
 * SQLite default (control plane and node in one process), started the same way.
 *  - apply → Running: a new AgentSession written to the store (what `orchctl apply` commits) until
 *    its status says Running, one at a time; on etcd that is the scheduler's binding, then the
 *    node's launch (goal p99 ≤ 300 ms);
 *  - node lost → Running elsewhere: SIGSTOP of a node agent with sessions, until every one of them
 *    runs on another node (goal ≤ 45 s; two samples — each takes the whole grace);
 *  - controller failover: the leading control plane stopped with SIGTERM (it releases its lease),
 *    SIGKILL (on one machine the standby sees the holder's pid is gone) and SIGSTOP (a host that
 *    vanished: the lease must run out), until the standby holds the lease and until a session
 *    created at the kill is bound (goal ≤ 5 s with the default 4 s lease); SIGSTOP again with the
 *    old default `--leader-lease 15s` as the baseline. The `multihost-failover` benchmark runs only
 *    this lease part: 15 s and the default in one run, and the default through SIGKILLs of the etcd
 *    raft leader (it must keep leading);
 *  - 1000 sessions (`sh -c 'exec sleep 3600'`) in one transaction: until all Running, the CPU and
 *    memory of the control plane (etcd: `--no-node`; SQLite: the one process) while they start and
 *    over an idle minute, and beside them the node agents', etcd's, the runs' (tmux servers and
 *    everything under them), the nodes' watchdogs' and the whole machine's. Memory: resident MB summed over a group's
 *    processes (`rssMB`) and the largest peak of one of them (`peakMB`).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Resource } from '../../controller/api/types.js';
import { fuseFiles } from '../../controller/app/watchdog.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import type { Store } from '../../controller/store/store.js';
import { etcdAvailable } from '../../test/support/etcd-cluster.js';
import { boundRunning, CONTROLLER_LEASE, type MultiHost, startMultiHost } from '../../test/support/multihost.js';
import { cpuSeconds, ORCHCTL, percentile, tempDir } from '../lib.js';
import type { Bench } from '../types.js';

const LATENCY_RUNS = 50;
const NODE_LOST_SAMPLES = 2;
const MANY = 1000;
const IDLE_WINDOW_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (n: number) => Math.round(n * 10) / 10;
const phaseOf = (o: Resource) => (o.status as { phase?: string } | undefined)?.phase;

function session(name: string, workdir: string): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {
      agent: { command: ['sh', '-c', 'exec sleep 3600'], promptDelivery: 'none' },
      workdir,
      restartPolicy: 'OnFailure',
    },
  };
}

/** When each named session was first seen Running (Date.now), from a watch started now. */
function runningTimes(store: Store, rev: number, names: Set<string>) {
  const seen = new Map<string, number>();
  const h = store.watch({ kind: 'AgentSession', fromRevision: rev }, (ev) => {
    const n = ev.object.metadata.name;
    if (names.has(n) && !seen.has(n) && ev.type !== 'DELETED' && phaseOf(ev.object) === 'Running')
      seen.set(n, Date.now());
  });
  return { seen, close: () => h.close() };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Sequential creates, each until Running: milliseconds from the write to the status. */
async function applyToRunning(store: Store, workdir: string, prefix: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = -3; i < LATENCY_RUNS; i++) {
    const name = `${prefix}-${i < 0 ? `warm${-i}` : i}`;
    const w = runningTimes(store, await store.revision(), new Set([name]));
    const t0 = Date.now();
    await store.create(session(name, workdir));
    await until(`${name} Running`, () => w.seen.has(name), 30_000);
    w.close();
    if (i >= 0) ms.push(w.seen.get(name)! - t0);
  }
  return ms;
}

/**
 * CPU seconds (user + system; with `children`, also of its children it has reaped) and memory (MB:
 * resident now, peak resident) of a process; zeros for one that is gone.
 */
function usage(pid: number, children = false): { cpu: number; rssMB: number; peakMB: number } {
  try {
    const cpu = cpuSeconds(pid, children);
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { cpu, rssMB: kb('VmRSS') / 1024, peakMB: r1(kb('VmHWM') / 1024) };
  } catch {
    return { cpu: 0, rssMB: 0, peakMB: 0 };
  }
}

/**
 * The tmux servers on these sockets and every process under them: the runs (launch wrappers,
 * agents, and on several nodes each run's fuse watchdog, whose short-lived `sleep`, `stat` and
 * `date` count as its reaped children).
 */
function runProcesses(sockets: string[]): number[] {
  const roots = sockets
    .map((s) => Number(spawnSync('tmux', ['-L', s, 'display-message', '-p', '#{pid}'], { encoding: 'utf8' }).stdout))
    .filter((pid) => pid > 0);
  const kids = new Map<number, number[]>();
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const st = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(p)]);
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  for (const queue = [...roots]; queue.length; ) {
    const pid = queue.pop()!;
    out.push(pid);
    queue.push(...(kids.get(pid) ?? []));
  }
  return out;
}

/** Busy and total jiffies of the whole machine (/proc/stat). */
function machineCpu(): { busy: number; total: number } {
  const [, ...v] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - v[3] - v[4], total }; // idle and iowait
}

/** A node home's watchdog (app/watchdog.ts writes its pid there), when there is one. */
function watchdogOf(home: string): number[] {
  try {
    const pid = Number(fs.readFileSync(fuseFiles(home).ownerFile, 'utf8'));
    return pid > 0 ? [pid] : [];
  } catch {
    return [];
  }
}

interface Watched {
  name: string;
  pids: () => number[];
  /** Count the CPU of reaped children too (the run processes: their short-lived commands). */
  children?: boolean;
}

/** CPU as % of one core per process group over [from, to], and their memory at `to`. */
function cpuReport(a: Map<string, number>, b: Map<string, number>, seconds: number) {
  const out: Record<string, number> = {};
  for (const [k, v] of b) out[k] = r1(((v - (a.get(k) ?? 0)) / seconds) * 100);
  return out;
}

function sampleCpu(watched: Watched[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of watched)
    m.set(
      w.name,
      w.pids().reduce((s, pid) => s + usage(pid, w.children).cpu, 0),
    );
  return m;
}

function memory(watched: Watched[]) {
  return Object.fromEntries(
    watched.map((w) => {
      const u = w.pids().map((pid) => usage(pid));
      return [
        w.name,
        { rssMB: r1(u.reduce((s, x) => s + x.rssMB, 0)), peakMB: r1(Math.max(...u.map((x) => x.peakMB))) },
      ];
    }),
  );
}

/** 1000 sessions in one transaction: until all Running, then an idle window; CPU and memory of each part. */
async function many(store: Store, workdir: string, watched: Watched[]): Promise<Record<string, unknown>> {
  const names = Array.from({ length: MANY }, (_, i) => `many-${String(i).padStart(4, '0')}`);
  const w = runningTimes(store, await store.revision(), new Set(names));
  const c0 = sampleCpu(watched);
  const m0 = machineCpu();
  const t0 = Date.now();
  await store.txn(names.map((n) => ({ op: 'create' as const, object: session(n, workdir) })));
  await until(`${MANY} sessions Running`, () => w.seen.size === MANY, 15 * 60_000);
  w.close();
  const startSeconds = (Date.now() - t0) / 1000;
  const c1 = sampleCpu(watched);
  const m1 = machineCpu();
  await sleep(10_000); // start-up work (first observations) settles
  const c2 = sampleCpu(watched);
  const m2 = machineCpu();
  const rev2 = await store.revision();
  await sleep(IDLE_WINDOW_MS);
  const c3 = sampleCpu(watched);
  const m3 = machineCpu();
  const rev3 = await store.revision();
  const busy = (a: typeof m0, b: typeof m0) => r1(((b.busy - a.busy) / (b.total - a.total)) * 100);
  return {
    allRunningSeconds: r1(startSeconds),
    firstRunningMs: Math.min(...w.seen.values()) - t0,
    cpuPercentOfOneCoreWhileStarting: cpuReport(c0, c1, startSeconds),
    cpuPercentOfOneCoreIdle: cpuReport(c2, c3, IDLE_WINDOW_MS / 1000),
    machineBusyPercentWhileStarting: busy(m0, m1),
    machineBusyPercentIdle: busy(m2, m3),
    // Every write (objects, status, leases) moves the store's revision: what the idle cost is made of.
    storeWritesPerSecondIdle: r1((rev3 - rev2) / (IDLE_WINDOW_MS / 1000)),
    memoryAfterIdle: memory(watched),
  };
}

// ------------------------------------------------------------------ the SQLite single host

interface SingleHost {
  dir: string;
  socket: string;
  store: SqliteStore;
  controller: ChildProcess;
}

async function startSingleHost(name: string): Promise<SingleHost> {
  const dir = tempDir(`mh-${name}`);
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const socket = `orchctl-bench-mh-${name}-${process.pid}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ORCHCTL_HOME: home,
    ORCHCTL_TMUX_SOCKET: socket,
    ORCHCTL_METRICS_ADDR: '0',
  };
  delete env.ORCHCTL_STORE;
  const controller = spawn(ORCHCTL, ['controller', '--log-format', 'json'], { env, stdio: 'ignore' });
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 5 });
  const h = { dir, socket, store, controller };
  try {
    // Ready = its embedded node registered as Ready (the scheduler binds only to a Ready node).
    await until(
      'the single-host controller',
      async () =>
        (await store.list('Node')).items.some((n) =>
          (n.status as { conditions?: { type: string; status: string }[] })?.conditions?.some(
            (c) => c.type === 'Ready' && c.status === 'True',
          ),
        ),
      30_000,
    );
  } catch (e) {
    await stopSingleHost(h);
    throw e;
  }
  return h;
}

async function stopSingleHost(h: SingleHost): Promise<void> {
  h.controller.kill('SIGKILL');
  spawnSync('tmux', ['-L', h.socket, 'kill-server']);
  await h.store.close();
  fs.rmSync(h.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}

// ------------------------------------------------------------------ several hosts

/** SIGSTOP of the node with the most sessions, until all of them run elsewhere; SIGCONT, until it is back. */
async function nodeLost(mh: MultiHost): Promise<Record<string, number>> {
  const all = await mh.sessions();
  const count = (n: string) => all.filter((s) => s.status?.binding?.nodeName === n).length;
  const node = Object.keys(mh.nodes).sort((a, b) => count(b) - count(a))[0];
  const mine = all.filter((s) => s.status?.binding?.nodeName === node).map((s) => s.metadata.name);
  const p = mh.nodes[node];
  p.child!.kill('SIGSTOP');
  const t0 = Date.now();
  let notReadyMs = -1;
  await mh.waitFor(
    `the sessions of ${node} Running elsewhere`,
    async () => {
      if (notReadyMs < 0) {
        const n = await mh.store.get({ kind: 'Node', namespace: '', name: node });
        const ready = (n?.status as { conditions?: { type: string; status: string }[] })?.conditions?.find(
          (c) => c.type === 'Ready',
        );
        if (ready?.status === 'Unknown') notReadyMs = Date.now() - t0;
      }
      const now = await mh.sessions();
      return mine.every((name) => {
        const s = now.find((x) => x.metadata.name === name);
        return boundRunning(s) && s?.status?.binding?.nodeName !== node;
      });
    },
    120_000,
  );
  const movedMs = Date.now() - t0;
  p.child!.kill('SIGCONT');
  await mh.waitFor(`${node} Ready again`, async () => {
    const n = await mh.store.get({ kind: 'Node', namespace: '', name: node });
    return (n?.status as { conditions?: { type: string; status: string }[] })?.conditions?.some(
      (c) => c.type === 'Ready' && c.status === 'True',
    );
  });
  return { sessions: mine.length, notReadyMs, allRunningElsewhereMs: movedMs };
}

/** The leader stopped with `signal`; until the standby holds the lease and has bound a session created then. */
async function failover(mh: MultiHost, signal: NodeJS.Signals, i: number): Promise<Record<string, number>> {
  const leader = (await mh.leader())!;
  const standby = mh.controllers.find((c) => c !== leader)!;
  await mh.waitFor('the standby standing by', async () => standby.find('standing by') >= 0);
  const name = `failover-${signal.toLowerCase()}-${i}`;
  const t0 = Date.now();
  if (signal === 'SIGSTOP') leader.child!.kill('SIGSTOP');
  else await leader.kill(signal);
  await mh.store.create(session(name, mh.dir));
  let leaseMs = -1;
  await mh.waitFor(
    'the standby leading and binding',
    async () => {
      if (leaseMs < 0 && (await mh.leader()) === standby) leaseMs = Date.now() - t0;
      return leaseMs >= 0 && !!(await mh.session(name))?.status?.binding;
    },
    60_000,
  );
  const boundMs = Date.now() - t0;
  if (signal === 'SIGSTOP') {
    leader.child!.kill('SIGCONT'); // it finds its lease taken and stops
    await mh.waitFor('the deposed leader to stop', async () => !leader.alive);
  }
  leader.log.length = 0;
  leader.start(); // the next standby
  return { leaseMs, boundMs };
}

/** The controller lease's old default, measured beside the default (4 s) as the baseline. */
const BASELINE_LEASE = '15s';
const LEASE_SAMPLES = 3;
const RAFT_LEADER_KILLS = 3;

/**
 * The etcd raft leader killed `RAFT_LEADER_KILLS` times under a control plane on the default lease:
 * whether it keeps leading through each election (same process, same holder, no renewal failure,
 * no lapse logged) and how long a session created right after the kill takes to be bound.
 */
async function raftLeaderKills(mh: MultiHost): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let k = 0; k < RAFT_LEADER_KILLS; k++) {
    const leader = (await mh.leader())!;
    const holder = (await mh.lease(CONTROLLER_LEASE))?.holderIdentity;
    const member = await mh.cluster.leader();
    const from = leader.log.length;
    const t0 = Date.now();
    await mh.cluster.kill(member);
    const name = `raft-kill-${k}`;
    await mh.store.create(session(name, mh.dir));
    await mh.waitFor(`${name} bound`, async () => !!(await mh.session(name))?.status?.binding, 60_000);
    const boundMs = Date.now() - t0;
    await sleep(2 * 4000); // two default leases past the kill: a lapse or a takeover would have happened
    const troubleRe = /could not renew|does not answer|was not renewed|lost the/;
    const trouble = leader.log.slice(from).filter((l) => troubleRe.test(l));
    out.push({
      boundMs,
      keptLeading: leader.alive && (await mh.leader()) === leader,
      sameHolder: (await mh.lease(CONTROLLER_LEASE))?.holderIdentity === holder,
      renewalTrouble: trouble.length,
      ...(trouble.length ? { firstTrouble: trouble[0].slice(0, 300) } : {}),
    });
    await mh.cluster.restart(member);
    await sleep(2000);
  }
  return out;
}

/**
 * SIGSTOP failover (a hung leader, or a crash on another host) with each lease in `leases`
 * (undefined: the default), `LEASE_SAMPLES` each; on the default lease also the etcd raft leader kills.
 */
async function leaseFailover(nodes: { name: string }[], leases: (string | undefined)[]) {
  const out: Record<string, unknown> = {};
  for (const lease of leases) {
    const mh = await startMultiHost({
      nodes,
      controllers: 2,
      controllerArgs: lease ? ['--leader-lease', lease] : [],
    });
    try {
      const sigstop: Record<string, number>[] = [];
      for (let i = 0; i < LEASE_SAMPLES; i++) sigstop.push(await failover(mh, 'SIGSTOP', i));
      const seconds = (await mh.lease(CONTROLLER_LEASE))?.leaseDurationSeconds;
      out[lease ?? 'default'] = {
        leaseSeconds: seconds,
        sigstop,
        ...(lease ? {} : { raftLeaderKilled: await raftLeaderKills(mh) }),
      };
    } finally {
      await mh.stop();
    }
  }
  return out;
}

function leaseSummary(r: Record<string, unknown>): string {
  return Object.entries(r)
    .map(([k, v]) => {
      const x = v as {
        leaseSeconds: number;
        sigstop: { boundMs: number }[];
        raftLeaderKilled?: { keptLeading: boolean }[];
      };
      const kept = x.raftLeaderKilled
        ? `, kept leading through ${x.raftLeaderKilled.filter((t) => t.keptLeading).length}/` +
          `${x.raftLeaderKilled.length} etcd leader kills`
        : '';
      return `lease ${x.leaseSeconds} s (${k}): SIGSTOP bound ${x.sigstop.map((s) => s.boundMs).join('/')} ms${kept}`;
    })
    .join('; ');
}

const NODES = [{ name: 'n1' }, { name: 'n2' }, { name: 'n3' }];

/** Only the lease part of `multihost` (its own results file): SIGSTOP failover, the old 15 s lease and the default. */
export const multihostFailoverBench: Bench = {
  name: 'multihost-failover',
  description: `controller failover on a hung leader (SIGSTOP): default lease vs --leader-lease ${BASELINE_LEASE}`,
  async run() {
    if (!etcdAvailable) throw new Error('etcd is missing: install Debian etcd-server');
    // Both in one run, on the same box and load: the baseline first, then the default.
    const r = await leaseFailover(NODES, [BASELINE_LEASE, undefined]);
    return { leaseFailover: r, machine: { cpus: os.cpus().length, load1: os.loadavg()[0] }, summary: leaseSummary(r) };
  },
};

export const multihostBench: Bench = {
  name: 'multihost',
  description: 'etcd + 3 nodes vs SQLite single host: apply→Running, node lost, failover, 1000 sessions',
  async run() {
    if (!etcdAvailable) throw new Error('etcd is missing: install Debian etcd-server');
    const result: Record<string, unknown> = {};

    // Baseline and the same measurements on several hosts, one after the other on the same machine.
    const single = await startSingleHost('latency');
    try {
      result.sqliteApplyToRunningMs = await applyToRunning(single.store, single.dir, 'lat');
    } finally {
      await stopSingleHost(single);
    }
    const nodes = NODES;
    let mh = await startMultiHost({ nodes, controllers: 2 });
    try {
      result.etcdApplyToRunningMs = await applyToRunning(mh.store, mh.dir, 'lat');
      const lost: Record<string, number>[] = [];
      for (let i = 0; i < NODE_LOST_SAMPLES; i++) lost.push(await nodeLost(mh));
      result.nodeLost = lost;
      const fo: Record<string, Record<string, number>[]> = { SIGTERM: [], SIGKILL: [], SIGSTOP: [] };
      for (const [signal, n] of [
        ['SIGTERM', 3],
        ['SIGKILL', 3],
        ['SIGSTOP', 2],
      ] as const)
        for (let i = 0; i < n; i++) fo[signal].push(await failover(mh, signal, i));
      result.failover = fo;
      result.controllerLease = (await mh.lease(CONTROLLER_LEASE))?.leaseDurationSeconds;
    } finally {
      await mh.stop();
    }
    result.leaseFailover = await leaseFailover(nodes, [BASELINE_LEASE]); // the default's SIGSTOP is above

    const s = await startSingleHost('many');
    try {
      result.sqliteMany = await many(s.store, s.dir, [
        { name: 'controller', pids: () => [s.controller.pid!] },
        { name: 'tmuxAndRuns', pids: () => runProcesses([s.socket]), children: true },
      ]);
    } finally {
      await stopSingleHost(s);
    }
    mh = await startMultiHost({ nodes, controllers: 1 });
    try {
      result.etcdMany = await many(mh.store, mh.dir, [
        { name: 'controlPlane', pids: () => [mh.controllers[0].pid!] },
        ...Object.entries(mh.nodes).map(([name, n]) => ({ name: `node-${name}`, pids: () => [n.pid!] })),
        { name: 'etcd', pids: () => mh.cluster.members.map((m) => m.process!.pid!) },
        {
          name: 'tmuxAndRuns',
          pids: () => runProcesses(Object.values(mh.nodes).map((n) => n.socket!)),
          children: true,
        },
        // The nodes' self-fencing watchdogs (detached: not under tmux), with their sleep, stat and date.
        { name: 'watchdogs', pids: () => Object.values(mh.nodes).flatMap((n) => watchdogOf(n.home)), children: true },
      ]);
    } finally {
      await mh.stop();
    }
    return summarize(result);
  },
};

function summarize(r: Record<string, unknown>): Record<string, unknown> {
  const pct = (v: unknown) => {
    const ms = v as number[];
    return { p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms), runs: ms.length };
  };
  const sqlite = pct(r.sqliteApplyToRunningMs);
  const etcd = pct(r.etcdApplyToRunningMs);
  const lost = r.nodeLost as { allRunningElsewhereMs: number }[];
  const fo = r.failover as Record<string, { leaseMs: number; boundMs: number }[]>;
  const worst = (k: string) => Math.max(...fo[k].map((x) => x.boundMs));
  const sm = r.sqliteMany as { allRunningSeconds: number; cpuPercentOfOneCoreIdle: Record<string, number> };
  const em = r.etcdMany as { allRunningSeconds: number; cpuPercentOfOneCoreIdle: Record<string, number> };
  const ratio = (a: number, b: number) => `${r1(a / b)}x`;
  return {
    ...r,
    applyToRunning: {
      sqlite,
      etcd,
      etcdOverSqlite: { p50: ratio(etcd.p50, sqlite.p50), p99: ratio(etcd.p99, sqlite.p99) },
    },
    goals: {
      applyToRunning: `etcd p99 ${etcd.p99} ms (goal ≤ 300), SQLite p99 ${sqlite.p99} ms`,
      nodeLost: `${lost.map((x) => x.allRunningElsewhereMs).join(', ')} ms (goal ≤ 45000, grace 40 s)`,
      failover:
        `worst bound after SIGTERM ${worst('SIGTERM')} ms, SIGKILL ${worst('SIGKILL')} ms, ` +
        `SIGSTOP ${worst('SIGSTOP')} ms (goal ≤ 5000)`,
      many:
        `${MANY} Running in ${em.allRunningSeconds} s (SQLite ${sm.allRunningSeconds} s); idle CPU: control plane ` +
        `${em.cpuPercentOfOneCoreIdle.controlPlane} % vs single host ${sm.cpuPercentOfOneCoreIdle.controller} %`,
    },
    machine: { cpus: os.cpus().length, load1: os.loadavg()[0] },
    summary:
      `apply→Running p99 etcd ${etcd.p99} ms vs SQLite ${sqlite.p99} ms; node lost→Running ` +
      `${lost.map((x) => x.allRunningElsewhereMs).join('/')} ms; failover ${worst('SIGTERM')}/${worst('SIGKILL')}/` +
      `${worst('SIGSTOP')} ms; ${MANY} sessions ${em.allRunningSeconds} s, control plane idle ` +
      `${em.cpuPercentOfOneCoreIdle.controlPlane} %; ${leaseSummary(r.leaseFailover as Record<string, unknown>)}`,
  };
}
