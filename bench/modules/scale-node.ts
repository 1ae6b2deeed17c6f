/**
 * The `scale` benchmark's node-agent mode (issue 29: a node agent holding 333 sessions idles at
 * ≤ 2 % of a core). The multi-host set-up of docs/multi-host.md (test/support/multihost.ts): a real
 * 3-member etcd cluster, one `orchctl controller --no-node` and one `orchctl node` agent, and 333
 * sessions (`sh -c 'exec sleep 3600'`) in one transaction, all bound to that node. Measured: created
 * → all Running, then after 10 s of settling an idle window (90 s, as scale's at 1000, in windows of
 * 30 s, each reported: one window swings with whether it holds a major GC): the node agent's CPU in % of one
 * core (the children it reaped included), split by thread (/proc/<pid>/task/<tid>/stat), its RSS,
 * and for context the control plane's, etcd's and the node's watchdog's CPU, the store writes a
 * second (revision moves) and the requests etcd served in the window by method (Range, Txn, …:
 * unary requests of every client; a watch stream counts once, when it ends). The baseline, in the
 * same run, is `scale`'s single-host controller with the same 333 sessions (control plane and node
 * in one process, on SQLite), and a bare `node`'s RSS.
 *
 * ORCHCTL_BENCH_CPU_PROF=<dir>: the node agent writes a CPU profile there when it stops (SIGTERM
 * after the window); its last 90 s are the idle window.
 */
import fs from 'node:fs';
import type { Resource } from '../../controller/api/types.js';
import { fuseFiles } from '../../controller/app/watchdog.js';
import { etcdAvailable } from '../../test/support/etcd-cluster.js';
import { type MultiHost, startMultiHost } from '../../test/support/multihost.js';
import { cpuSeconds, sleeperSession } from '../lib.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const r1 = (n: number) => Math.round(n * 10) / 10;
const phaseOf = (o: Resource) => (o.status as { phase?: string } | undefined)?.phase;

/** CPU seconds of each thread of `pid`, summed by thread name (comm: `node`, `libuv-worker`, `V8Worker`, …). */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const st = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}

/** Per-thread-name CPU in % of one core over a window of `seconds`, largest first. */
export function threadReport(a: Map<string, number>, b: Map<string, number>, seconds: number) {
  return Object.fromEntries(
    [...b]
      .map(([k, v]) => [k, r1(((v - (a.get(k) ?? 0)) / seconds) * 100)] as const)
      .filter(([, v]) => v > 0)
      .sort((x, y) => y[1] - x[1]),
  );
}

export const rssMB = (pid: number): number =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

/** The node's watchdog (app/watchdog.ts writes its pid into its home), if it runs. */
function watchdogPid(home: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(fuseFiles(home).ownerFile, 'utf8'));
    return pid > 0 && fs.existsSync(`/proc/${pid}`) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Requests the etcd members served, by gRPC method (their /metrics): every client's, summed over members. */
async function etcdRequests(mh: MultiHost): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of mh.cluster.endpoints) {
    const text = await (await fetch(`${e}/metrics`)).text();
    for (const m of text.matchAll(/^grpc_server_handled_total\{[^}]*grpc_method="(\w+)"[^}]*\} (\d+)/gm))
      out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]));
  }
  return out;
}

interface Sample {
  requests: Map<string, number>;
  node: number;
  threads: Map<string, number>;
  controlPlane: number;
  etcd: number;
  watchdog: number;
  revision: number;
}

async function sample(mh: MultiHost, watchdog: number | undefined): Promise<Sample> {
  const node = mh.nodes.n1.pid!;
  const safe = (pid: number | undefined, children: boolean) => {
    try {
      return pid ? cpuSeconds(pid, children) : 0;
    } catch {
      return 0;
    }
  };
  return {
    requests: await etcdRequests(mh),
    node: cpuSeconds(node, true),
    threads: threadCpu(node),
    controlPlane: safe(mh.controllers[0].pid, true),
    etcd: mh.cluster.members.reduce((s, m) => s + safe(m.process?.pid, false), 0),
    watchdog: safe(watchdog, true),
    revision: await mh.store.revision(),
  };
}

