/**
 * The web console (issue 28) with 1000 sessions in the store, in headless Chromium (Debian's
 * /usr/bin/chromium, playwright-core), against `orchctl console` as its own process:
 *  - first load of the board: navigation start → the 1000th row in the page, and → the board live
 *    (its event stream's first message applied), with the bytes the browser received (CDP);
 *  - update latency: a status write from this process → the row showing it in the page (the write's
 *    wall-clock time is in the status text; a MutationObserver in the page stamps its arrival);
 *  - idle cost: the console process's CPU over a window with 0 open boards, then with 10.
 * No controller runs: the sessions are written straight into the SQLite store, status included.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Resource } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { cpuSeconds, ORCHCTL, percentile, stats, tempDir } from '../lib.js';
import type { Bench } from '../types.js';

const SESSIONS = 1000;
const LOADS = 5;
const UPDATES = 120;
const IDLE_BOARDS = 10;
const IDLE_WINDOW_MS = 30_000;
const CHROMIUM = process.env.ORCHCTL_CHROMIUM ?? '/usr/bin/chromium';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const name = (i: number) => `s-${String(i).padStart(4, '0')}`;

function session(i: number, workdir: string): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: name(i), namespace: 'default', labels: { team: `t${i % 7}` } },
    spec: {
      agent: { command: ['sh', '-c', 'exec sleep 3600'], promptDelivery: 'none' },
      workdir,
      projectRef: `project-${i % 13}`,
      desiredState: 'Running',
    },
  };
}

const status = (i: number, task: string) => ({
  phase: 'Running',
  run: 1,
  agent: { state: i % 5 ? 'busy' : 'idle' },
  report: { currentTask: task },
  context: { percent: i % 100 },
  usage: { costUSD: (i % 50) / 10 },
  binding: { nodeName: 'node-a' },
});

/** The store with SESSIONS Running sessions (one transaction for the objects, then their status). */
async function fill(store: SqliteStore, dir: string): Promise<void> {
  const ids = Array.from({ length: SESSIONS }, (_, i) => i);
  await store.txn(ids.map((i) => ({ op: 'create' as const, object: session(i, dir) })));
  const { items } = await store.list('AgentSession');
  await store.txn(
    items.map((o) => {
      const i = Number(o.metadata.name.slice(2));
      return { op: 'updateStatus' as const, object: { ...o, status: status(i, `task ${i}`) } };
    }),
  );
}

interface Console {
  proc: ChildProcess;
  base: string;
  loginUrl: string;
}

async function startConsole(env: NodeJS.ProcessEnv): Promise<Console> {
  const proc = spawn(process.execPath, [ORCHCTL, 'console', '--port', '0', '--print-url'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const loginUrl = await new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('http'));
      if (line) resolve(line.trim());
    });
    proc.once('exit', (code) => reject(new Error(`orchctl console exited ${code}`)));
  });
  return { proc, base: new URL(loginUrl).origin, loginUrl };
}

/** A browser context logged in (the cookie of one login, shared by every context opened after). */
async function loggedIn(browser: Browser, con: Console): Promise<() => Promise<BrowserContext>> {
  const first = await browser.newContext();
  const page = await first.newPage();
  await page.goto(con.loginUrl);
  await page.waitForURL(`${con.base}/`);
  const cookies = await first.cookies();
  await first.close();
  return async () => {
    const c = await browser.newContext();
    await c.addCookies(cookies);
    return c;
  };
}

/** What the init script records in the page. */
interface Stamps {
  liveAt?: number;
  seen: Record<string, number>;
}

/**
 * Run in every page before its own script: stamps when the board turns live, and when a row showing
 * `bench:<i>:<written at>` arrives (wall clock, as the writer's Date.now()).
 */
