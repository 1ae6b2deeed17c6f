/**
 * /metrics cost with many sessions, and whether scraping slows the reconcile loop down:
 *  - render in process: the controller's registry (process metrics included) over real informer
 *    caches of 1000 AgentSessions with realistic statuses, read from a real database file
 *    (goal ≤ 50 ms per render);
 *  - scrapes over HTTP from a real controller process holding those 1000 sessions;
 *  - scrape under load: 100 sessions applied at once to a controller that already holds 1000,
 *    time until all are Running — unscraped, scraped every second (an eager Prometheus; the
 *    default is every 15 s) and scraped back to back the whole time — and the scrape latencies
 *    meanwhile. Goal: the loop never stalls; a scrape may wait, reconciles should not.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Resource } from '../../controller/api/types.js';
import { ControllerMetrics, renderMetrics } from '../../controller/metrics/index.js';
import { Informer } from '../../controller/runtime/informer.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { cpuSeconds, ORCHCTL, stats, tempDir, gitRepoWithOneCommit } from '../lib.js';
import type { Bench } from '../types.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const N = 1000;
const BURST = 100;
const ROUNDS = 4;

/** An ended session as the controller leaves it: conditions, git progress, an output tail. */
function endedSession(i: number, workdir: string): Resource {
  const name = `done-${String(i).padStart(4, '0')}`;
  const failed = i % 4 === 0;
  const start = Date.now() - 3_600_000 + i * 1000;
  const cond = (type: string, status: 'True' | 'False' | 'Unknown', reason: string) => ({
    type,
    status,
    reason,
    message: `${type} ${reason}`,
    lastTransitionTime: new Date(start).toISOString(),
    observedGeneration: 1,
  });
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: {
      name,
      namespace: i % 10 === 0 ? 'team-b' : 'default',
      labels: { team: i % 2 ? 'web' : 'api' },
      finalizers: ['orchctl.io/session-cleanup'],
    },
    spec: {
      agentRef: 'claude',
      projectRef: `project-${i % 20}`,
      prompt: `Task ${i}: make the tests pass.`,
      restartPolicy: 'Never',
    },
    status: {
      observedGeneration: 1,
      phase: failed ? 'Failed' : 'Succeeded',
      run: 1 + (i % 3),
      restarts: i % 3,
      startTime: new Date(start).toISOString(),
      completionTime: new Date(start + 600_000).toISOString(),
      exitCode: failed ? 1 : 0,
      reason: failed ? 'Error' : 'Completed',
      message: failed ? 'agent exited with code 1' : 'agent exited with code 0, 3 commits',
      tmuxSession: `default_${name}_0000abcd`,
      workdir,
      workspace: path.join(workdir, name),
      lastOutput: 'x'.repeat(1900),
      headBefore: 'a'.repeat(40),
      git: {
        head: 'b'.repeat(40),
        branch: 'main',
        commits: i % 7,
        insertions: i * 3,
        deletions: i,
        filesChanged: i % 9,
      },
      lifecycle: { runGeneration: 1 },
      conditions: [
        cond('Admitted', 'True', 'Admitted'),
        cond('PromptDelivered', 'True', 'DeliveredByArgument'),
        cond('Ready', 'False', failed ? 'Error' : 'Completed'),
        cond('Succeeded', failed ? 'False' : 'True', failed ? 'Error' : 'Completed'),
        ...(failed ? [cond('Escalated', 'True', 'RetryLimitReached')] : []),
      ],
    },
  };
}

/** A store file holding N ended sessions (create, then their statuses, as the controller writes them). */
async function filledStore(dir: string): Promise<SqliteStore> {
  const home = path.join(dir, 'home');
  fs.mkdirSync(home, { recursive: true });
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 5 });
  const objs = Array.from({ length: N }, (_, i) => endedSession(i, dir));
  const created = await store.txn(objs.map((object) => ({ op: 'create' as const, object })));
  await store.txn(created.map((c, i) => ({ op: 'updateStatus' as const, object: { ...c, status: objs[i].status } })));
  return store;
}

