/**
 * Several hosts on one machine (issue 16): a real 3-member etcd cluster (etcd-cluster.ts), node
 * agents (`bin/orchctl node`, each with its own ORCHCTL_HOME, tmux socket, name and labels) and
 * control planes (`bin/orchctl controller --no-node`: the first to win the lease leads, the others
 * stand by), all the built CLI on the etcd store. Used by test/e2e/multihost.test.ts and by the
 * `multihost` benchmark, so it imports nothing from vitest.
 *
 *   const mh = await startMultiHost({ nodes: [{ name: 'n1', labels: { zone: 'east' } }] });
 *   await mh.apply([...]);                        // orchctl --context mh apply -f - (a client home)
 *   const s = await mh.session('x');              // read straight from etcd
 *   const sampler = mh.sample();                  // every node's tmux, every 250 ms: two live runs?
 *   await mh.nodes.n1.kill('SIGKILL'); mh.nodes.n1.start();
 *   await mh.stop();                              // every process, tmux server and member
 *
 * Every process this starts (and every tmux server of a node) is killed when the test process
 * exits, whatever happened before, and its files removed (a node's watchdog, detached on purpose,
 * ends when its home is gone): nothing outlives its test.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import YAML from 'yaml';
import { packageRoot } from '../../controller/config/paths.js';
import type { Node } from '../../controller/api/node.js';
import type { AgentSession } from '../../controller/api/session.js';
import type { Resource } from '../../controller/api/types.js';
import { nodeLeaseName } from '../../controller/reconcilers/nodelifecycle/plan.js';
import { CONTROLLER_LEASE } from '../../controller/runtime/lease.js';
import { EtcdStore } from '../../controller/store/etcd.js';
import type { LeaseRecord } from '../../controller/store/store.js';
import { type EtcdCluster, freePort, startEtcdCluster } from './etcd-cluster.js';
import { pollFor } from './until.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

const ROOT = packageRoot();
const BIN = path.join(ROOT, 'bin/orchctl');
export const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');
export { CONTROLLER_LEASE, nodeLeaseName as nodeLease };

/** How many log lines a process keeps (the 1000-session benchmark must not grow without bound). */
const LOG_LINES = 20_000;

export interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  maxSessions?: number;
}

export interface MultiHostOptions {
  nodes: NodeSpec[];
  /** Control-plane processes (`controller --no-node`); the first started leads (default 2: a leader and a standby). */
  controllers?: number;
  /** `--node-lost-grace` of the control planes (default: theirs, 40 s). */
  nodeLostGrace?: string;
  /** Extra flags of every node agent (e.g. a faster `--observe-interval`). */
  nodeArgs?: string[];
  /** Node's own flags for every node agent (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  nodeExecArgv?: string[];
  /** Extra flags of every control plane. */
  controllerArgs?: string[];
  /** Serve each control plane's /metrics and /readyz on a port of its own (Proc.metricsUrl). */
  controllerMetrics?: boolean;
  /** An etcd cluster to use (default: a new one, stopped by stop()). */
  cluster?: EtcdCluster;
}

/** One orchctl process of the setup: a node agent or a control plane. */
export class Proc {
  child?: ResultPromise;
  /** stderr lines (the JSON log), the newest LOG_LINES. */
  readonly log: string[] = [];
  /** Pids of every start, oldest first. */
  readonly pids: number[] = [];

  constructor(
    readonly name: string,
    readonly args: string[],
    readonly env: NodeJS.ProcessEnv,
    readonly home: string,
    /** The node agent's tmux socket (-L); undefined for a control plane. */
    readonly socket?: string,
    /** http://127.0.0.1:PORT of its /metrics and /readyz, when served. */
    readonly metricsUrl?: string,
    /** Node's own flags: bin/orchctl then runs under `node FLAGS`. */
    readonly execArgv: string[] = [],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Running (possibly stopped by SIGSTOP), not exited. */
  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    const [file, args] = this.execArgv.length
      ? [process.execPath, [...this.execArgv, BIN, ...this.args]]
      : [BIN, this.args];
    const child = execa(file, args, { cwd: ROOT, env: this.env, extendEnv: false, reject: false, stdin: 'ignore' });
    live.add(this);
    this.child = child;
    this.pids.push(child.pid!);
    let rest = '';
    child.stderr?.on('data', (d: Buffer) => {
      const lines = (rest + d.toString()).split('\n');
      rest = lines.pop() ?? '';
      this.log.push(...lines.filter(Boolean));
      if (this.log.length > LOG_LINES) this.log.splice(0, this.log.length - LOG_LINES);
    });
    child.stdout?.resume();
  }