function observe(): void {
  const w = window as unknown as Stamps;
  w.seen = {};
  const scan = (n: Node) => {
    const m = /bench:(\d+):/.exec(n.textContent ?? '');
    if (m && !(m[1] in w.seen)) w.seen[m[1]] = performance.timeOrigin + performance.now();
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes' && (r.target as HTMLElement).dataset.live === 'true') w.liveAt ??= performance.now();
      r.addedNodes.forEach(scan);
      if (r.type === 'characterData') scan(r.target);
    }
  }).observe(document, { subtree: true, childList: true, characterData: true, attributeFilter: ['data-live'] });
}

interface Load {
  /** The HTML's last byte (the server's render and the transfer), from Navigation Timing. */
  htmlMs: number;
  /** The document parsed (every row in the DOM: domInteractive) and its first contentful paint. */
  parsedMs: number;
  paintMs: number;
  /** The 1000th row seen by a check run at each animation frame (Playwright's waitForFunction). */
  rowsMs: number;
  liveMs: number;
  bytes: number;
  htmlBytes: number;
  streamBytes: number;
}

/** One first load of the board in a fresh context (cold cache): times from navigation start, bytes from CDP. */
async function firstLoad(context: () => Promise<BrowserContext>, base: string): Promise<Load> {
  const c = await context();
  const page = await c.newPage();
  await page.addInitScript(observe);
  const cdp = await c.newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map<string, string>();
  const received = new Map<string, number>();
  const finished = new Map<string, number>();
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
  // A stream never finishes, and its chunks' encodedDataLength is 0: its bytes are what arrived (no compression).
  cdp.on('Network.dataReceived', (e) =>
    received.set(e.requestId, (received.get(e.requestId) ?? 0) + Math.max(e.encodedDataLength, e.dataLength)),
  );
  cdp.on('Network.loadingFinished', (e) => finished.set(e.requestId, e.encodedDataLength));
  await page.goto(`${base}/`, { waitUntil: 'commit' });
  const rowsMs = await page
    .waitForFunction((n) => document.querySelectorAll('#board tbody tr').length >= n && performance.now(), SESSIONS, {
      polling: 'raf',
      timeout: 60_000,
    })
    .then((h) => h.jsonValue() as Promise<number>);
  await page.locator('#board[data-live="true"]').waitFor({ timeout: 60_000 });
  const liveMs = await page.evaluate(() => (window as unknown as Stamps).liveAt ?? Number.NaN);
  const [htmlMs, parsedMs, paintMs] = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN;
    return [nav.responseEnd, nav.domInteractive, fcp];
  });
  await sleep(300); // the stream's first message has been counted by now
  const bytesOf = (id: string) => finished.get(id) ?? received.get(id) ?? 0;
  const ids = [...urls.keys()];
  const find = (test: (u: string) => boolean) =>
    ids.filter((id) => test(urls.get(id)!)).reduce((n, id) => n + bytesOf(id), 0);
  const load = {
    htmlMs: Math.round(htmlMs),
    parsedMs: Math.round(parsedMs),
    paintMs: Math.round(paintMs),
    rowsMs: Math.round(rowsMs),
    liveMs: Math.round(liveMs),
    bytes: ids.reduce((n, id) => n + bytesOf(id), 0),
    htmlBytes: find((u) => u === `${base}/`),
    streamBytes: find((u) => u.includes('/stream/board')),
  };
  await c.close();
  return load;
}

/** Status writes to one session after another, each stamped with its wall-clock time; their latency to the page. */
async function updates(store: SqliteStore, page: Page): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const o = await store.get({ kind: 'AgentSession', namespace: 'default', name: name((i * 37) % SESSIONS) });
    if (!o) throw new Error(`session ${name((i * 37) % SESSIONS)} is gone`);
    const at = Date.now();
    await store.updateStatus({
      ...o,
      status: { ...(o.status as object), report: { currentTask: `bench:${i}:${at}` } },
    });
    const seen = await page
      .waitForFunction((k) => (window as unknown as Stamps).seen[k], String(i), { timeout: 10_000 })
      .then((h) => h.jsonValue() as Promise<number>);
    latencies.push(seen - at);
    await sleep(20 + Math.random() * 80); // off any beat (the store's 50 ms watch poll)
  }
  return latencies;
}