async function renderInProcess(): Promise<Record<string, unknown>> {
  const dir = tempDir('metrics-render');
  const store = await filledStore(dir);
  const node: Resource = { apiVersion: 'orchctl.io/v1alpha1', kind: 'Node', metadata: { name: 'bench' }, spec: {} };
  const n = await store.create(node);
  await store.updateStatus({
    ...n,
    status: {
      capacity: { cpu: 8, memoryBytes: 2 ** 34, diskBytes: 2 ** 40 },
      free: { memoryBytes: 2 ** 33, diskBytes: 2 ** 39 },
      loadAverage: [1, 1, 1],
      heartbeatTime: new Date().toISOString(),
    },
  });
  const sessions = new Informer(store, 'AgentSession');
  const nodes = new Informer(store, 'Node');
  try {
    await Promise.all([sessions.start(), nodes.start()]);
    if (sessions.list().length !== N) throw new Error(`cache holds ${sessions.list().length} sessions, expected ${N}`);
    const m = new ControllerMetrics({ controller: 'agentsession', leaseName: 'orchctl-controller', sessions, nodes });
    for (let i = 0; i < 5; i++) await renderMetrics(m.registry); // warm-up: JIT, first allocations
    const times: number[] = [];
    let text = '';
    for (let i = 0; i < 50; i++) {
      const t0 = performance.now();
      text = await renderMetrics(m.registry);
      times.push(performance.now() - t0);
    }
    const series = text.split('\n').filter((l) => l && !l.startsWith('#')).length;
    return { sessions: N, series, bytes: text.length, renderMs: stats(times) };
  } finally {
    sessions.stop();
    nodes.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- a real controller ----------------------------------------------------------------------

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const agent = new http.Agent({ keepAlive: true }); // Prometheus keeps its connection open too

function get(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

interface Ctl {
  dir: string;
  store: SqliteStore;
  socket: string;
  port: number;
  proc: ChildProcess;
  env: NodeJS.ProcessEnv;
}

async function startController(name: string): Promise<Ctl> {
  const dir = tempDir(`metrics-${name}`);
  gitRepoWithOneCommit(dir);
  const store = await filledStore(dir);
  const socket = `orchctl-bench-metrics-${name}-${process.pid}`;
  const port = await freePort();
  const env = { ...process.env, ORCHCTL_HOME: path.join(dir, 'home'), ORCHCTL_TMUX_SOCKET: socket };
  const proc = spawn(ORCHCTL, ['controller', '--log-format', 'json', '--metrics-addr', `127.0.0.1:${port}`], {
    env,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const c = { dir, store, socket, port, proc, env };
  for (let i = 0; i < 300; i++) {
    const r = await get(port, '/readyz').catch(() => undefined);
    if (r?.status === 200) return c;
    await sleep(50);
  }
  await stopController(c);
  throw new Error('the controller did not become ready');
}

async function stopController(c: Ctl): Promise<void> {
  c.proc.kill('SIGKILL');
  spawnSync('tmux', ['-L', c.socket, 'kill-server']);
  await c.store.close();
  fs.rmSync(c.dir, { recursive: true, force: true });
}

async function scrapeOverHttp(): Promise<Record<string, unknown>> {
  const c = await startController('http');
  try {
    await sleep(2000); // let the start-up pass over the 1000 sessions finish
    for (let i = 0; i < 3; i++) await get(c.port, '/metrics');
    const times: number[] = [];
    let bytes = 0;
    const cpu0 = cpuSeconds(c.proc.pid!);
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      const r = await get(c.port, '/metrics');
      times.push(performance.now() - t0);
      bytes = r.body.length;
    }
    // The controller's CPU for 30 back-to-back scrapes of an otherwise idle controller.
    const cpuMsPerScrape = Math.round(((cpuSeconds(c.proc.pid!) - cpu0) / 30) * 1000 * 10) / 10;
    return { sessions: N, bytes, scrapeMs: stats(times), controllerCpuMsPerScrape: cpuMsPerScrape };
  } finally {
    await stopController(c);
  }
}

/** Applies BURST sleeping sessions at once; resolves with ms until all are Running. */
async function burst(c: Ctl): Promise<number> {
  const names = new Set(Array.from({ length: BURST }, (_, i) => `burst-${String(i).padStart(3, '0')}`));
  const running = new Set<string>();
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const w = c.store.watch({ kind: 'AgentSession', fromRevision: await c.store.revision() }, (ev) => {
    const n = ev.object.metadata.name;
    if (names.has(n) && (ev.object.status as { phase?: string } | undefined)?.phase === 'Running') {
      running.add(n);
      if (running.size === names.size) done();
    }
  });
  const t0 = Date.now();
  await c.store.txn(
    [...names].map((name) => ({
      op: 'create' as const,
      object: {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name, namespace: 'default' },
        spec: { agent: { command: ['sh', '-c', 'sleep 3600'], promptDelivery: 'none' }, workdir: c.dir },
      },
    })),
  );
  const ok = await Promise.race([all.then(() => true), sleep(120_000).then(() => false)]);
  w.close();
  if (!ok) throw new Error(`only ${running.size}/${BURST} sessions reached Running within 120 s`);
  return Date.now() - t0;
}

type Scraping = 'none' | 'every1s' | 'backToBack';
const SCRAPING: Scraping[] = ['none', 'every1s', 'backToBack'];

/** The controller's longest event-loop delay since the previous scrape (prom-client resets it on each). */
const loopMaxMs = (body: string) => Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(body)?.[1] ?? NaN) * 1000;

async function scrapeUnderLoad(): Promise<Record<string, unknown>> {
  const burstMs: Record<Scraping, number[]> = { none: [], every1s: [], backToBack: [] };
  const latencies: Record<Scraping, number[]> = { none: [], every1s: [], backToBack: [] };
  const loopMax: Record<Scraping, number[]> = { none: [], every1s: [], backToBack: [] };
  // Rotate through the variants so drift on the machine hits all of them alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const scraping of SCRAPING) {
      const c = await startController(`load-${round}-${scraping}`);
      try {
        await sleep(2000); // start-up pass over the 1000 ended sessions
        await get(c.port, '/metrics'); // resets the event-loop delay histogram
        let stop = false;
        let worst = 0;
        const scraper = (async () => {
          while (scraping !== 'none' && !stop) {
            const t0 = performance.now();
            const r = await get(c.port, '/metrics');
            const ms = performance.now() - t0;
            latencies[scraping].push(ms);
            worst = Math.max(worst, loopMaxMs(r.body));
            if (scraping === 'every1s') await sleep(Math.max(0, 1000 - ms));
          }
        })();
        burstMs[scraping].push(await burst(c));
        stop = true;
        await scraper;
        // The longest the controller's event loop was held up during the burst (and the scrapes).
        loopMax[scraping].push(Math.max(worst, loopMaxMs((await get(c.port, '/metrics')).body)));
      } finally {
        await stopController(c);
      }
    }
  }
  const median = (xs: number[]) => stats(xs).median;
  return {
    sessionsInCache: N,
    burst: BURST,
    rounds: ROUNDS,
    burstToRunningMs: {
      withoutScraping: stats(burstMs.none),
      scrapedEverySecond: stats(burstMs.every1s),
      scrapedBackToBack: stats(burstMs.backToBack),
    },
    slowdownRatio: {
      scrapedEverySecond: Math.round((median(burstMs.every1s) / median(burstMs.none)) * 100) / 100,
      scrapedBackToBack: Math.round((median(burstMs.backToBack) / median(burstMs.none)) * 100) / 100,
    },
    maxEventLoopDelayDuringBurstMs: {
      withoutScraping: stats(loopMax.none),
      scrapedEverySecond: stats(loopMax.every1s),
      scrapedBackToBack: stats(loopMax.backToBack),
    },
    scrapeLatencyUnderLoadMs: {
      scrapedEverySecond: stats(latencies.every1s),
      scrapedBackToBack: stats(latencies.backToBack),
    },
  };
}

