/**
 * The soak (issue 29): a day of churn compressed into about an hour, under one `orchctl controller`
 * with its retention scaled down by the same factor through its flags (the controller has no fake
 * clock: retention windows are what gets compressed). `npm run bench -- soak --minutes 60`.
 *
 * Load: N sim sessions (`sh -c 'sleep S; exit C'`, restartPolicy Always) that end every 20–60 s and
 * are restarted (one in five fails, and its Warning Events go to a webhook receiver on 127.0.0.1
 * through a NotificationPolicy); every minute a tenth of them are paused (desiredState Stopped) and
 * last minute's paused ones resumed, and a fortieth deleted and replaced by new sessions; every
 * `pipelineEveryMs` (3 minutes) a two-phase Pipeline of the quickstart's sim agent in a git repository,
 * the three newest kept (a person deleting old ones: their sessions go with them).
 * Every `sampleMs` (a minute): controller RSS and V8 heap, store file size and rows per kind and
 * of the change log, event-log bytes, session and run directories on disk, delivered-keys bytes,
 * open fds, tmux sessions, workqueue depth, mean reconcile latency and reconcile errors (/metrics).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Resource } from '../../controller/api/types.js';
import { subdirs } from '../../controller/reconcilers/housekeeping/run-dirs.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { gitRepoWithOneCommit, ORCHCTL, ROOT, tempDir } from '../lib.js';
import type { Bench } from '../types.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const API = 'orchctl.io/v1alpha1';

export interface SoakOptions {
  minutes: number;
  sessions: number;
  sampleMs: number;
  /** Flags for `orchctl controller` (the retention, scaled). */
  retentionFlags: string[];
  /** How long a run of a sim session lasts, shortest and longest, in seconds (default 20–60). */
  runSeconds?: [number, number];
  /** Called with each sample as it is taken. */
  onSample?: (s: SoakSample) => void;
  /** A new Pipeline this often (default 3 minutes); 0: none. */
  pipelineEveryMs?: number;
  /** Called once the churn is over, before the controller is stopped (the shortened soak's checks). */
  atEnd?: (at: SoakEnd) => Promise<void>;
}

export interface SoakEnd {
  home: string;
  /** The controller's pid. */
  pid: number;
  store: SqliteStore;
  /** The sessions that exist now. */
  live: string[];
  sample(): Promise<SoakSample>;
}

export interface SoakSample {
  minute: number;
  rssMB: number;
  heapUsedMB: number;
  storeBytes: number;
  rows: Record<string, number>;
  changeRows: number;
  eventLogBytes: number;
  sessionDirs: number;
  runDirs: number;
  maxRunDirsPerSession: number;
  /** The highest status.run of any session: how many runs the busiest one has had. */
  maxRun: number;
  deliveredKeysBytes: number;
  webhookPosts: number;
  fds: number;
  tmuxSessions: number;
  queueDepth: number;
  reconcileMeanMs: number;
  reconcileErrors: number;
}

/** The retention of a day scaled to an hour (÷24), at the flags' lower bounds where ÷24 is below them. */
export const SCALED_RETENTION = [
  '--event-ttl',
  '2m30s',
  '--notification-retention',
  '5m',
  '--evaluations-per-session',
  '3',
  '--run-dirs-per-session',
  '3',
  '--deleted-session-dir-ttl',
  '2m',
  '--autopilot-session-ttl',
  '7m',
  '--event-log-max-bytes',
  '1Mi',
];

function session(name: string, i: number, workdir: string, [lo, hi]: [number, number]): Resource {
  const secs = lo + (i % (hi - lo + 1));
  const code = i % 5 === 0 ? 1 : 0;
  return {
    apiVersion: API,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {
      agent: { command: ['sh', '-c', `sleep ${secs}; exit ${code}`], promptDelivery: 'none' },
      workdir,
      desiredState: 'Running',
      restartPolicy: 'Always',
      maxRestarts: 1000,
      restartBackoff: { initialDelay: '1s', maxDelay: '2s' },
    },
  };
}

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');
const simAgent: Resource = {
  apiVersion: API,
  kind: 'Agent',
  metadata: { name: 'sim', namespace: 'default' },
  spec: {
    command: [process.execPath, SIM_AGENT],
    promptDelivery: 'argument',
    env: [{ name: 'SIM_AGENT_STEP_MS', value: '100' }],
  },
};

function pipeline(name: string, repo: string): Resource {
  const phase = (n: string) => ({ name: n, template: { agentRef: 'sim', workdir: repo, prompt: `${n} [fast]` } });
  return {
    apiVersion: API,
    kind: 'Pipeline',
    metadata: { name, namespace: 'default' },
    spec: { phases: [phase('build'), phase('test')] },
  };
}

