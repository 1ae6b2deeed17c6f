/**
 * The monitoring manifests against the real thing (Debian's `prometheus` package):
 *  - promtool checks the scrape config and the alert rules, and runs their unit tests;
 *  - a real Prometheus on loopback (temp data dir, free port, 1 s scrapes) scrapes a real
 *    controller through the scripted scenario, evaluates the alert rules (every one must
 *    evaluate without error), and runs every PromQL expression of the Grafana dashboard and the
 *    alert rules through its HTTP API: each must parse, and the core panels must return data.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';
import { freePort, httpGet, prometheusBinary, promtool, runScenario } from '../support/metrics-helpers.js';

const MON = path.join(ROOT, 'manifests/monitoring');
const RULES = path.join(MON, 'alerts.yml');
const DASHBOARD = path.join(MON, 'grafana-dashboard.json');

/** The core panels: these must show data from a controller that ran the scenario. */
const CORE_PANELS = [
  'Sessions by phase',
  'Sessions now',
  'Reconciles per second by result',
  'Reconcile latency',
  'Work queue depth',
  'Node memory',
  'Controllers up / leading',
];

/**
 * Grafana's variables, as Grafana would fill them in for "all namespaces" and the orchctl job.
 * $__rate_interval is at least four scrape intervals; 15 s is that for the 1 s scrapes here.
 */
const GRAFANA_VARIABLES: Record<string, string> = {
  $namespace: '.*',
  $job: 'orchctl',
  $__rate_interval: '15s',
  $__range: '5m',
  $__interval: '1s',
};

function interpolate(expr: string): string {
  return expr.replace(/\$[a-z_]+/g, (v) => {
    if (!(v in GRAFANA_VARIABLES))
      throw new Error(`the dashboard uses ${v}, which the test does not know how to fill in`);
    return GRAFANA_VARIABLES[v];
  });
}

interface PanelExpr {
  panel: string;
  expr: string;
}

interface Dashboard {
  panels: { title: string; type: string; targets?: { expr: string }[]; panels?: Dashboard['panels'] }[];
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
}

function dashboardExprs(): PanelExpr[] {
  const d = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  const out: PanelExpr[] = [];
  const walk = (panels: Dashboard['panels']) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) out.push({ panel: p.title, expr: t.expr });
      if (p.panels) walk(p.panels);
    }
  };
  walk(d.panels);
  // Template variables: label_values(METRIC, LABEL) is Grafana's, not PromQL; its PromQL part is
  // the series selector, asked here as the equivalent instant query.
  for (const v of d.templating.list.filter((x) => x.type === 'query')) {
    const q = typeof v.query === 'string' ? v.query : v.query!.query;
    const m = /^label_values\((.+),\s*([a-zA-Z_]+)\)$/.exec(q);
    if (!m) throw new Error(`unexpected variable query ${q}`);
    out.push({ panel: `variable $${v.name}`, expr: `count by (${m[2]}) (${m[1]})` });
  }
  return out;
}