export const metricsBench: Bench = {
  name: 'metrics',
  description: `/metrics render with ${N} sessions (in process, over HTTP), and scrapes in a ${BURST}-session burst`,
  async run() {
    const render = await renderInProcess();
    const http1 = await scrapeOverHttp();
    const load = await scrapeUnderLoad();
    const r = render.renderMs as ReturnType<typeof stats>;
    const h = http1.scrapeMs as ReturnType<typeof stats>;
    const b = load.burstToRunningMs as Record<
      'withoutScraping' | 'scrapedEverySecond' | 'scrapedBackToBack',
      ReturnType<typeof stats>
    >;
    const loop = load.maxEventLoopDelayDuringBurstMs as Record<
      'withoutScraping' | 'scrapedEverySecond' | 'scrapedBackToBack',
      ReturnType<typeof stats>
    >;
    const lat = load.scrapeLatencyUnderLoadMs as Record<
      'scrapedEverySecond' | 'scrapedBackToBack',
      ReturnType<typeof stats>
    >;
    return {
      render,
      http: http1,
      underLoad: load,
      goals: {
        render: `median ${r.median} ms, p99 ${r.p99} ms for ${N} sessions (goal ≤ 50 ms)`,
        underLoad:
          `${BURST} sessions → Running (median): ${b.withoutScraping.median} ms unscraped, ` +
          `${b.scrapedEverySecond.median} ms scraped every second, ` +
          `${b.scrapedBackToBack.median} ms scraped back to back; ` +
          'longest event-loop delay (median of rounds) ' +
          `${loop.withoutScraping.median} / ${loop.scrapedEverySecond.median} / ${loop.scrapedBackToBack.median} ms ` +
          '(goal: no stall); ' +
          `scrape latency meanwhile median ${lat.scrapedEverySecond.median} / ${lat.scrapedBackToBack.median} ms`,
      },
      summary:
        `render ${N} sessions median ${r.median} ms (p99 ${r.p99}); ` +
        `HTTP scrape median ${h.median} ms, ${http1.controllerCpuMsPerScrape} ms controller CPU; ` +
        `${BURST}-session burst ${b.withoutScraping.median} ms, ${b.scrapedEverySecond.median} ms scraped every 1 s, ` +
        `${b.scrapedBackToBack.median} ms back to back`,
    };
  },
};
