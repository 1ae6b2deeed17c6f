/**
 * /metrics, /healthz and /readyz of a real controller process driving real tmux and git: the
 * values after a scripted scenario (one run succeeds, one fails and restarts once, one keeps
 * running), a deleted session's series disappearing, `promtool check metrics` on the live
 * output, a standby's readiness, loopback-only listening and a clear bind error.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../support/cli.js';
import { parseExposition } from '../support/prom-text.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';
import { freePort, httpGet, promtool, runScenario } from '../support/metrics-helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

async function startWithMetrics(): Promise<number> {
  const port = await freePort();
  h.start(['--metrics-addr', `127.0.0.1:${port}`]);
  await h.waitFor('/readyz 200', async () => (await httpGet(port, '/readyz').catch(() => undefined))?.status === 200);
  return port;
}

const scrape = async (port: number) => {
  const r = await httpGet(port, '/metrics');
  expect(r.status).toBe(200);
  return { text: r.body, x: parseExposition(r.body) };
};

describe('controller metrics', () => {
  it('reflect a scripted scenario, pass promtool, and drop a deleted session', async () => {
    const port = await startWithMetrics();
    await runScenario(h);
    const id = (agentsession: string) => ({ namespace: 'default', agentsession });
    // Phase StateSets: exactly one phase is 1 per session.
    const phasesIn = (x: ReturnType<typeof parseExposition>, name: string) =>
      x
        .find('orchctl_agentsession_status_phase', id(name))
        .filter((s) => s.value === 1)
        .map((s) => s.labels.phase);
    // The metrics are read from the controller's informer cache, which follows the store a moment
    // behind the test's own reads of it (a clean-clone CI run scraped flaky still Running): the first
    // scrape that shows the scenario's end is the one checked.
    let last: Awaited<ReturnType<typeof scrape>> | undefined;
    await h.waitFor('the scrape shows the scenario', async () => {
      const now = await scrape(port);
      const ended = { ok: 'Succeeded', flaky: 'Failed', long: 'Running' };
      if (Object.entries(ended).every(([name, phase]) => phasesIn(now.x, name).join() === phase)) last = now;
      return last !== undefined;
    });
    const { text, x } = last!;
    const phaseOf = (name: string) => phasesIn(x, name);
    expect(phaseOf('ok')).toEqual(['Succeeded']);
    expect(phaseOf('flaky')).toEqual(['Failed']);
    expect(phaseOf('long')).toEqual(['Running']);
    expect(x.find('orchctl_agentsession_status_phase', id('ok'))).toHaveLength(9);

    // Restarts, runs and conditions.
    expect(x.value('orchctl_agentsession_restarts_total', id('flaky'))).toBe(1);
    expect(x.value('orchctl_agentsession_restarts_total', id('ok'))).toBe(0);
    expect(x.value('orchctl_agentsession_run', id('flaky'))).toBe(2);
    const cond = (name: string, condition: string, status: string) =>
      x.value('orchctl_agentsession_status_condition', { ...id(name), condition, status });
    expect(cond('flaky', 'Escalated', 'true')).toBe(1);
    expect(cond('flaky', 'Escalated', 'false')).toBe(0);
    expect(cond('ok', 'Succeeded', 'true')).toBe(1);
    expect(cond('flaky', 'Succeeded', 'false')).toBe(1);
    expect(cond('long', 'Ready', 'true')).toBe(1);
    expect(cond('long', 'PromptDelivered', 'true')).toBe(1);
    expect(x.value('orchctl_agentsession_git_commits', id('ok'))).toBe(1);
    expect(x.value('orchctl_agentsession_git_lines_added', id('ok'))).toBe(2);
    expect(x.value('orchctl_agentsession_git_lines_removed', id('ok'))).toBe(0);
    const started = x.value('orchctl_agentsession_start_time_seconds', id('long'));
    expect(Math.abs(started - Date.now() / 1000)).toBeLessThan(120);
    expect(x.find('orchctl_agentsession_info', id('long'))[0].labels).toMatchObject({
      agent: '',
      project: '',
      uid: (await h.session('long'))!.metadata.uid,
    });

    // Each ended run is observed once: flaky's two failed runs, ok's one.
    const runs = (phase: string) =>
      x.value('orchctl_agentsession_run_duration_seconds_count', { namespace: 'default', phase });
    expect(runs('Failed')).toBe(2);
    expect(runs('Succeeded')).toBe(1);

    // The loop's own metrics.
    expect(
      x.value('controller_runtime_reconcile_total', { controller: 'agentsession', result: 'success' }),
    ).toBeGreaterThan(0);
    expect(
      x.value('controller_runtime_reconcile_total', { controller: 'agentsession', result: 'requeue_after' }),
    ).toBeGreaterThan(0); // flaky's backoff
    expect(x.value('controller_runtime_reconcile_time_seconds_count', { controller: 'agentsession' })).toBeGreaterThan(
      0,
    );
    expect(x.value('workqueue_adds_total', { name: 'agentsession', controller: 'agentsession' })).toBeGreaterThan(0);
    expect(x.value('workqueue_retries_total', { name: 'agentsession', controller: 'agentsession' })).toBeGreaterThan(0);
    expect(
      x.value('workqueue_work_duration_seconds_count', { name: 'agentsession', controller: 'agentsession' }),
    ).toBeGreaterThan(0);
    expect(x.value('controller_runtime_max_concurrent_reconciles', { controller: 'agentsession' })).toBe(16);
    expect(x.value('leader_election_master_status', { name: 'orchctl-controller' })).toBe(1);
    expect(x.find('process_resident_memory_bytes')[0].value).toBeGreaterThan(0);
    // The Node object's status.
    const node = x.find('orchctl_node_memory_available_bytes');
    expect(node).toHaveLength(1);
    expect(node[0].value).toBeGreaterThan(0);
    expect(x.find('orchctl_node_cpus')[0].value).toBeGreaterThan(0);

    // promtool's lint of the live exposition reports nothing.
    const lint = await promtool(['check', 'metrics'], text);
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.exitCode).toBe(0);

    expect((await httpGet(port, '/readyz')).status).toBe(200);
    expect((await httpGet(port, '/healthz')).status).toBe(200);

    // Deleting a session removes every one of its series (the finalizer runs first).
    const del = await h.orchctl(['delete', 'session', 'flaky', '--wait', '--timeout', '30s']);
    expect(del.exitCode, del.stderr).toBe(0);
    await h.waitFor(
      'flaky series gone',
      async () => !(await scrape(port)).x.samples.some((s) => s.labels.agentsession === 'flaky'),
    );
    const after = (await scrape(port)).x;
    expect(after.find('orchctl_agentsession_info', id('ok'))).toHaveLength(1);
    // The histogram keeps what it observed: it counts runs, not live objects.
    expect(
      after.value('orchctl_agentsession_run_duration_seconds_count', { namespace: 'default', phase: 'Failed' }),
    ).toBe(2);
  });

  it('a standby is live but not ready and not leader, and becomes both when it takes over', async () => {
    await startWithMetrics();
    const port2 = await freePort();
    const second = execa(BIN, ['controller', '--log-format', 'json', '--metrics-addr', `127.0.0.1:${port2}`], {
      cwd: ROOT,
      env: h.env,
      extendEnv: false,
      reject: false,
    });
    try {
      await h.waitFor(
        'standby serves /healthz',
        async () => (await httpGet(port2, '/healthz').catch(() => undefined))?.status === 200,
      );
      const ready = await httpGet(port2, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toContain('standing by');
      expect(
        parseExposition((await httpGet(port2, '/metrics')).body).value('leader_election_master_status', {
          name: 'orchctl-controller',
        }),
      ).toBe(0);
      await h.stopController('SIGTERM'); // releases the lease
      await h.waitFor('standby ready', async () => (await httpGet(port2, '/readyz')).status === 200, 15_000);
      expect(
        parseExposition((await httpGet(port2, '/metrics')).body).value('leader_election_master_status', {
          name: 'orchctl-controller',
        }),
      ).toBe(1);
    } finally {
      second.kill('SIGKILL');
      await second;
    }
  });

  it('listens on loopback only, and a taken port is a clear error without a stack trace', async () => {
    const port = await startWithMetrics();
    expect(
      h.controllerLog.some((l) => l.includes(`serving /metrics, /healthz and /readyz on http://127.0.0.1:${port}`)),
    ).toBe(true);
    expect(h.controllerLog.some((l) => l.includes('exposed beyond this host'))).toBe(false);
    // The kernel's table of listening sockets: bound to 127.0.0.1, not 0.0.0.0.
    const listening = fs
      .readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[3] === '0A' && parseInt(f[1].split(':')[1], 16) === port)
      .map((f) => f[1].split(':')[0]);
    expect(listening).toEqual(['0100007F']);
    expect(fs.readFileSync('/proc/net/tcp6', 'utf8')).not.toMatch(
      new RegExp(`:${port.toString(16).toUpperCase().padStart(4, '0')} [0-9A-F:]+ 0A `),
    );

    // Another controller (its own store) asked for the same port.
    const blocked = await execa(BIN, ['controller', '--metrics-addr', `127.0.0.1:${port}`], {
      cwd: ROOT,
      env: { ...h.env, ORCHCTL_HOME: `${h.dir}/other-home` },
      extendEnv: false,
      reject: false,
      timeout: 30_000,
    });
    expect(blocked.exitCode).toBe(1);
    expect(blocked.stderr).toContain(`error: cannot serve metrics on 127.0.0.1:${port}: the address is already in use`);
    expect(blocked.stderr).toContain('--metrics-addr 0');
    expect(blocked.stderr).not.toMatch(/^\s+at /m);
  });

  it('--metrics-addr 0.0.0.0:P serves on every interface and logs a Warning: the metrics leave the host', async () => {
    const port = await freePort();
    h.start(['--metrics-addr', `0.0.0.0:${port}`]);
    await h.waitFor('/readyz 200', async () => (await httpGet(port, '/readyz').catch(() => undefined))?.status === 200);
    const warning = h.controllerLog
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .find((l) => l.msg.includes('exposed beyond this host'));
    expect(warning).toMatchObject({ level: 40 });
    expect(warning?.msg).toContain(`http://0.0.0.0:${port}`);
  });

  it('ORCHCTL_METRICS_ADDR=off serves nothing', async () => {
    h.env.ORCHCTL_METRICS_ADDR = 'off';
    h.start();
    await h.waitFor('leads', async () => h.controllerLog.some((l) => l.includes('acquired the lease')));
    expect(h.controllerLog.some((l) => l.includes('serving /metrics'))).toBe(false);
  });
});