function ruleExprs(): { alert: string; expr: string }[] {
  const doc = YAML.parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

describe('monitoring manifests under promtool', () => {
  it('the scrape config and the alert rules are valid', async () => {
    const cfg = await promtool(['check', 'config', path.join(MON, 'prometheus.yml')]);
    expect(cfg.exitCode, cfg.stdout + cfg.stderr).toBe(0);
    const rules = await promtool(['check', 'rules', RULES]);
    expect(rules.exitCode, rules.stdout + rules.stderr).toBe(0);
    expect(rules.stdout).toContain(`SUCCESS: ${ruleExprs().length} rules found`);
  });

  it('every alert fires on the series it is written for (promtool test rules)', async () => {
    const r = await promtool(['test', 'rules', path.join(ROOT, 'test/fixtures/monitoring/alerts.test.yml')]);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    // Each alert in the rules file has at least one case.
    const cases = fs.readFileSync(path.join(ROOT, 'test/fixtures/monitoring/alerts.test.yml'), 'utf8');
    for (const { alert } of ruleExprs()) expect(cases, alert).toContain(`alertname: ${alert}`);
  });
});

describe('a real Prometheus scraping a real controller', () => {
  let h: Harness;
  let prom: ResultPromise | undefined;
  let promPort: number;
  let promLog = '';

  const query = async (expr: string) => {
    const r = await httpGet(promPort, `/api/v1/query?query=${encodeURIComponent(expr)}`);
    return {
      http: r.status,
      ...(JSON.parse(r.body) as { status: string; error?: string; data?: { resultType: string; result: unknown[] } }),
    };
  };

  beforeAll(async () => {
    h = await makeHarness();
    const ctlPort = await freePort();
    h.start(['--metrics-addr', `127.0.0.1:${ctlPort}`]);
    promPort = await freePort();
    const cfg = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'orchctl', static_configs: [{ targets: [`127.0.0.1:${ctlPort}`] }] }],
    };
    const cfgFile = path.join(h.dir, 'prometheus.yml');
    fs.writeFileSync(cfgFile, YAML.stringify(cfg));
    prom = execa(
      prometheusBinary('prometheus'),
      [
        `--config.file=${cfgFile}`,
        `--storage.tsdb.path=${path.join(h.dir, 'prometheus-data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
      ],
      { reject: false, stdin: 'ignore' },
    );
    prom.stderr?.on('data', (d: Buffer) => (promLog += d.toString()));
    await h
      .waitFor(
        'Prometheus ready',
        async () => (await httpGet(promPort, '/-/ready').catch(() => undefined))?.status === 200,
        30_000,
      )
      .catch((e: Error) => {
        throw new Error(`${e.message}\nprometheus log:\n${promLog.slice(-3000)}`);
      });
    await runScenario(h);
    // Enough scrapes after the scenario for rate() over $__rate_interval to have samples.
    await h.waitFor(
      'a few scrapes with the scenario',
      async () => {
        const r = await query(
          'count_over_time(orchctl_agentsession_status_phase{agentsession="flaky", phase="Failed"}[15s])',
        );
        return (
          r.status === 'success' &&
          Number((r.data?.result[0] as { value: [number, string] } | undefined)?.value[1] ?? 0) >= 5
        );
      },
      30_000,
    );
  }, 120_000);

  afterAll(async () => {
    prom?.kill('SIGTERM');
    await prom;
    await h?.cleanup();
  });

  it('scrapes the controller on loopback with no errors', async () => {
    const r = JSON.parse((await httpGet(promPort, '/api/v1/targets')).body) as {
      data: { activeTargets: { health: string; lastError: string; scrapeUrl: string }[] };
    };
    expect(r.data.activeTargets).toHaveLength(1);
    expect(r.data.activeTargets[0]).toMatchObject({
      health: 'up',
      lastError: '',
      scrapeUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/),
    });
  });

  it('every dashboard expression parses, and the core panels return data', async () => {
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(30);
    const failures: string[] = [];
    const empty: string[] = [];
    for (const { panel, expr } of exprs) {
      const q = interpolate(expr);
      const r = await query(q);
      if (r.status !== 'success') failures.push(`${panel}: ${q}: ${r.error}`);
      else if (r.data!.result.length === 0 && (CORE_PANELS.includes(panel) || panel.startsWith('variable')))
        empty.push(`${panel}: ${q}`);
    }
    expect(failures).toEqual([]);
    expect(empty).toEqual([]);
    for (const p of CORE_PANELS)
      expect(
        exprs.some((e) => e.panel === p),
        `core panel "${p}" is in the dashboard`,
      ).toBe(true);
  });

  it('the core panels show the scenario', async () => {
    const byPhase = await query(
      interpolate('sum by (phase) (orchctl_agentsession_status_phase{namespace=~"$namespace"})'),
    );
    const counts = Object.fromEntries(
      (byPhase.data!.result as { metric: { phase: string }; value: [number, string] }[]).map((r) => [
        r.metric.phase,
        Number(r.value[1]),
      ]),
    );
    expect(counts).toMatchObject({ Succeeded: 1, Failed: 1, Running: 1, Pending: 0 });
    const leader = await query('leader_election_master_status{job="orchctl"}');
    expect((leader.data!.result[0] as { value: [number, string] }).value[1]).toBe('1');
  });

  it('every alert rule expression parses, and Prometheus evaluates every rule without error', async () => {
    for (const { alert, expr } of ruleExprs()) {
      const r = await query(expr);
      expect(r.status, `${alert}: ${r.error}`).toBe('success');
    }
    await h.waitFor(
      'every rule evaluated',
      async () => {
        const r = JSON.parse((await httpGet(promPort, '/api/v1/rules')).body) as {
          data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
        };
        const rules = r.data.groups.flatMap((g) => g.rules);
        const bad = rules.filter((x) => x.health !== 'ok');
        return rules.length === ruleExprs().length && bad.length === 0 ? rules : false;
      },
      15_000,
    );
    // The scenario escalated a session: Prometheus sees the alert pending (it fires after its `for`).
    const alerts = JSON.parse((await httpGet(promPort, '/api/v1/alerts')).body) as {
      data: { alerts: { labels: Record<string, string>; state: string }[] };
    };
    expect(alerts.data.alerts.find((a) => a.labels.alertname === 'OrchctlSessionEscalated')?.labels.agentsession).toBe(
      'flaky',
    );
    expect(alerts.data.alerts.some((a) => a.labels.alertname === 'OrchctlControllerDown')).toBe(false);
  });
});