/** Two Projects in one repository and a heuristic Autopilot thinking every 10 s, starting the sim agent there. */
function autopilotWorld(repo: string): Resource[] {
  const labels = { app: 'soak' };
  const project = (name: string): Resource => ({
    apiVersion: API,
    kind: 'Project',
    metadata: { name, namespace: 'default', labels },
    spec: { path: repo, description: `soak project ${name}`, notes: 'Keep it tidy. [fast]' },
  });
  return [
    project('alpha'),
    project('beta'),
    {
      apiVersion: API,
      kind: 'Autopilot',
      metadata: { name: 'soak', namespace: 'default' },
      spec: {
        autonomyLevel: 'full',
        interval: '10s',
        projectSelector: { matchLabels: labels },
        planner: { backend: 'heuristic' },
        sessionTemplate: { agentRef: 'sim', maxDuration: '5m' },
        guardrails: { cooldowns: { sameProject: '0s', sameAction: '0s' }, stalenessDays: 0, maxActiveSessions: 2 },
        // A week of Decisions (168h) scaled by 24: 7 minutes.
        history: { keep: 50, ttl: '7m' },
      },
    },
  ];
}

/** A new Pipeline, and the oldest deleted beyond the newest three. */
async function nextPipeline(store: SqliteStore, made: string[], repo: string): Promise<void> {
  const name = `p-${made.length}`;
  await store.create(pipeline(name, repo));
  made.push(name);
  const old = made.at(-4);
  if (old) await store.delete({ kind: 'Pipeline', namespace: 'default', name: old }).catch(() => undefined);
}

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