  /** Sends `signal`; for SIGKILL and SIGTERM waits until the process has exited. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const c = this.child;
    if (!c || !this.alive) return;
    if (signal === 'SIGTERM') c.kill('SIGCONT'); // a stopped process handles SIGTERM only once continued
    c.kill(signal);
    if (signal === 'SIGKILL' || signal === 'SIGTERM') await c;
  }

  /** Index of the first log line (from `from`) containing `text`, or -1. */
  find(text: string, from = 0): number {
    for (let i = from; i < this.log.length; i++) if (this.log[i].includes(text)) return i;
    return -1;
  }

  tail(n = 15): string {
    return `--- ${this.name} (pids ${this.pids.join(', ')})\n${this.log.slice(-n).join('\n')}`;
  }
}

/** A live agent's pane on a node's tmux server. */
export interface LivePane {
  node: string;
  uid: string;
  pid: number;
  /** @orchctl-key: namespace/name#run */
  key: string;
  epoch: string;
}

/**
 * Samples every node's tmux server until stop(): `doubles` lists every moment a session had more
 * than one live run anywhere; `samples` and `peak` (a sampler that never looked, or never saw a
 * run, proves nothing); `seen` the last look.
 */
export interface Sampler {
  doubles: string[];
  samples: number;
  /** The most live runs seen at once. */
  peak: number;
  seen: LivePane[];
  stop(): Promise<void>;
}

export interface MultiHost {
  cluster: EtcdCluster;
  /** This test's own client of the store (the same prefix as the processes). */
  store: EtcdStore;
  dir: string;
  /** `etcd://…/prefix`, as the processes get it in ORCHCTL_STORE. */
  storeUrl: string;
  /** A home whose config has the context `mh` (the etcd store): what orchctl() runs with. */
  clientHome: string;
  nodes: Record<string, Proc>;
  controllers: Proc[];
  /** `orchctl --context mh ARGS` from the client home; never throws on a non-zero exit. */
  orchctl(args: string[], input?: string): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Applies these manifests (objects or YAML text); throws when orchctl refuses. */
  apply(docs: object[] | string): Promise<void>;
  session(name: string, namespace?: string): Promise<AgentSession | undefined>;
  sessions(namespace?: string): Promise<AgentSession[]>;
  lease(name: string): Promise<LeaseRecord | undefined>;
  /** The control plane holding the controller lease now, if any. */
  leader(): Promise<Proc | undefined>;
  /** Polls `fn` (errors count as "not yet": etcd may be electing) every 200 ms until it returns a value. */
  waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms?: number): Promise<T>;
  livePanes(node: string): Promise<LivePane[]>;
  sample(everyMs?: number): Sampler;
  /** Kills every process and tmux server, closes the client, stops the cluster it started, removes the files. */
  stop(): Promise<void>;
}

const live = new Set<Proc>();
const sockets = new Set<string>();
/** The setups' directories: removing one also ends its nodes' watchdogs (they exit when their home is gone). */
const dirs = new Set<string>();
let exitHook = false;

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  // A test that fails before its afterAll, or a worker that exits early, leaves nothing running.
  process.once('exit', () => {
    for (const p of live) if (p.alive) p.child?.kill('SIGKILL');
    for (const s of sockets) spawnSync('tmux', ['-L', s, 'kill-server'], { stdio: 'ignore' });
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
}

/** A clean environment: nothing of the developer's orchctl settings leaks in. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ORCHCTL_METRICS_ADDR: '0', NO_COLOR: '1' };
  delete env.ORCHCTL_NAMESPACE;
  delete env.ORCHCTL_DEBUG;
  delete env.ORCHCTL_STORE;
  delete env.ORCHCTL_TMUX_SOCKET;
  return env;
}

/** Pids of processes whose working directory is inside `dir` (the agents of this setup). */
function processesIn(dir: string): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readlinkSync(`/proc/${p}/cwd`).startsWith(dir)) out.push(Number(p));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

