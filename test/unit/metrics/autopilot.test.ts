/**
 * The autopilot's metrics as the registry renders them: the hooks' decision counter (every
 * action/result of an autopilot present from its first event), think latency and errors; and the
 * gauges read at scrape time from Autopilots, Decisions and Projects in real informer caches over a
 * real database file (written, approved, changed, deleted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AUTOPILOT_ACTIONS,
  type AutopilotSpec,
  type AutopilotStatus,
  DECISION_PHASES,
  type DecisionPhase,
} from '../../../controller/api/autopilot.js';
import type { Condition, Resource } from '../../../controller/api/types.js';
import { AutopilotMetrics } from '../../../controller/metrics/autopilot.js';
import { ControllerMetrics, renderMetrics } from '../../../controller/metrics/index.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { parseExposition } from '../../support/prom-text.js';
import { until } from '../../support/until.js';

describe('autopilot event metrics', () => {
  it('counts decisions by autopilot, action and result, and observes thinks and their errors', async () => {
    const registry = new Registry();
    const m = new AutopilotMetrics(registry);
    let x = parseExposition(await registry.metrics());
    expect(x.types.get('orchctl_autopilot_decisions_total')).toBe('counter');
    expect(x.types.get('orchctl_autopilot_think_duration_seconds')).toBe('histogram');
    expect(x.types.get('orchctl_autopilot_think_errors_total')).toBe('counter');
    expect(x.find('orchctl_autopilot_decisions_total')).toEqual([]);

    m.onThink('team', 'heuristic', 0.004, 'ok');
    m.onDecision('team', 'start', 'PendingApproval');
    m.onDecision('team', 'notify', 'Executed');
    m.onDecision('team', 'stop', 'Rejected');
    // A person approves the pending start: the same Decision again, in its new phase.
    m.onDecision('team', 'start', 'Executed');
    m.onThink('team', 'heuristic', 0.02, 'ok');
    m.onThink('ops', 'openai', 12, 'ok');
    m.onThink('ops', 'openai', 45, 'error');
    m.onThink('ops', 'openai', 90, 'error'); // a hang cut off past the last bucket
    x = parseExposition(await registry.metrics());

    const decided = (autopilot: string, action: string, result: DecisionPhase) =>
      x.value('orchctl_autopilot_decisions_total', { autopilot, action, result });
    expect(decided('team', 'start', 'PendingApproval')).toBe(1);
    expect(decided('team', 'start', 'Executed')).toBe(1);
    expect(decided('team', 'notify', 'Executed')).toBe(1);
    expect(decided('team', 'stop', 'Rejected')).toBe(1);
    // Every action and result of an autopilot from its first event on: a first Superseded is an increase from 0.
    expect(decided('team', 'restart', 'Superseded')).toBe(0);
    expect(x.find('orchctl_autopilot_decisions_total', { autopilot: 'team' })).toHaveLength(
      AUTOPILOT_ACTIONS.length * DECISION_PHASES.length,
    );
    // An autopilot that only thought has its decision series too, all 0.
    expect(x.find('orchctl_autopilot_decisions_total', { autopilot: 'ops' }).map((s) => s.value)).toEqual(
      Array(AUTOPILOT_ACTIONS.length * DECISION_PHASES.length).fill(0),
    );

    const bucket = (autopilot: string, planner: string, le: string) =>
      x.value('orchctl_autopilot_think_duration_seconds_bucket', { autopilot, planner, le });
    // The heuristic planner's milliseconds and an LLM's seconds each land in buckets of their own scale.
    expect(bucket('team', 'heuristic', '0.001')).toBe(0);
    expect(bucket('team', 'heuristic', '0.005')).toBe(1);
    expect(bucket('team', 'heuristic', '0.025')).toBe(2);
    expect(bucket('ops', 'openai', '10')).toBe(0);
    expect(bucket('ops', 'openai', '30')).toBe(1);
    expect(bucket('ops', 'openai', '60')).toBe(2);
    expect(bucket('ops', 'openai', '+Inf')).toBe(3);
    // Failed thinks are timed too: the count is every think, the errors counter the failed ones.
    expect(x.value('orchctl_autopilot_think_duration_seconds_count', { autopilot: 'ops' })).toBe(3);
    expect(x.value('orchctl_autopilot_think_duration_seconds_sum', { autopilot: 'ops' })).toBe(147);
    expect(x.value('orchctl_autopilot_think_errors_total', { autopilot: 'ops', planner: 'openai' })).toBe(2);
    // Present at 0 from the first think, so increase() sees the first error.
    expect(x.value('orchctl_autopilot_think_errors_total', { autopilot: 'team', planner: 'heuristic' })).toBe(0);
    expect(x.find('orchctl_autopilot_think_errors_total', { autopilot: 'team', planner: 'openai' })).toEqual([]);
  });
});

describe('autopilot and project gauges from the objects', () => {
  let dir: string;
  let store: SqliteStore;
  let informers: { autopilots: Informer<'Autopilot'>; decisions: Informer<'Decision'>; projects: Informer<'Project'> };
  let m: ControllerMetrics;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-autopilot-metrics-'));
    store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
    informers = {
      autopilots: new Informer(store, 'Autopilot'),
      decisions: new Informer(store, 'Decision'),
      projects: new Informer(store, 'Project'),
    };
    const sessions = new Informer(store, 'AgentSession');
    await Promise.all([...Object.values(informers), sessions].map((i) => i.start()));
    m = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes: { list: () => [] },
      ...informers,
      processMetrics: false,
    });
    sessions.stop();
  });
  afterEach(async () => {
    for (const i of Object.values(informers)) i.stop();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async () => parseExposition(await renderMetrics(m.registry));
  const cached = (namespace: string, name: string) => {
    const o = informers.autopilots.get(namespace, name);
    return { spec: (o?.spec ?? {}) as AutopilotSpec, status: (o?.status ?? {}) as AutopilotStatus };
  };

  async function autopilot(name: string, namespace: string, spec: AutopilotSpec, status?: AutopilotStatus) {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Autopilot',
      metadata: { name, namespace },
      spec,
    });
    return status ? store.updateStatus({ ...o, status }) : o;
  }
  async function decision(name: string, namespace: string, ap: string, phase: DecisionPhase): Promise<Resource> {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Decision',
      metadata: { name, namespace },
      spec: { autopilot: ap, think: 1, action: 'start', target: { project: 'p' }, reason: 'stale', priority: 2 },
    });
    return store.updateStatus({ ...o, status: { phase } });
  }
  async function project(name: string, namespace: string, stale?: Condition['status']) {
    const o = await store.create({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Project',
      metadata: { name, namespace },
      spec: { path: `/src/${name}` },
    });
    if (!stale) return o;
    const c = { type: 'Stale', status: stale, reason: stale === 'True' ? 'Idle' : 'Recent', lastTransitionTime: '' };
    return store.updateStatus({ ...o, status: { conditions: [c] } });
  }
  const think = (error?: string): AutopilotStatus['lastThink'] => ({
    time: '2026-03-01T10:00:00Z',
    trigger: 'interval',
    planner: 'openai',
    durationMs: 1200,
    decisions: 0,
    ...(error ? { error } : {}),
  });

  it('pending approvals, level, think failing and stale projects follow the objects', async () => {
    await autopilot('pilot', 'team', { autonomyLevel: 'cautious' }, { lastThink: think() });
    await autopilot('watcher', 'ops', {}, { lastThink: think('the planner answered garbage') });
    await autopilot('fresh', 'ops', { autonomyLevel: 'full' }); // has not thought yet
    await decision('pilot-1-0', 'team', 'pilot', 'PendingApproval');
    await decision('pilot-1-1', 'team', 'pilot', 'PendingApproval');
    await decision('pilot-1-2', 'team', 'pilot', 'Executed');
    await decision('watcher-1-0', 'ops', 'watcher', 'Logged');
    // Same autopilot name in another namespace: counted apart.
    await decision('pilot-1-0', 'ops', 'pilot', 'PendingApproval');
    await project('web', 'team', 'True');
    await project('api', 'team', 'False');
    await project('docs', 'ops', 'True');
    await project('new', 'team'); // the project reconciler has not looked at it yet
    await until(
      'caches',
      () =>
        informers.autopilots.list().length === 3 &&
        informers.decisions.list().length === 5 &&
        informers.projects.list().length === 4,
    );
    let x = await scrape();
    const pilot = { namespace: 'team', autopilot: 'pilot' };
    const watcher = { namespace: 'ops', autopilot: 'watcher' };

    for (const name of ['orchctl_autopilot_pending_approvals', 'orchctl_autopilot_level', 'orchctl_project_stale'])
      expect(x.types.get(name), name).toBe('gauge');
    expect(x.value('orchctl_autopilot_pending_approvals', pilot)).toBe(2);
    expect(x.value('orchctl_autopilot_pending_approvals', watcher)).toBe(0);
    expect(x.value('orchctl_autopilot_pending_approvals', { namespace: 'ops', autopilot: 'fresh' })).toBe(0);
    // A Decision whose Autopilot is not (or no longer) in the cache still shows in the backlog.
    expect(x.value('orchctl_autopilot_pending_approvals', { namespace: 'ops', autopilot: 'pilot' })).toBe(1);

    // A StateSet over the four levels; no level set is observe.
    const levels = (labels: Record<string, string>) =>
      x.find('orchctl_autopilot_level', labels).map((s) => [s.labels.level, s.value]);
    expect(levels(pilot)).toEqual([
      ['observe', 0],
      ['cautious', 1],
      ['moderate', 0],
      ['full', 0],
    ]);
    expect(x.value('orchctl_autopilot_level', { ...watcher, level: 'observe' })).toBe(1);
    expect(x.value('orchctl_autopilot_level', { namespace: 'ops', autopilot: 'fresh', level: 'full' })).toBe(1);

    expect(x.value('orchctl_autopilot_think_failing', pilot)).toBe(0);
    expect(x.value('orchctl_autopilot_think_failing', watcher)).toBe(1);
    expect(x.find('orchctl_autopilot_think_failing', { autopilot: 'fresh' })).toEqual([]);

    expect(x.value('orchctl_project_stale', { namespace: 'team', project: 'web' })).toBe(1);
    expect(x.value('orchctl_project_stale', { namespace: 'team', project: 'api' })).toBe(0);
    expect(x.value('orchctl_project_stale', { namespace: 'ops', project: 'docs' })).toBe(1);
    expect(x.find('orchctl_project_stale', { project: 'new' })).toEqual([]);

    // A person approves one pending Decision (it executes), someone raises the level, the watcher's
    // next think works, the watcher is suspended after all, and the stale project gets a session.
    const pending = (await store.get({ kind: 'Decision', namespace: 'team', name: 'pilot-1-0' }))!;
    await store.updateStatus({ ...pending, status: { phase: 'Executed' } });
    const ap = (await store.get({ kind: 'Autopilot', namespace: 'team', name: 'pilot' }))!;
    await store.update({ ...ap, spec: { autonomyLevel: 'moderate' } });
    const w = (await store.get({ kind: 'Autopilot', namespace: 'ops', name: 'watcher' }))!;
    await store.updateStatus({ ...w, status: { lastThink: think() } });
    const web = (await store.get({ kind: 'Project', namespace: 'team', name: 'web' }))!;
    const active = { type: 'Stale', status: 'False', reason: 'Active', lastTransitionTime: '' };
    await store.updateStatus({ ...web, status: { conditions: [active] } });
    await until('changes in the caches', () => {
      const p = informers.projects.get('team', 'web')?.status as { conditions?: Condition[] } | undefined;
      return (
        informers.decisions.get('team', 'pilot-1-0')?.status?.phase === 'Executed' &&
        cached('team', 'pilot').spec.autonomyLevel === 'moderate' &&
        !cached('ops', 'watcher').status.lastThink?.error &&
        p?.conditions?.[0].status === 'False'
      );
    });
    x = await scrape();
    expect(x.value('orchctl_autopilot_pending_approvals', pilot)).toBe(1);
    expect(x.value('orchctl_autopilot_level', { ...pilot, level: 'moderate' })).toBe(1);
    expect(x.value('orchctl_autopilot_level', { ...pilot, level: 'cautious' })).toBe(0);
    expect(x.value('orchctl_autopilot_think_failing', watcher)).toBe(0);
    expect(x.value('orchctl_project_stale', { namespace: 'team', project: 'web' })).toBe(0);

    // A failed last think of a suspended autopilot is not "failing": it does not think.
    const w2 = (await store.get({ kind: 'Autopilot', namespace: 'ops', name: 'watcher' }))!;
    const suspended = await store.update({ ...w2, spec: { suspend: true } });
    await store.updateStatus({ ...suspended, status: { lastThink: think('timeout') } });
    await until('suspension in the cache', () => {
      const o = cached('ops', 'watcher');
      return !!o.spec.suspend && !!o.status.lastThink?.error;
    });
    expect((await scrape()).value('orchctl_autopilot_think_failing', watcher)).toBe(0);

    // Deleting objects takes their series with them.
    await store.delete({ kind: 'Autopilot', namespace: 'team', name: 'pilot' });
    await store.delete({ kind: 'Decision', namespace: 'team', name: 'pilot-1-1' });
    await store.delete({ kind: 'Project', namespace: 'ops', name: 'docs' });
    await until(
      'deletions in the caches',
      () =>
        informers.autopilots.list().length === 2 &&
        informers.decisions.list().length === 4 &&
        informers.projects.list().length === 3,
    );
    x = await scrape();
    expect(x.find('orchctl_autopilot_level', pilot)).toEqual([]);
    expect(x.find('orchctl_autopilot_think_failing', pilot)).toEqual([]);
    expect(x.find('orchctl_autopilot_pending_approvals', pilot)).toEqual([]);
    expect(x.find('orchctl_project_stale', { project: 'docs' })).toEqual([]);
    expect(x.value('orchctl_project_stale', { namespace: 'team', project: 'api' })).toBe(0);
  });

  it('a ControllerMetrics without those informers has the counters but none of the gauges', async () => {
    const sessions = new Informer(store, 'AgentSession');
    const bare = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes: { list: () => [] },
      processMetrics: false,
    });
    bare.autopilot.onDecision('pilot', 'start', 'PendingApproval');
    const x = parseExposition(await renderMetrics(bare.registry));
    expect(
      x.value('orchctl_autopilot_decisions_total', { autopilot: 'pilot', action: 'start', result: 'PendingApproval' }),
    ).toBe(1);
    for (const name of [
      'orchctl_autopilot_pending_approvals',
      'orchctl_autopilot_level',
      'orchctl_autopilot_think_failing',
      'orchctl_project_stale',
    ])
      expect(x.types.has(name), name).toBe(false);
  });

  it('with Autopilots but no Decision cache there is no pending count rather than a false 0', async () => {
    const sessions = new Informer(store, 'AgentSession');
    const partial = new ControllerMetrics({
      controller: 'agentsession',
      leaseName: 'orchctl-controller',
      sessions,
      nodes: { list: () => [] },
      autopilots: informers.autopilots,
      processMetrics: false,
    });
    await autopilot('pilot', 'team', {});
    await until('cache', () => informers.autopilots.list().length === 1);
    const x = parseExposition(await renderMetrics(partial.registry));
    expect(x.value('orchctl_autopilot_level', { autopilot: 'pilot', level: 'observe' })).toBe(1);
    expect(x.types.has('orchctl_autopilot_pending_approvals')).toBe(false);
  });
});