function receiver(): Promise<{ url: string; posts: () => number; close(): void }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.end('ok');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/soak`, posts: () => n, close: () => server.close() });
    }),
  );
}

const metric = (text: string, name: string, label?: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name) && /[\s{]/.test(l[name.length] ?? '') && (!label || l.includes(label)))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

const sizeOf = (file: string) => {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
};
const dirBytes = (dir: string) => {
  try {
    return fs.readdirSync(dir).reduce((a, f) => a + sizeOf(path.join(dir, f)), 0);
  } catch {
    return 0;
  }
};

/** What the disk holds under <home>/sessions: event logs, session and run directories. */
function disk(home: string): Pick<SoakSample, 'eventLogBytes' | 'sessionDirs' | 'runDirs' | 'maxRunDirsPerSession'> {
  const root = path.join(home, 'sessions', 'default');
  let eventLogBytes = 0;
  let runDirs = 0;
  let maxRunDirsPerSession = 0;
  const names = subdirs(root);
  for (const s of names) {
    eventLogBytes += sizeOf(path.join(root, s, 'events.jsonl'));
    const runs = subdirs(path.join(root, s)).filter((r) => /^\d+$/.test(r)).length;
    runDirs += runs;
    maxRunDirsPerSession = Math.max(maxRunDirsPerSession, runs);
  }
  return { eventLogBytes, sessionDirs: names.length, runDirs, maxRunDirsPerSession };
}

interface Probe {
  pid: number;
  home: string;
  socket: string;
  metricsUrl: string;
  posts: () => number;
  db: Database.Database;
  last: { sum: number; count: number };
}

async function sample(p: Probe, minute: number): Promise<SoakSample> {
  const text = await fetch(p.metricsUrl)
    .then((r) => r.text())
    .catch(() => '');
  const sum = metric(text, 'controller_runtime_reconcile_time_seconds_sum');
  const count = metric(text, 'controller_runtime_reconcile_time_seconds_count');
  const reconcileMeanMs =
    count > p.last.count ? Math.round(((sum - p.last.sum) / (count - p.last.count)) * 1e4) / 10 : 0;
  p.last = { sum, count };
  const status = fs.readFileSync(`/proc/${p.pid}/status`, 'utf8');
  const rows = Object.fromEntries(
    (p.db.prepare('SELECT kind, count(*) AS n FROM objects GROUP BY kind').all() as { kind: string; n: number }[]).map(
      (r) => [r.kind, r.n],
    ),
  );
  const db = path.join(p.home, 'state.db');
  const tmux = spawnSync('tmux', ['-L', p.socket, 'list-sessions', '-F', '#{session_name}'], { encoding: 'utf8' });
  return {
    minute: Math.round(minute * 100) / 100,
    rssMB: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 102.4) / 10,
    heapUsedMB: Math.round(metric(text, 'nodejs_heap_size_used_bytes') / 104857.6) / 10,
    storeBytes: sizeOf(db) + sizeOf(`${db}-wal`),
    rows,
    maxRun:
      (
        p.db
          .prepare("SELECT max(json_extract(data, '$.status.run')) AS n FROM objects WHERE kind = 'AgentSession'")
          .get() as { n: number | null }
      ).n ?? 0,
    changeRows: (p.db.prepare('SELECT count(*) AS n FROM changes').get() as { n: number }).n,
    ...disk(p.home),
    deliveredKeysBytes: dirBytes(path.join(p.home, 'notifications', 'delivered')),
    webhookPosts: p.posts(),
    fds: fs.readdirSync(`/proc/${p.pid}/fd`).length,
    tmuxSessions: tmux.stdout.split('\n').filter(Boolean).length,
    queueDepth: metric(text, 'workqueue_depth'),
    reconcileMeanMs,
    reconcileErrors: metric(text, 'controller_runtime_reconcile_errors_total'),
  };
}

/** One minute of churn: pause a tenth, resume last minute's paused, replace a fortieth by new sessions. */
async function churn(
  store: SqliteStore,
  live: string[],
  paused: string[],
  next: () => string,
  make: (name: string) => Resource,
) {
  const set = async (name: string, desiredState: string) => {
    const o = await store.get({ kind: 'AgentSession', namespace: 'default', name });
    if (!o) return;
    await store.update({ ...o, spec: { ...(o.spec as object), desiredState } }).catch(() => undefined);
  };
  for (const name of paused.splice(0)) await set(name, 'Running');
  const step = Math.max(1, Math.round(live.length / 10));
  const offset = Math.floor(Math.random() * step);
  for (let i = offset; i < live.length; i += step) {
    paused.push(live[i]);
    await set(live[i], 'Stopped');
  }
  const replace = Math.max(1, Math.round(live.length / 40));
  for (let k = 0; k < replace; k++) {
    const i = Math.floor(Math.random() * live.length);
    if (paused.includes(live[i])) continue;
    await store.delete({ kind: 'AgentSession', namespace: 'default', name: live[i] }).catch(() => undefined);
    const name = next();
    live[i] = name;
    await store.create(make(name));
  }
}

export async function runSoak(o: SoakOptions): Promise<{ samples: SoakSample[]; home: string }> {
  const dir = tempDir('soak');
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const socket = `orchctl-bench-soak-${process.pid}`;
  const port = await freePort();
  const rx = await receiver();
  const env = {
    ...process.env,
    ORCHCTL_HOME: home,
    ORCHCTL_TMUX_SOCKET: socket,
    ORCHCTL_METRICS_ADDR: `127.0.0.1:${port}`,
    SOAK_WEBHOOK: rx.url,
  };
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 200 });
  let ctl: ChildProcess | undefined;
  let db: Database.Database | undefined;
  const samples: SoakSample[] = [];
  try {
    await store.create({
      apiVersion: API,
      kind: 'NotificationChannel',
      metadata: { name: 'ops', namespace: 'default' },
      spec: { type: 'webhook', urlFrom: { env: 'SOAK_WEBHOOK' } },
    });
    await store.create({
      apiVersion: API,
      kind: 'NotificationPolicy',
      metadata: { name: 'default', namespace: 'default' },
      spec: {
        dailyBudget: 100_000,
        route: { channels: ['ops'], tier: 4, routes: [{ matchers: ['type="Warning"'], tier: 1 }] },
      },
    });
    const repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    gitRepoWithOneCommit(repo);
    await store.create(simAgent);
    for (const obj of autopilotWorld(repo)) await store.create(obj);
    ctl = spawn(ORCHCTL, ['controller', '--log-format', 'json', ...o.retentionFlags], {
      env,
      stdio: 'ignore',
    });
    for (let i = 0; i < 400 && !(await store.getLease('orchctl-controller')); i++) await sleep(50);
    let seq = 0;
    const next = () => `s-${seq++}`;
    const live = Array.from({ length: o.sessions }, next);
    const runs = o.runSeconds ?? [20, 60];
    const make = (name: string) => session(name, Number(name.slice(2)), dir, runs);
    await store.txn(live.map((name) => ({ op: 'create' as const, object: make(name) })));
    db = new Database(path.join(home, 'state.db'), { readonly: true, fileMustExist: true });
    const probe: Probe = {
      pid: ctl.pid!,
      home,
      socket,
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
      posts: rx.posts,
      db,
      last: { sum: 0, count: 0 },
    };
    const t0 = Date.now();
    const paused: string[] = [];
    let nextChurn = t0 + 60_000;
    let nextSample = t0 + o.sampleMs;
    const pipelineEvery = o.pipelineEveryMs ?? 180_000;
    let nextPipe = t0 + pipelineEvery;
    const pipelines: string[] = [];
    while (Date.now() - t0 < o.minutes * 60_000) {
      if (ctl.exitCode !== null) throw new Error(`the controller exited (${ctl.exitCode})`);
      if (Date.now() >= nextChurn) {
        await churn(store, live, paused, next, make);
        nextChurn += 60_000;
      }
      if (pipelineEvery > 0 && Date.now() >= nextPipe) {
        await nextPipeline(store, pipelines, repo);
        nextPipe += pipelineEvery;
      }
      if (Date.now() >= nextSample) {
        const s = await sample(probe, (Date.now() - t0) / 60_000);
        samples.push(s);
        o.onSample?.(s);
        nextSample += o.sampleMs;
      }
      await sleep(500);
    }
    await o.atEnd?.({ home, pid: probe.pid, store, live, sample: () => sample(probe, (Date.now() - t0) / 60_000) });
    return { samples, home };
  } finally {
    ctl?.kill('SIGTERM');
    for (let i = 0; i < 100 && ctl && ctl.exitCode === null && ctl.signalCode === null; i++) await sleep(100);
    ctl?.kill('SIGKILL');
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    db?.close();
    await store.close();
    rx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const growthPct = (series: number[]) => {
  const q = Math.max(1, Math.floor(series.length / 4));
  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
  const first = mean(series.slice(0, q));
  return first ? Math.round(((mean(series.slice(-q)) - first) / first) * 1000) / 10 : 0;
};

/** The goals, after a warm-up of a quarter of the run (at least 5 minutes). */
export function judge(samples: SoakSample[]): Record<string, number | boolean> {
  const warm = Math.max(5, samples.length / 4);
  const after = samples.filter((s) => s.minute >= warm);
  const pick = (f: (s: SoakSample) => number) => after.map(f);
  const kinds = [...new Set(samples.flatMap((s) => Object.keys(s.rows)))];
  const maxTableGrowth = Math.max(0, ...kinds.map((k) => growthPct(pick((s) => s.rows[k] ?? 0))));
  return {
    warmupMinutes: Math.round(warm * 10) / 10,
    rssGrowthPct: growthPct(pick((s) => s.rssMB)),
    heapGrowthPct: growthPct(pick((s) => s.heapUsedMB)),
    storeBytesGrowthPct: growthPct(pick((s) => s.storeBytes)),
    maxTableGrowthPct: maxTableGrowth,
    eventLogGrowthPct: growthPct(pick((s) => s.eventLogBytes)),
    fdGrowth: Math.max(...pick((s) => s.fds)) - Math.min(...pick((s) => s.fds)),
    maxQueueDepth: Math.max(...pick((s) => s.queueDepth)),
    reconcileErrors: samples.at(-1)?.reconcileErrors ?? 0,
    maxRunDirsPerSession: Math.max(...samples.map((s) => s.maxRunDirsPerSession)),
  };
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0 || v > 24 * 60) throw new Error(`--${name} must be a number from 0 to 1440`);
  return v;
}

export const soakBench: Bench = {
  name: 'soak',
  description: 'a day of churn in about an hour (--minutes, --sessions): memory, store, disk, fds bounded',
  onlyWhenNamed: true,
  async run() {
    const minutes = arg('minutes', 60);
    const sessions = arg('sessions', 200);
    const { samples } = await runSoak({
      minutes,
      sessions,
      sampleMs: 60_000,
      retentionFlags: SCALED_RETENTION,
      onSample: (s) => process.stdout.write(`${JSON.stringify(s)}\n`),
    });
    const goals = judge(samples);
    const { renderSoakPlots } = await import('./soak-plot.js');
    const pngs = await renderSoakPlots(samples, path.join(ROOT, 'docs/img'));
    return {
      minutes,
      sessions,
      retention: SCALED_RETENTION.join(' '),
      goals,
      plots: pngs.map((p) => path.relative(ROOT, p)),
      samples,
      summary:
        `${sessions} sessions, ${minutes} min: RSS ${goals.rssGrowthPct} %, heap ${goals.heapGrowthPct} %, ` +
        `store ${goals.storeBytesGrowthPct} %, max table ${goals.maxTableGrowthPct} % after warm-up; ` +
        `fds ±${goals.fdGrowth}, max queue ${goals.maxQueueDepth}, reconcile errors ${goals.reconcileErrors}`,
    };
  },
};
