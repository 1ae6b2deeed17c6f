import { describe, expect, it } from 'vitest';
import type { AutonomyLevel, AutopilotAction, AutopilotSpec } from '../../../../controller/api/autopilot.js';
import type { SessionPolicy } from '../../../../controller/api/session-policy.js';
import {
  decide,
  type Dec,
  endSeenAt,
  selectedProjects,
  settings,
  view,
  type World,
} from '../../../../controller/reconcilers/autopilot/plan.js';
import type { Proposal } from '../../../../controller/reconcilers/autopilot/types.js';
import { FROZEN_ANNOTATION } from '../../../../controller/api/freeze.js';
import { autopilot, MIN, project, session, T0, world } from '../../../support/autopilot-world.js';

/** One proposal through the guardrails and the gate. */
function decideOne(w: World, p: Proposal) {
  const s = settings(w.autopilot.spec);
  const v = view(w, s);
  const [d] = decide({ world: w, settings: s, view: v, think: 7, planner: 'test', proposals: [p] });
  return d;
}

/** A world in which every action passes every guardrail: P is stale and idle, Q runs a session for an hour. */
function openWorld(spec: AutopilotSpec): World {
  return world(autopilot(spec), {
    projects: [project('p'), project('q', {}, { idleDays: 0 })],
    sessions: [session('q-1', 'q', 'Running')],
  });
}

const PROPOSALS: Record<AutopilotAction, Proposal> = {
  start: { action: 'start', project: 'p', reason: 'stale', priority: 3 },
  stop: { action: 'stop', project: 'q', session: 'q-1', reason: 'done', priority: 3 },
  restart: { action: 'restart', project: 'q', session: 'q-1', reason: 'stuck', priority: 3 },
  notify: { action: 'notify', project: 'p', reason: 'fyi', priority: 3, message: 'hello' },
  skip: { action: 'skip', project: 'p', reason: 'nothing to do', priority: 5 },
};

type Outcome = 'executed' | 'executed+notify' | 'pending' | 'logged';
const MATRIX: Record<AutonomyLevel, Record<AutopilotAction, Outcome>> = {
  observe: { start: 'logged', stop: 'logged', restart: 'logged', notify: 'logged', skip: 'logged' },
  cautious: { start: 'executed+notify', stop: 'pending', restart: 'pending', notify: 'executed', skip: 'logged' },
  moderate: { start: 'executed', stop: 'executed+notify', restart: 'executed', notify: 'executed', skip: 'logged' },
  full: { start: 'executed', stop: 'executed', restart: 'executed', notify: 'executed', skip: 'logged' },
};

function outcome(d: { decision: Dec; execute: boolean }): string {
  if (d.execute) return d.decision.status?.notifyAfter ? 'executed+notify' : 'executed';
  if (d.decision.status?.phase === 'PendingApproval') return 'pending';
  if (d.decision.status?.phase === 'Logged') return 'logged';
  return d.decision.status?.phase ?? 'none';
}

describe('the autonomy gate (seed 002 §2.1), through decide()', () => {
  const rows = Object.entries(MATRIX).flatMap(([level, row]) =>
    Object.entries(row).map(([action, want]) => ({ level, action, want })),
  );
  it.each(rows)('$level × $action → $want', ({ level, action, want }) => {
    const d = decideOne(openWorld({ autonomyLevel: level as AutonomyLevel }), PROPOSALS[action as AutopilotAction]);
    expect(d.decision.status?.guardrail).toBeUndefined();
    expect(outcome(d)).toBe(want);
    expect(d.decision.spec.level).toBe(level);
  });

  it('defaults to observe: nothing executes unless a person raises the level', () => {
    const d = decideOne(openWorld({}), PROPOSALS.start);
    expect(outcome(d)).toBe('logged');
  });
});

const fullSpec: AutopilotSpec = { autonomyLevel: 'full' };