/** One node agent holding `n` sessions on etcd: created → all Running, then its idle cost over `idleWindowMs`. */
export interface NodeAtScale {
  sessions: number;
  runningMs: number;
  nodeAgentIdleCpuPercentOfOneCore: number;
  /** The same in each 30 s window of the idle window (one window swings with a major GC). */
  nodeAgentIdleCpuPercentByWindow: number[];
  nodeAgentIdleCpuByThread: Record<string, number>;
  nodeAgentRssMB: number;
  controlPlaneIdleCpuPercent: number;
  etcdIdleCpuPercent: number;
  watchdogIdleCpuPercent: number;
  storeWritesPerSecondIdle: number;
  /** Requests etcd served over the window, by method, from every client (control plane, node agent). */
  etcdRequestsIdle: Record<string, number>;
}

export async function nodeAgentAtScale(n: number, idleWindowMs: number): Promise<NodeAtScale> {
  if (!etcdAvailable) throw new Error('etcd is missing: install Debian etcd-server');
  const prof = process.env.ORCHCTL_BENCH_CPU_PROF;
  const mh = await startMultiHost({
    nodes: [{ name: 'n1' }],
    controllers: 1,
    nodeExecArgv: prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : undefined,
  });
  try {
    const names = Array.from({ length: n }, (_, i) => `s-${String(i).padStart(4, '0')}`);
    const t0 = performance.now();
    await mh.store.txn(names.map((name) => ({ op: 'create' as const, object: sleeperSession(name, mh.dir) })));
    for (;;) {
      const { items } = await mh.store.list('AgentSession');
      if (items.filter((o) => phaseOf(o) === 'Running').length === n) break;
      if (performance.now() - t0 > 15 * 60_000) throw new Error(`not all ${n} sessions Running in 15 minutes`);
      await sleep(250);
    }
    const runningMs = Math.round(performance.now() - t0);
    await sleep(10_000); // start-up work (first observations) settles
    const watchdog = watchdogPid(mh.nodes.n1.home);
    const a = await sample(mh, watchdog);
    const byWindow: number[] = [];
    let last = a;
    for (let left = idleWindowMs; left > 0; left -= 30_000) {
      const ms = Math.min(30_000, left);
      await sleep(ms);
      const now = await sample(mh, watchdog);
      byWindow.push(r1(((now.node - last.node) / (ms / 1000)) * 100));
      last = now;
    }
    const b = last;
    const rss = rssMB(mh.nodes.n1.pid!);
    const s = idleWindowMs / 1000;
    const pct = (x: number) => r1((x / s) * 100);
    if (prof) await mh.nodes.n1.kill('SIGTERM'); // the profile is written on the way out
    return {
      sessions: n,
      runningMs,
      nodeAgentIdleCpuPercentOfOneCore: pct(b.node - a.node),
      nodeAgentIdleCpuPercentByWindow: byWindow,
      nodeAgentIdleCpuByThread: threadReport(a.threads, b.threads, s),
      nodeAgentRssMB: rss,
      controlPlaneIdleCpuPercent: pct(b.controlPlane - a.controlPlane),
      etcdIdleCpuPercent: pct(b.etcd - a.etcd),
      watchdogIdleCpuPercent: pct(b.watchdog - a.watchdog),
      storeWritesPerSecondIdle: r1((b.revision - a.revision) / s),
      etcdRequestsIdle: Object.fromEntries(
        [...b.requests].map(([k, v]) => [k, v - (a.requests.get(k) ?? 0)]).filter(([, v]) => v),
      ),
    };
  } finally {
    await mh.stop();
  }
}
