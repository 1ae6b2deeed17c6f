/**
 * The metrics module (controller/metrics/) in process: object metrics from real informer caches
 * over a real database file, the controller-runtime metrics fed by a real WorkQueue and
 * Controller, the run-duration histogram's once-per-run rule, the address flag and the HTTP
 * endpoints. The whole controller is exercised in test/integration/metrics.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../controller/api/kinds.js';
import type { Resource } from '../../../controller/api/types.js';
import { escapeLabelValue } from '../../../controller/metrics/family.js';
import {
  ControllerMetrics,
  exposureWarning,
  parseMetricsAddr,
  renderMetrics,
  startMetricsServer,
  type MetricsServer,
} from '../../../controller/metrics/index.js';
import { SESSION_PHASES } from '../../../controller/metrics/sessions.js';
import { Controller } from '../../../controller/runtime/controller.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { WorkQueue } from '../../../controller/runtime/workqueue.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { parseExposition } from '../../support/prom-text.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('object metrics from the informer caches', () => {
  let dir: string;
  let store: SqliteStore;
  let sessions: Informer;
  let nodes: Informer;
  let m: ControllerMetrics;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-metrics-'));
    store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
    sessions = new Informer(store, 'AgentSession');
    nodes = new Informer(store, 'Node');
    await Promise.all([sessions.start(), nodes.start()]);
    m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes,
      processMetrics: false,
    });
  });
  afterEach(async () => {
    sessions.stop();
    nodes.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function session(
    name: string,
    spec: Record<string, unknown>,
    status?: Record<string, unknown>,
    namespace = 'default',
  ): Promise<Resource> {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name, namespace },
      spec,
    });
    return status ? store.updateStatus({ ...o, status }) : o;
  }
  const scrape = async () => parseExposition(await renderMetrics(m.registry));
  const cond = (type: string, status: string) => ({
    type,
    status,
    reason: 'R',
    message: 'free text "never" a label',
    lastTransitionTime: new Date().toISOString(),
  });

  it('phase StateSet, conditions, counters, info, git and timestamps follow status', async () => {
    const start = '2026-01-02T03:04:05.000Z';
    const a = await session(
      'alpha',
      { agentRef: 'claude', projectRef: 'shop', prompt: 'secret prompt text' },
      {
        phase: 'Running',
        run: 3,
        restarts: 2,
        startTime: start,
        observedGeneration: 1,
        git: { commits: 4, insertions: 40, deletions: 7 },
        conditions: [cond('Ready', 'True'), cond('Escalated', 'False'), cond('PromptDelivered', 'Unknown')],
      },
    );
    await session('beta', { agent: { command: ['sh'] }, workdir: '/tmp' }); // no status yet
    await until('cache', () => sessions.list().length === 2);
    const x = await scrape();
    const id = { namespace: 'default', agentsession: 'alpha' };

    expect(x.find('orchctl_agentsession_status_phase', id).map((s) => [s.labels.phase, s.value])).toEqual(
      SESSION_PHASES.map((p) => [p, p === 'Running' ? 1 : 0]),
    );
    // kube_pod_status_phase emits nothing while the phase is empty.
    expect(x.find('orchctl_agentsession_status_phase', { agentsession: 'beta' })).toEqual([]);
    for (const [type, want] of [
      ['Ready', 'true'],
      ['Escalated', 'false'],
      ['PromptDelivered', 'unknown'],
    ])
      for (const status of ['true', 'false', 'unknown'])
        expect(
          x.value('orchctl_agentsession_status_condition', { ...id, condition: type, status }),
          `${type}/${status}`,
        ).toBe(status === want ? 1 : 0);
    expect(x.types.get('orchctl_agentsession_restarts_total')).toBe('counter');
    expect(x.value('orchctl_agentsession_restarts_total', id)).toBe(2);
    expect(x.value('orchctl_agentsession_restarts_total', { agentsession: 'beta' })).toBe(0);
    expect(x.value('orchctl_agentsession_run', id)).toBe(3);
    expect(x.value('orchctl_agentsession_start_time_seconds', id)).toBe(Date.parse(start) / 1000);
    expect(x.value('orchctl_agentsession_git_commits', id)).toBe(4);
    expect(x.value('orchctl_agentsession_git_lines_added', id)).toBe(40);
    expect(x.value('orchctl_agentsession_git_lines_removed', id)).toBe(7);
    expect(x.value('orchctl_agentsession_metadata_generation', id)).toBe(1);
    expect(x.value('orchctl_agentsession_status_observed_generation', id)).toBe(1);
    expect(x.find('orchctl_agentsession_info', id)).toEqual([
      {
        name: 'orchctl_agentsession_info',
        labels: { ...id, agent: 'claude', project: 'shop', uid: a.metadata.uid },
        value: 1,
      },
    ]);
    expect(x.find('orchctl_agentsession_info', { agentsession: 'beta' })[0].labels).toMatchObject({
      agent: '',
      project: '',
    });
    // Bounded labels only: nothing from prompts or messages reaches a label.
    const labelValues = x.samples.flatMap((s) => Object.values(s.labels));
    expect(labelValues.some((v) => v.includes('secret') || v.includes('free text'))).toBe(false);
  });

  it('status.usage becomes token gauges by type and the estimated cost, when priced', async () => {
    const counts = { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 30_000, cacheCreationTokens: 4000 };
    const usage = { run: 2, ...counts, totalTokens: 35_200, model: 'claude-sonnet-4-5', byModel: [] };
    await session(
      'priced',
      { agentRef: 'claude' },
      { phase: 'Running', usage: { ...usage, costUSD: 0.03, priced: true } },
    );
    await session('unpriced', { agentRef: 'claude' }, { phase: 'Running', usage: { ...usage, priced: false } });
    await session('fresh', { agentRef: 'claude' }, { phase: 'Pending' });
    await until('cache', () => sessions.list().length === 3);
    const x = await scrape();
    const id = { namespace: 'default', agentsession: 'priced' };
    const tokens = x.find('orchctl_agentsession_tokens', id).map((s) => [s.labels.type, s.value]);
    expect(Object.fromEntries(tokens)).toEqual({ input: 1000, output: 200, cache_read: 30_000, cache_write: 4000 });
    expect(x.value('orchctl_agentsession_estimated_cost_usd', id)).toBe(0.03);
    expect(x.find('orchctl_agentsession_tokens', { agentsession: 'unpriced' })).toHaveLength(4);
    expect(x.find('orchctl_agentsession_estimated_cost_usd', { agentsession: 'unpriced' })).toEqual([]);
    expect(x.find('orchctl_agentsession_tokens', { agentsession: 'fresh' })).toEqual([]);
  });

  it("a deleted session's series disappear, and status changes show on the next scrape", async () => {
    const o = await session(
      'gone',
      { workdir: '/tmp' },
      { phase: 'Running', restarts: 1, conditions: [cond('Ready', 'True')] },
    );
    await session('stays', { workdir: '/tmp' }, { phase: 'Pending' });
    await until('cache', () => sessions.list().length === 2);
    let x = await scrape();
    expect(x.value('orchctl_agentsession_status_phase', { agentsession: 'gone', phase: 'Running' })).toBe(1);

    await store.updateStatus({
      ...(await store.get({ kind: 'AgentSession', namespace: 'default', name: 'gone' }))!,
      status: { phase: 'Failed', restarts: 1 },
    });
    await until(
      'Failed in cache',
      () => (sessions.get('default', 'gone')?.status as { phase?: string })?.phase === 'Failed',
    );
    x = await scrape();
    expect(x.value('orchctl_agentsession_status_phase', { agentsession: 'gone', phase: 'Failed' })).toBe(1);
    expect(x.value('orchctl_agentsession_status_phase', { agentsession: 'gone', phase: 'Running' })).toBe(0);
    expect(x.find('orchctl_agentsession_status_condition', { agentsession: 'gone' })).toEqual([]);

    await store.delete({ kind: 'AgentSession', namespace: 'default', name: o.metadata.name });
    await until('deleted from cache', () => sessions.list().length === 1);
    x = await scrape();
    expect(x.samples.filter((s) => s.labels.agentsession === 'gone')).toEqual([]);
    expect(x.find('orchctl_agentsession_info', { agentsession: 'stays' })).toHaveLength(1);
  });

  it('Node status becomes orchctl_node_* gauges', async () => {
    const n = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Node',
      metadata: { name: 'host-a' },
      spec: { unschedulable: true },
    });
    await store.updateStatus({
      ...n,
      status: {
        capacity: { cpu: 8, memoryBytes: 16e9, diskBytes: 5e11 },
        free: { memoryBytes: 3e9, diskBytes: 1e11 },
        loadAverage: [0.5, 1.25, 2],
        heartbeatTime: '2026-01-01T00:00:00Z',
      },
    });
    await until('node in cache', () => (nodes.get('', 'host-a')?.status as object | undefined) && true);
    const x = await scrape();
    const node = { node: 'host-a' };
    expect(x.value('orchctl_node_cpus', node)).toBe(8);
    expect([
      x.value('orchctl_node_load1', node),
      x.value('orchctl_node_load5', node),
      x.value('orchctl_node_load15', node),
    ]).toEqual([0.5, 1.25, 2]);
    expect(x.value('orchctl_node_memory_available_bytes', node)).toBe(3e9);
    expect(x.value('orchctl_node_memory_total_bytes', node)).toBe(16e9);
    expect(x.value('orchctl_node_disk_free_bytes', node)).toBe(1e11);
    expect(x.value('orchctl_node_disk_total_bytes', node)).toBe(5e11);
    expect(x.value('orchctl_node_heartbeat_time_seconds', node)).toBe(Date.parse('2026-01-01T00:00:00Z') / 1000);
    expect(x.value('orchctl_node_spec_unschedulable', node)).toBe(1);
  });

  it('the text rendering and getMetricsAsJSON agree, and renderMetrics equals registry.metrics()', async () => {
    await session(
      's1',
      { workdir: '/tmp' },
      { phase: 'Backoff', restarts: 1, conditions: [cond('Ready', 'False')] },
      'team-a',
    );
    await until('cache', () => sessions.list().length === 1);
    const text = await renderMetrics(m.registry);
    expect(text).toBe(await m.registry.metrics());
    const x = parseExposition(text);
    for (const fam of await m.registry.getMetricsAsJSON()) {
      if (!fam.name.startsWith('orchctl_agentsession') || fam.name.includes('run_duration')) continue;
      const fromText = x.samples.filter((s) => s.name === fam.name).map((s) => ({ labels: s.labels, value: s.value }));
      expect(fromText, fam.name).toEqual(fam.values.map((v) => ({ labels: v.labels, value: v.value })));
    }
  });

  it('escapes label values as the text format requires', () => {
    expect(escapeLabelValue('plain-name')).toBe('plain-name');
    const odd = 'a"b\\c\nd';
    const x = parseExposition(`m{l="${escapeLabelValue(odd)}"} 1\n`);
    expect(x.samples[0].labels.l).toBe(odd);
  });
});

describe('controller-runtime metrics from a real WorkQueue and Controller', () => {
  it('counts reconciles by result, errors, retries, adds, and sets the gauges', async () => {
    const m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions: { list: () => [], onChange: () => undefined },
      nodes: { list: () => [] },
      processMetrics: false,
    });
    const x0 = parseExposition(await renderMetrics(m.registry));
    const c = { controller: 'agentsession' };
    // Pre-initialised like controller-runtime: every result has a series from the first scrape.
    for (const result of ['success', 'error', 'requeue', 'requeue_after'])
      expect(x0.value('controller_runtime_reconcile_total', { ...c, result })).toBe(0);
    expect(x0.value('leader_election_master_status', { name: 'orchctl-controller' })).toBe(0);

    const q = new WorkQueue('agentsession', undefined, m.runtime.queueHooks);
    let failOnce = true;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const ctl = new Controller(
      'agentsession',
      q,
      {
        async reconcile(key) {
          if (key === 'ns/fail' && failOnce) {
            failOnce = false;
            throw new Error('boom');
          }
          if (key === 'ns/later') return { requeueAfterMs: 60_000 };
          if (key === 'ns/slow') await blocked;
        },
      },
      { workers: 2, log: () => undefined, metrics: m.runtime.controllerHooks },
    );
    m.runtime.setMaxConcurrentReconciles(2);
    m.runtime.setLeader(true);
    q.add('ns/ok');
    q.add('ns/ok'); // deduplicated: one add
    q.add('ns/fail');
    q.add('ns/later');
    ctl.start();
    await until(
      'fail retried',
      async () =>
        parseExposition(await renderMetrics(m.registry)).value('controller_runtime_reconcile_total', {
          ...c,
          result: 'success',
        }) >= 2,
    );
    q.add('ns/slow');
    await sleep(30);
    const busy = parseExposition(await renderMetrics(m.registry));
    const qc = { name: 'agentsession', controller: 'agentsession' };
    expect(busy.value('controller_runtime_active_workers', c)).toBe(1);
    expect(busy.value('workqueue_longest_running_processor_seconds', qc)).toBeGreaterThan(0.01);
    expect(busy.value('workqueue_unfinished_work_seconds', qc)).toBeGreaterThan(0.01);
    release();
    await until('idle', () => q.busy() === 0);
    await ctl.stop();

    const x = parseExposition(await renderMetrics(m.registry));
    expect(x.value('controller_runtime_reconcile_total', { ...c, result: 'error' })).toBe(1);
    expect(x.value('controller_runtime_reconcile_errors_total', c)).toBe(1);
    expect(x.value('controller_runtime_reconcile_total', { ...c, result: 'requeue_after' })).toBe(1);
    // ok, fail's retry, slow
    expect(x.value('controller_runtime_reconcile_total', { ...c, result: 'success' })).toBe(3);
    expect(x.value('controller_runtime_reconcile_time_seconds_count', c)).toBe(5);
    expect(x.value('controller_runtime_reconcile_time_seconds_bucket', { ...c, le: '60' })).toBe(5);
    expect(x.value('workqueue_adds_total', qc)).toBe(5); // ok, fail, later, fail (retry), slow
    expect(x.value('workqueue_retries_total', qc)).toBe(2); // the rate-limited retry and the RequeueAfter
    expect(x.value('workqueue_queue_duration_seconds_count', qc)).toBe(5);
    expect(x.value('workqueue_work_duration_seconds_count', qc)).toBe(5);
    expect(x.value('workqueue_work_duration_seconds_bucket', { ...qc, le: '1e-8' })).toBe(0);
    expect(x.value('workqueue_depth', qc)).toBe(0);
    expect(x.value('workqueue_unfinished_work_seconds', qc)).toBe(0);
    expect(x.value('controller_runtime_active_workers', c)).toBe(0);
    expect(x.value('controller_runtime_max_concurrent_reconciles', c)).toBe(2);
    expect(x.value('leader_election_master_status', { name: 'orchctl-controller' })).toBe(1);
    // workqueue's ExponentialBuckets(1e-8, 10, 12) and controller-runtime's reconcile buckets.
    expect(x.find('workqueue_queue_duration_seconds_bucket').map((s) => s.labels.le)).toEqual([
      '1e-8',
      '1e-7',
      '0.000001',
      '0.00001',
      '0.0001',
      '0.001',
      '0.01',
      '0.1',
      '1',
      '10',
      '100',
      '1000',
      '+Inf',
    ]);
    expect(x.find('controller_runtime_reconcile_time_seconds_bucket')).toHaveLength(41);
  });
});

describe('run durations', () => {
  it('observes each ended run once, however often its end is reported', async () => {
    const m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'l',
      sessions: { list: () => [], onChange: () => undefined },
      nodes: { list: () => [] },
      processMetrics: false,
    });
    const s = { metadata: { name: 'a', namespace: 'default', uid: 'u-1' } } as AgentSession;
    m.runs.onRunEnded(s, 1, 'Failed', 12);
    m.runs.onRunEnded(s, 1, 'Failed', 12); // a retried reconcile repeating the transition
    m.runs.onRunEnded(s, 2, 'Succeeded', 400);
    const x = parseExposition(await renderMetrics(m.registry));
    const d = { namespace: 'default' };
    expect(x.value('orchctl_agentsession_run_duration_seconds_count', { ...d, phase: 'Failed' })).toBe(1);
    expect(x.value('orchctl_agentsession_run_duration_seconds_sum', { ...d, phase: 'Failed' })).toBe(12);
    expect(x.value('orchctl_agentsession_run_duration_seconds_bucket', { ...d, phase: 'Succeeded', le: '300' })).toBe(
      0,
    );
    expect(x.value('orchctl_agentsession_run_duration_seconds_bucket', { ...d, phase: 'Succeeded', le: '600' })).toBe(
      1,
    );
    // A session recreated under the same name has a new uid: its run 1 counts.
    m.runs.onRunEnded({ metadata: { name: 'a', namespace: 'default', uid: 'u-2' } } as AgentSession, 1, 'Failed', 3);
    expect(
      parseExposition(await renderMetrics(m.registry)).value('orchctl_agentsession_run_duration_seconds_count', {
        ...d,
        phase: 'Failed',
      }),
    ).toBe(2);
  });
});

describe('--metrics-addr', () => {
  it('parses HOST:PORT, a bare port, IPv6, and the ways to turn it off', () => {
    expect(parseMetricsAddr('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseMetricsAddr('9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(parseMetricsAddr('[::1]:9464')).toEqual({ host: '::1', port: 9464 });
    expect(parseMetricsAddr('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseMetricsAddr('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    for (const off of ['0', 'off', 'OFF', '']) expect(parseMetricsAddr(off)).toBeUndefined();
  });
  it('refuses what it cannot read, and ":PORT" (every interface must be spelled out)', () => {
    expect(() => parseMetricsAddr(':9464')).toThrow(/HOST:PORT.*0\.0\.0\.0:9464/);
    expect(() => parseMetricsAddr('host:port')).toThrow(/HOST:PORT/);
    expect(() => parseMetricsAddr('127.0.0.1:70000')).toThrow(/0-65535/);
  });
  it('warns of every address but loopback that the metrics are exposed beyond this host', () => {
    for (const local of ['127.0.0.1:9464', '127.8.0.1:1', '[::1]:9464', 'localhost:9464', '9464'])
      expect(exposureWarning(parseMetricsAddr(local)!), local).toBeUndefined();
    for (const wide of ['0.0.0.0:9464', '[::]:9464', '10.1.2.3:9464', 'metrics.example:9464'])
      expect(exposureWarning(parseMetricsAddr(wide)!), wide).toMatch(/exposed beyond this host/);
  });
});

describe('the metrics server', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const get = (port: number, p: string, method = 'GET') =>
    new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: p, method }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('serves /metrics, /healthz, and /readyz following readiness, on loopback', async () => {
    const m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'l',
      sessions: { list: () => [], onChange: () => undefined },
      nodes: { list: () => [] },
    });
    let ready = false;
    server = await startMetricsServer({ host: '127.0.0.1', port: 0 }, m.registry, () => ({
      ready,
      reason: ready ? 'leading' : 'standing by',
    }));
    const { port, host } = server.address;
    expect(host).toBe('127.0.0.1');
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(parseExposition(metrics.body).find('process_cpu_seconds_total')).toHaveLength(1);
    expect((await get(port, '/healthz')).status).toBe(200);
    expect(await get(port, '/readyz')).toMatchObject({ status: 503, body: 'not ready: standing by\n' });
    ready = true;
    expect(await get(port, '/readyz')).toMatchObject({ status: 200, body: 'ok: leading\n' });
    expect((await get(port, '/nope')).status).toBe(404);
    expect((await get(port, '/metrics', 'POST')).status).toBe(405);
    expect(await get(port, '/metrics', 'HEAD')).toMatchObject({ status: 200, body: '' });
  });

  it('a port in use gives a clear error naming the address and the flag', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const m = new ControllerMetrics({
        controller: 'c',
        leaseName: 'l',
        sessions: { list: () => [], onChange: () => undefined },
        nodes: { list: () => [] },
        processMetrics: false,
      });
      await expect(
        startMetricsServer({ host: '127.0.0.1', port }, m.registry, () => ({ ready: true, reason: '' })),
      ).rejects.toThrow(
        `cannot serve metrics on 127.0.0.1:${port}: the address is already in use ` +
          '(another controller or program listens there); choose another address with ' +
          '--metrics-addr HOST:PORT (or ORCHCTL_METRICS_ADDR), or turn the server off with --metrics-addr 0',
      );
    } finally {
      blocker.close();
    }
  });
});