describe('guardrails refuse with the guardrail named', () => {
  const full = fullSpec;
  const refused = (w: World, p: Proposal) => {
    const d = decideOne(w, p);
    expect(d.execute).toBe(false);
    expect(d.decision.status?.phase).toBe('Rejected');
    return { guardrail: d.decision.status?.guardrail, message: d.decision.status?.message ?? '' };
  };
  const executed = (ago: number, action: AutopilotAction, target: string): Dec =>
    ({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Decision',
      metadata: {
        name: `ap-1-${action}-${target}`,
        namespace: 'default',
        creationTimestamp: new Date(T0 - ago).toISOString(),
      },
      spec: {
        autopilot: 'ap',
        think: 1,
        action,
        target: { project: target },
        reason: 'x',
        priority: 3,
        planner: 'heuristic',
        level: 'full',
        snapshot: { revision: 1, objects: [] },
      },
      status: { phase: 'Executed', executedAt: new Date(T0 - ago).toISOString() },
    }) as Dec;

  it('the actions allowlist', () => {
    const w = openWorld({ ...full, guardrails: { actions: ['start', 'notify'] } });
    expect(refused(w, PROPOSALS.stop)).toMatchObject({ guardrail: 'Allowlist' });
    expect(refused(w, PROPOSALS.stop).message).toContain('start, notify');
  });

  it('the same-project cooldown (10m by default), on a fake clock', () => {
    const w = openWorld(full);
    w.decisions = [executed(9 * MIN, 'stop', 'p')];
    expect(refused(w, PROPOSALS.start)).toMatchObject({ guardrail: 'SameProjectCooldown' });
    w.decisions = [executed(11 * MIN, 'stop', 'p')];
    expect(decideOne(w, PROPOSALS.start).execute).toBe(true);
  });

  it('a cooldown waited out over several thinks is one Rejected Decision, updated, not one per think', () => {
    const w = openWorld(full);
    w.decisions = [executed(4 * MIN, 'start', 'other')];
    const first = decideOne(w, PROPOSALS.start);
    expect(first).toMatchObject({ execute: false, decision: { status: { guardrail: 'SameActionCooldown' } } });
    expect(first.update).toBeUndefined();
    const waiting = { ...first.decision, metadata: { ...first.decision.metadata, resourceVersion: '42' } } as Dec;
    w.decisions = [executed(4 * MIN, 'start', 'other'), waiting];
    const s = settings(w.autopilot.spec);
    const [again, ...more] = decide({
      world: w,
      settings: s,
      view: view(w, s),
      think: 8,
      planner: 'test',
      proposals: [PROPOSALS.start],
    });
    expect(more).toEqual([]);
    expect(again.update).toBe(true);
    expect(again.decision.metadata).toEqual(waiting.metadata);
    expect(again.decision.status).toMatchObject({ phase: 'Rejected', guardrail: 'SameActionCooldown' });
    expect(again.decision.status?.message).toMatch(/\(still waiting at think 8\)$/);
  });

  it('the same-action cooldown (5m by default) across projects', () => {
    const w = openWorld(full);
    w.decisions = [executed(4 * MIN, 'start', 'other')];
    const r = refused(w, PROPOSALS.start);
    expect(r.guardrail).toBe('SameActionCooldown');
    expect(r.message).toMatch(/4m ago \(cooldown 5m\)/);
    w.decisions = [executed(6 * MIN, 'start', 'other')];
    expect(decideOne(w, PROPOSALS.start).execute).toBe(true);
  });

  it('protected projects: spec.protected and guardrails.protectedProjects', () => {
    const w = openWorld(full);
    w.projects[0] = project('p', { protected: true });
    expect(refused(w, PROPOSALS.start)).toMatchObject({ guardrail: 'ProtectedProject' });
    const w2 = openWorld({ ...full, guardrails: { protectedProjects: { matchLabels: { tier: 'prod' } } } });
    w2.projects[0] = project('p', {}, { labels: { tier: 'prod' } });
    expect(refused(w2, PROPOSALS.start)).toMatchObject({ guardrail: 'ProtectedProject' });
    // A notice about a protected project is fine.
    expect(decideOne(w2, PROPOSALS.notify).execute).toBe(true);
  });

  it('the young-session window: no stop or restart of a run younger than 30m, unless it failed', () => {
    const w = openWorld(full);
    w.sessions = [session('q-1', 'q', 'Running', { startTime: new Date(T0 - 20 * MIN).toISOString() })];
    const r = refused(w, PROPOSALS.stop);
    expect(r.guardrail).toBe('YoungSession');
    expect(r.message).toContain('20 min');
    w.sessions = [session('q-1', 'q', 'Running', { startTime: new Date(T0 - 31 * MIN).toISOString() })];
    expect(decideOne(w, PROPOSALS.stop).execute).toBe(true);
    w.sessions = [session('q-1', 'q', 'Failed', { startTime: new Date(T0 - 2 * MIN).toISOString() })];
    expect(decideOne(w, PROPOSALS.restart).execute).toBe(true);
  });

  it('the resource floor: free memory on the Node, active sessions, the session policy', () => {
    const w = openWorld(full);
    w.freeMemoryMB = 1500;
    expect(refused(w, PROPOSALS.start)).toMatchObject({ guardrail: 'ResourceFloor' });
    expect(refused(w, PROPOSALS.start).message).toContain('1500 MB memory free');
    const w2 = openWorld({ ...full, guardrails: { maxActiveSessions: 1 } });
    expect(refused(w2, PROPOSALS.start).message).toContain('maxActiveSessions is 1');
    const w3 = openWorld(full);
    w3.policy = {
      kind: 'SessionPolicy',
      metadata: { name: 'tight' },
      spec: { maxConcurrentSessions: 2 },
    } as SessionPolicy;
    w3.activeUnderPolicy = 2;
    expect(refused(w3, PROPOSALS.start).message).toContain('SessionPolicy tight');
    w3.activeUnderPolicy = 1;
    expect(decideOne(w3, PROPOSALS.start).execute).toBe(true);
  });

  it('blocked projects, unknown targets, a running project', () => {
    const w = openWorld(full);
    w.projects[0] = project('p', { blocked: { reason: 'waiting for design review' } });
    expect(refused(w, PROPOSALS.start)).toMatchObject({ guardrail: 'Blocked' });
    expect(refused(openWorld(full), { ...PROPOSALS.start, project: 'nope' })).toMatchObject({
      guardrail: 'UnknownTarget',
    });
    expect(refused(openWorld(full), { ...PROPOSALS.start, project: 'q' })).toMatchObject({
      guardrail: 'AlreadyRunning',
    });
  });

  it('one think acts on a project once', () => {
    const w = openWorld(full);
    const s = settings(w.autopilot.spec);
    const drafts = decide({
      world: w,
      settings: s,
      view: view(w, s),
      think: 1,
      planner: 'test',
      proposals: [PROPOSALS.stop, PROPOSALS.restart],
    });
    expect(drafts.map((d) => d.decision.status?.phase ?? 'run')).toEqual(['run', 'Rejected']);
    expect(drafts[1].decision.status?.guardrail).toBe('SameProjectCooldown');
  });

  it('a repeat of a logged recommendation waits an hour; one refused by a cooldown is proposed again', () => {
    const w = openWorld({ autonomyLevel: 'observe' });
    const first = decideOne(w, PROPOSALS.start);
    const logged = {
      ...first.decision,
      metadata: { ...first.decision.metadata, creationTimestamp: new Date(T0 - 30 * MIN).toISOString() },
    };
    w.decisions = [logged as Dec];
    const s = settings(w.autopilot.spec);
    const again = decide({
      world: w,
      settings: s,
      view: view(w, s),
      think: 8,
      planner: 'test',
      proposals: [PROPOSALS.start],
    });
    expect(again).toEqual([]);
    const full = openWorld(fullSpec);
    full.decisions = [
      {
        ...logged,
        spec: { ...logged.spec, level: 'full' },
        status: { phase: 'Rejected', guardrail: 'SameActionCooldown' },
      } as Dec,
    ];
    expect(decideOne(full, PROPOSALS.start).execute).toBe(true);
  });
});

