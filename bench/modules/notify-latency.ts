/**
 * Notification latency: a tier-1 Warning Event (Escalated) written to the store by this process,
 * as any reconciler writes one, until a webhook receiver on 127.0.0.1 has the message — through a
 * real controller process, its notifier's outbox transaction and the delivery controller (goal:
 * p99 ≤ 1 s; Alertmanager's default group_wait alone is 30 s).
 *
 * Baseline, in the same run and on the same Events: a minimal notifier in its own process that
 * watches the same store with the controller's poll interval and POSTs each new Event at once,
 * with no routing, no outbox and no retries. The ratio is what the outbox and routing cost.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { ORCHCTL, ROOT, stats, tempDir } from '../lib.js';
import type { Bench } from '../types.js';

const EVENTS = 60;
const SPACING_MS = 150;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The baseline: watch Events from another process and POST each one, nothing else. */
const BASELINE = `
const { SqliteStore } = await import(process.argv[1]);
const store = new SqliteStore(process.argv[2], { pollIntervalMs: 50 });
const rev = await store.revision();
store.watch({ kind: 'Event', fromRevision: rev }, (ev) => {
  if (ev.type !== 'ADDED') return;
  void fetch(process.argv[3], { method: 'POST', body: JSON.stringify({ title: ev.object.involvedObject.name }) });
});
setInterval(() => {}, 1 << 30); // the store's poll timer is unref'd: keep the process alive
`;

function receiver(): Promise<{ url: string; arrivals: Map<string, number>; close(): void }> {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = Date.now();
      const title = String((JSON.parse(body) as { title?: string }).title ?? '');
      const name = title.split('/').pop()!;
      arrivals.set(`${req.url}:${name}`, at);
      res.end('ok');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}`, arrivals, close: () => server.close() });
    }),
  );
}

export const notifyLatencyBench: Bench = {
  name: 'notify-latency',
  description: 'tier-1 Warning Event → webhook receiver through the notifier (p50/p99), vs a bare watch-and-POST',
  async run() {
    const dir = tempDir('notify');
    const home = path.join(dir, 'home');
    fs.mkdirSync(home, { recursive: true });
    const db = path.join(home, 'state.db');
    const socket = `orchctl-bench-notify-${process.pid}`;
    const rx = await receiver();
    const store = new SqliteStore(db, { pollIntervalMs: 5 });
    const children: ChildProcess[] = [];
    try {
      await store.create({
        apiVersion: API_VERSION,
        kind: 'NotificationChannel',
        metadata: { name: 'ops', namespace: 'default' },
        spec: { type: 'webhook', urlFrom: { env: 'OPS_WEBHOOK' } },
      });
      await store.create({
        apiVersion: API_VERSION,
        kind: 'NotificationPolicy',
        metadata: { name: 'default', namespace: 'default' },
        spec: {
          dailyBudget: 10_000,
          route: { channels: ['ops'], tier: 4, routes: [{ matchers: ['reason="Escalated"'], tier: 1 }] },
        },
      });
      const env = {
        ...process.env,
        ORCHCTL_HOME: home,
        ORCHCTL_TMUX_SOCKET: socket,
        ORCHCTL_METRICS_ADDR: '0',
        OPS_WEBHOOK: `${rx.url}/orchctl`,
      };
      children.push(spawn(ORCHCTL, ['controller', '--log-format', 'json'], { env, stdio: 'ignore' }));
      const storeModule = path.join(ROOT, 'dist/controller/store/sqlite.js');
      children.push(
        spawn(process.execPath, ['--input-type=module', '-e', BASELINE, storeModule, db, `${rx.url}/baseline`], {
          stdio: 'ignore',
        }),
      );
      // Warm-up: one Event through both, so neither pays its start-up inside the figures.
      const recorder = new EventRecorder(store, 'bench');
      const about = (name: string): Resource => ({
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name, namespace: 'default', uid: `uid-${name}` },
      });
      await recorder.record(about('warmup'), 'Warning', 'Escalated', 'warm-up');
      for (let i = 0; i < 300 && !(rx.arrivals.has('/orchctl:warmup') && rx.arrivals.has('/baseline:warmup')); i++)
        await sleep(100);
      if (!rx.arrivals.has('/orchctl:warmup')) throw new Error('the controller never delivered the warm-up Event');

      const sentAt = new Map<string, number>();
      for (let i = 0; i < EVENTS; i++) {
        const name = `s${i}`;
        sentAt.set(name, Date.now());
        await recorder.record(about(name), 'Warning', 'Escalated', `run ${i} gave up`);
        // Spaced, with jitter, so the Events do not fall in step with the 50 ms poll.
        await sleep(SPACING_MS + Math.random() * 50);
      }
      for (let i = 0; i < 100 && [...sentAt.keys()].some((n) => !rx.arrivals.has(`/orchctl:${n}`)); i++)
        await sleep(100);
      const lat = (route: string) =>
        [...sentAt].flatMap(([n, t]) => {
          const a = rx.arrivals.get(`${route}:${n}`);
          return a === undefined ? [] : [a - t];
        });
      const orchctl = stats(lat('/orchctl'));
      const baseline = stats(lat('/baseline'));
      const delivered = lat('/orchctl').length;
      const ratio = (a: number, b: number) => Math.round((a / Math.max(1, b)) * 10) / 10;
      return {
        events: EVENTS,
        delivered,
        orchctlMs: orchctl,
        baselineMs: baseline,
        p50Ratio: ratio(orchctl.median, baseline.median),
        p99Ratio: ratio(orchctl.p99, baseline.p99),
        summary:
          `${delivered}/${EVENTS} delivered; Event → webhook p50 ${orchctl.median} ms, p99 ${orchctl.p99} ms ` +
          `(bare watch-and-POST p50 ${baseline.median} ms, p99 ${baseline.p99} ms; ` +
          `${ratio(orchctl.median, baseline.median)}× / ${ratio(orchctl.p99, baseline.p99)}×; goal p99 ≤ 1000 ms)`,
      };
    } finally {
      for (const c of children) c.kill('SIGKILL');
      spawnSync('tmux', ['-L', socket, 'kill-server']);
      rx.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