async function panesOf(node: string, socket: string): Promise<LivePane[]> {
  const format = `${TAGS_FORMAT}\t#{pane_dead}\t#{pane_pid}`;
  const r = await execa('tmux', ['-L', socket, 'list-panes', '-a', '-F', format], { reject: false });
  if (r.exitCode !== 0) return []; // no server (yet, or any more): no runs
  return String(r.stdout)
    .split('\n')
    .map((l) => l.split('\t'))
    .map(([tags, dead, pid]) => ({ ...parseTags(tags), dead, pid: Number(pid) }))
    .filter((p) => p.uid && p.dead === '0')
    .map(({ uid, pid, key, epoch }) => ({ node, uid, pid, key, epoch }));
}

export async function startMultiHost(opts: MultiHostOptions): Promise<MultiHost> {
  installExitHook();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-multihost-'));
  dirs.add(dir);
  const cluster = opts.cluster ?? (await startEtcdCluster());
  const prefix = `/mh-${process.pid}-${path.basename(dir).slice(-6)}/`;
  const hosts = cluster.endpoints.map((e) => new URL(e).host);
  const storeUrl = `etcd://${hosts.join(',')}${prefix.replace(/\/$/, '')}`;
  const store = new EtcdStore({ endpoints: cluster.endpoints, prefix });
  const env = baseEnv();
  const home = (name: string) => {
    const h = path.join(dir, name);
    fs.mkdirSync(h, { recursive: true });
    return h;
  };
  const clientHome = home('client');
  const config = {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Config',
    contexts: [{ name: 'mh', store: { etcd: { endpoints: cluster.endpoints, prefix } } }],
  };
  fs.writeFileSync(path.join(clientHome, 'config'), YAML.stringify(config), { mode: 0o600 });

  const nodes: Record<string, Proc> = {};
  for (const n of opts.nodes) {
    const socket = `orchctl-mh-${process.pid}-${n.name}`;
    sockets.add(socket);
    const args = ['node', '--name', n.name, '--log-format', 'json'];
    for (const [k, v] of Object.entries(n.labels ?? {})) args.push('--label', `${k}=${v}`);
    if (n.maxSessions !== undefined) args.push('--max-sessions', String(n.maxSessions));
    const h = home(`node-${n.name}`);
    nodes[n.name] = new Proc(
      `node ${n.name}`,
      [...args, ...(opts.nodeArgs ?? [])],
      { ...env, ORCHCTL_STORE: storeUrl, ORCHCTL_HOME: h, ORCHCTL_TMUX_SOCKET: socket },
      h,
      socket,
      undefined,
      opts.nodeExecArgv,
    );
  }
  const controllers: Proc[] = [];
  for (let i = 0; i < (opts.controllers ?? 2); i++) {
    const args = ['controller', '--no-node', '--log-format', 'json'];
    if (opts.nodeLostGrace) args.push('--node-lost-grace', opts.nodeLostGrace);
    const port = opts.controllerMetrics ? await freePort() : undefined;
    if (port) args.push('--metrics-addr', `127.0.0.1:${port}`);
    const h = home(`cp-${i}`);
    controllers.push(
      new Proc(
        `control plane ${i}`,
        [...args, ...(opts.controllerArgs ?? [])],
        // A control plane touches no tmux; its own socket all the same, so nothing can reach a node's.
        { ...env, ORCHCTL_STORE: storeUrl, ORCHCTL_HOME: h, ORCHCTL_TMUX_SOCKET: `orchctl-mh-${process.pid}-cp${i}` },
        h,
        undefined,
        port ? `http://127.0.0.1:${port}` : undefined,
      ),
    );
  }

  const all = () => [...controllers, ...Object.values(nodes)];
  const mh: MultiHost = {
    cluster,
    store,
    dir,
    storeUrl,
    clientHome,
    nodes,
    controllers,
    async orchctl(args, input) {
      const r = await execa(BIN, ['--context', 'mh', ...args], {
        cwd: ROOT,
        env: { ...env, ORCHCTL_HOME: clientHome },
        extendEnv: false,
        reject: false,
        input,
        timeout: 30_000,
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    async apply(docs) {
      const text = typeof docs === 'string' ? docs : docs.map((d) => YAML.stringify(d)).join('---\n');
      const r = await mh.orchctl(['apply', '-f', '-'], text);
      if (r.exitCode !== 0) throw new Error(`orchctl apply failed (exit ${r.exitCode}): ${r.stderr}`);
    },
    async session(name, namespace = 'default') {
      return (await store.get({ kind: 'AgentSession', namespace, name })) as AgentSession | undefined;
    },
    async sessions(namespace = 'default') {
      return (await store.list('AgentSession', { namespace })).items as AgentSession[];
    },
    lease: (name) => store.getLease(name),
    async leader() {
      const l = await store.getLease(CONTROLLER_LEASE);
      const pid = l && Number(l.holderIdentity.split('_').at(-2));
      return controllers.find((c) => c.alive && c.pid === pid);
    },
    waitFor(what, fn, ms = 30_000) {
      return pollFor(what, fn, ms, {
        everyMs: 200,
        context: () =>
          all()
            .map((p) => p.tail())
            .join('\n'),
      }) as never;
    },
    livePanes: (node) => panesOf(node, nodes[node].socket!),
    sample(everyMs = 250) {
      let on = true;
      const s: Sampler = { doubles: [], samples: 0, peak: 0, seen: [], stop: async () => {} };
      const loop = (async () => {
        while (on) {
          const panes = (await Promise.all(Object.keys(nodes).map((n) => mh.livePanes(n)))).flat();
          const where = new Map<string, LivePane[]>();
          for (const p of panes) where.set(p.uid, [...(where.get(p.uid) ?? []), p]);
          for (const [uid, ps] of where)
            if (ps.length > 1) {
              const runs = ps.map((p) => `${p.key} epoch ${p.epoch} on ${p.node}`).join(', ');
              s.doubles.push(`${new Date().toISOString()} ${uid}: ${ps.length} live runs (${runs})`);
            }
          s.seen = panes;
          s.peak = Math.max(s.peak, panes.length);
          s.samples++;
          await new Promise((r) => setTimeout(r, everyMs));
        }
      })();
      s.stop = async () => {
        on = false;
        await loop;
      };
      return s;
    },
    async stop() {
      await Promise.all(all().map((p) => p.kill('SIGKILL')));
      for (const p of all()) live.delete(p);
      for (const n of Object.values(nodes)) {
        await execa('tmux', ['-L', n.socket!, 'kill-server'], { reject: false });
        sockets.delete(n.socket!);
      }
      await store.close().catch(() => undefined);
      if (!opts.cluster) await cluster.stop();
      // Agents hung up with their tmux server take a moment to go (and may write their files meanwhile).
      for (let i = 0; i < 100 && processesIn(dir).length; i++) await new Promise((r) => setTimeout(r, 100));
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
      dirs.delete(dir);
    },
  };
  try {
    // The first control plane leads (the tests know which one to kill); the others stand by.
    if (controllers.length) {
      controllers[0].start();
      await mh.waitFor('the first control plane to lead', async () => (await mh.leader()) === controllers[0]);
    }
    for (const c of controllers.slice(1)) c.start();
    for (const n of Object.values(nodes)) n.start();
    await mh.waitFor(
      'every node Ready',
      async () => {
        const ready = (await store.list('Node')).items.filter((n) =>
          (n.status as Node['status'])?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === opts.nodes.length;
      },
      60_000,
    );
  } catch (e) {
    await mh.stop();
    throw e;
  }
  return mh;
}

/** The simulated coding agent (examples/quickstart) as an Agent: its task as its argument. */
export function simAgent(name = 'sim', stepMs = 100): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Agent',
    metadata: { name },
    spec: {
      command: [process.execPath, SIM_AGENT],
      promptDelivery: 'argument',
      env: [{ name: 'SIM_AGENT_STEP_MS', value: String(stepMs) }],
    },
  } as Resource;
}

/** Where the session is bound and whether its run there is the one the binding asked for. */
export const boundRunning = (s: AgentSession | undefined, node?: string) =>
  !!s?.status?.binding &&
  (node === undefined || s.status.binding.nodeName === node) &&
  s.status.phase === 'Running' &&
  s.status.lifecycle?.epoch === s.status.binding.epoch;