describe('staleness as the autopilot sees it', () => {
  it('a run that just ended makes the project recent at once, before its status catches up', () => {
    const ap = autopilot({});
    const p = project('p', {}, { idleDays: 10 });
    const w = world(ap, { projects: [p], sessions: [session('p-1', 'p', 'Succeeded')] });
    expect(view(w, settings(ap.spec)).input.projects[0].stale).toBe(false);
    const idle = world(ap, { projects: [project('p', {}, { idleDays: 10 })] });
    expect(view(idle, settings(ap.spec)).input.projects[0].stale).toBe(true);
  });
});

describe('projectSelector (docs/controller.md, "Selectors")', () => {
  it('a missing selector selects no project; {} selects every one; labels select theirs', () => {
    const projects = [project('a', {}, { labels: { team: 'web' } }), project('b')];
    const names = (spec: AutopilotSpec) =>
      selectedProjects({ autopilot: { ...autopilot(), spec }, projects }).map((p) => p.metadata.name);
    expect(names({})).toEqual([]);
    expect(names({ projectSelector: {} })).toEqual(['a', 'b']);
    expect(names({ projectSelector: { matchLabels: { team: 'web' } } })).toEqual(['a']);
  });

  it('a frozen project (orchctl freeze) is not selected: no start, stop, restart or recovery there', () => {
    const frozen = project('a');
    frozen.metadata.annotations = { [FROZEN_ANNOTATION]: '2026-11-24T12:00:00Z by orchctl freeze' };
    const names = selectedProjects({
      autopilot: { ...autopilot(), spec: { projectSelector: {} } },
      projects: [frozen, project('b')],
    });
    expect(names.map((p) => p.metadata.name)).toEqual(['b']);
  });
});

describe('endSeenAt: when a session was seen to end (the session-ended trigger)', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  const ready = (status: 'True' | 'False', ms: number) => ({
    type: 'Ready',
    status,
    reason: 'x',
    message: '',
    lastTransitionTime: at(ms),
  });
  it('a run that ended while no controller ran, seen later: the time it was seen, not its completionTime', () => {
    const s = session('a', 'p', 'Failed', { completionTime: at(T0 - 20 * MIN), conditions: [ready('False', T0)] });
    expect(endSeenAt(s)).toBe(at(T0));
  });
  it('otherwise its completionTime; nothing while it is active', () => {
    expect(endSeenAt(session('a', 'p', 'Succeeded', { conditions: [ready('False', T0 - 30 * MIN)] }))).toBe(
      at(T0 - 5 * MIN),
    );
    expect(endSeenAt(session('a', 'p', 'Running', { conditions: [ready('True', T0)] }))).toBeUndefined();
  });
});