/** The console process's CPU, in % of one core, over the idle window. */
async function idleCpu(pid: number): Promise<number> {
  await sleep(3000); // what opening (or closing) pages started has settled
  const c0 = cpuSeconds(pid, true);
  await sleep(IDLE_WINDOW_MS);
  return Math.round(((cpuSeconds(pid, true) - c0) / (IDLE_WINDOW_MS / 1000)) * 1000) / 10;
}

async function openBoards(context: () => Promise<BrowserContext>, base: string, n: number): Promise<BrowserContext[]> {
  const contexts: BrowserContext[] = [];
  for (let i = 0; i < n; i++) {
    const c = await context();
    contexts.push(c);
    const page = await c.newPage();
    await page.goto(`${base}/`);
    await page.locator('#board[data-live="true"]').waitFor({ timeout: 60_000 });
  }
  return contexts;
}

async function measure(store: SqliteStore, con: Console, browser: Browser) {
  const context = await loggedIn(browser, con);
  const loads: Load[] = [];
  for (let i = 0; i < LOADS; i++) loads.push(await firstLoad(context, con.base));
  const c = await context();
  const page = await c.newPage();
  await page.addInitScript(observe);
  await page.goto(`${con.base}/`);
  await page.locator('#board[data-live="true"]').waitFor({ timeout: 60_000 });
  const latencies = await updates(store, page);
  await c.close();
  const idleNone = await idleCpu(con.proc.pid!);
  const boards = await openBoards(context, con.base, IDLE_BOARDS);
  const idleTen = await idleCpu(con.proc.pid!);
  for (const b of boards) await b.close();
  return { loads, latencies, idleNone, idleTen };
}

export const consoleBench: Bench = {
  name: 'console',
  description: `web console at ${SESSIONS} sessions in Chromium: first load, update latency, idle CPU of 10 boards`,
  async run() {
    const dir = tempDir('console');
    const home = path.join(dir, 'home');
    fs.mkdirSync(home);
    const socket = `orchctl-bench-console-${process.pid}`;
    const env = { ...process.env, ORCHCTL_HOME: home, ORCHCTL_TMUX_SOCKET: socket, ORCHCTL_METRICS_ADDR: '0' };
    const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 50 });
    let con: Console | undefined;
    let browser: Browser | undefined;
    try {
      await fill(store, dir);
      con = await startConsole(env);
      const root = process.getuid?.() === 0;
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: root ? ['--no-sandbox'] : [] });
      const m = await measure(store, con, browser);
      const pick = (k: keyof Load) => stats(m.loads.map((l) => l[k]));
      const first = {
        htmlMs: pick('htmlMs'),
        parsedMs: pick('parsedMs'),
        paintMs: pick('paintMs'),
        rowsMs: pick('rowsMs'),
        liveMs: pick('liveMs'),
        bytes: pick('bytes'),
      };
      const update = { ...stats(m.latencies), p50: Math.round(percentile(m.latencies, 50) * 10) / 10 };
      const last = m.loads[m.loads.length - 1];
      return {
        sessions: SESSIONS,
        firstLoad: { ...first, htmlBytes: last.htmlBytes, streamBytes: last.streamBytes, runs: m.loads },
        updateLatencyMs: update,
        idleCpuPercentOfOneCore: { boards0: m.idleNone, [`boards${IDLE_BOARDS}`]: m.idleTen },
        summary:
          `first load: HTML ${first.htmlMs.median} ms, parsed ${first.parsedMs.median} ms, ` +
          `${SESSIONS} rows ${first.rowsMs.median} ms, live ${first.liveMs.median} ms, ` +
          `${Math.round(first.bytes.median / 1024)} KiB (medians of ${LOADS}); update p50 ${update.p50} ms ` +
          `p99 ${update.p99} ms (${UPDATES}); idle CPU ${m.idleNone} % with 0 boards, ${m.idleTen} % with ` +
          `${IDLE_BOARDS}`,
      };
    } finally {
      await browser?.close();
      con?.proc.kill('SIGTERM');
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
