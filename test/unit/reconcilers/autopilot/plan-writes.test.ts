/**
 * The autopilot reconciler's pure plan of its writes (controller/reconcilers/autopilot/writes.ts)
 * on data alone: no store, no planner, no clock. When a think is due; the think's one transaction
 * (Decisions, their effects, the Projects' error-retry counts, the Autopilot's status, the Events);
 * a person's answer and an expiry.
 */
import { describe, expect, it } from 'vitest';
import type { AutopilotSpec } from '../../../../controller/api/autopilot.js';
import { registry } from '../../../../controller/config/crds.js';
import type { Evaluation } from '../../../../controller/api/evaluation.js';
import type { Project } from '../../../../controller/api/project.js';
import type { Fresh } from '../../../../controller/reconcilers/autopilot/execute.js';
import { type Dec, decide, settings, view, type World } from '../../../../controller/reconcilers/autopilot/plan.js';
import type { Proposal } from '../../../../controller/reconcilers/autopilot/types.js';
import {
  bookRetries,
  type CarryOutInput,
  planExpire,
  planSettle,
  planThinkWrite,
  projectWrites,
  thinkTrigger,
} from '../../../../controller/reconcilers/autopilot/writes.js';
import type { WriteOp } from '../../../../controller/store/store.js';
import { autopilot, MIN, project, session, T0, world } from '../../../support/autopilot-world.js';

const iso = (ms: number) => new Date(ms).toISOString();
const NOW = iso(T0);

const fresh = (w: World): Fresh => ({
  projects: new Map(w.projects.map((p) => [p.metadata.name, p])),
  sessions: w.sessions,
  revision: 42,
});
const input = (w: World): CarryOutInput => ({
  fresh: fresh(w),
  policies: [],
  sessionKind: registry().resolve('AgentSession'),
  resume: (p) => `Resume work on ${p}.`,
  now: NOW,
});

/** The drafts of one think of `proposals` in `w`. */
function think(w: World, proposals: Proposal[]) {
  const s = settings(w.autopilot.spec);
  const v = view(w, s);
  const drafts = decide({ world: w, settings: s, view: v, think: 1, planner: 'test', proposals });
  return { drafts, v, s };
}

const created = (ops: WriteOp[], kind: string) =>
  ops.filter((o) => o.op === 'create' && o.object.kind === kind).map((o) => (o.op === 'create' ? o.object : undefined));

describe('autopilot writes: when to think', () => {
  const thought = (spec: AutopilotSpec = {}) => {
    const ap = autopilot(spec);
    ap.status = { lastThink: { time: iso(T0 - 10 * MIN), trigger: 'start' } as never, observedGeneration: 1 };
    ap.status.nextThinkTime = iso(T0 + 10 * MIN);
    return ap;
  };
  const none = { projects: [] as Project[], sessions: [], evaluations: [] as Evaluation[] };

  it('at the start, on a spec change, and when the interval is up', () => {
    expect(thinkTrigger(autopilot(), none, T0)).toBe('start');
    const changed = thought();
    changed.metadata.generation = 2;
    expect(thinkTrigger(changed, none, T0)).toBe('spec');
    expect(thinkTrigger(thought(), none, T0)).toBeUndefined();
    expect(thinkTrigger(thought(), none, T0 + 10 * MIN)).toBe('interval');
  });

  it("when a selected project's run ended since the last think, or a session escalated", () => {
    const projects = [project('p')];
    const ended = session('p-1', 'p', 'Failed', { completionTime: iso(T0 - MIN) });
    expect(thinkTrigger(thought(), { ...none, projects, sessions: [ended] }, T0)).toBe('session-ended');
    const escalated = session('p-2', 'p', 'Running', {
      conditions: [{ type: 'Escalated', status: 'True', reason: 'x', message: '', lastTransitionTime: iso(T0 - MIN) }],
    });
    expect(thinkTrigger(thought(), { ...none, projects, sessions: [escalated] }, T0)).toBe('escalation');
    // A session of a project the Autopilot does not select does not wake it.
    expect(thinkTrigger(thought(), { ...none, projects: [], sessions: [ended] }, T0)).toBeUndefined();
  });
});

describe("autopilot writes: a think's transaction", () => {
  it('an executed start: the session created, the Decision Executed, guarded by the session list read', () => {
    const w = world(autopilot({ autonomyLevel: 'full', sessionTemplate: { agentRef: 'claude' } }), {
      projects: [project('p')],
    });
    const { drafts, v } = think(w, [{ action: 'start', project: 'p', reason: 'stale', priority: 3 }]);
    const status = { thinks: 1 };
    const p = planThinkWrite({ ap: w.autopilot, drafts, resets: v.resets, status, decisions: [], extra: [] }, input(w));
    const [s] = created(p.ops, 'AgentSession');
    expect(s?.spec).toMatchObject({ projectRef: 'p', prompt: 'Resume work on p.', maxDuration: '45m' });
    expect(p.written.map((d) => d.status?.phase)).toEqual(['Executed']);
    expect(p.ops.at(-2)).toMatchObject({
      op: 'updateStatus',
      object: { kind: 'Autopilot', status: { counts: { Executed: 1 } } },
    });
    expect(p.ops.at(-1)).toEqual({ op: 'unchanged', kind: 'AgentSession', namespace: 'default', since: 42 });
  });

  it('a start whose project changed since the think is Superseded and creates nothing', () => {
    const w = world(autopilot({ autonomyLevel: 'full' }), { projects: [project('p')] });
    const { drafts, v } = think(w, [{ action: 'start', project: 'p', reason: 'stale', priority: 3 }]);
    const r = input(w);
    const moved = structuredClone(w.projects[0]);
    moved.metadata.generation = 2;
    r.fresh.projects.set('p', moved);
    const p = planThinkWrite({ ap: w.autopilot, drafts, resets: v.resets, status: {}, decisions: [], extra: [] }, r);
    expect(created(p.ops, 'AgentSession')).toEqual([]);
    expect(p.written[0].status).toMatchObject({ phase: 'Superseded' });
    expect(p.ops.some((o) => o.op === 'unchanged')).toBe(false);
  });

  it('a start whose session would be invalid (no agent in the template) Fails, naming the field', () => {
    const w = world(autopilot({ autonomyLevel: 'full' }), { projects: [project('p')] });
    const { drafts, v } = think(w, [{ action: 'start', project: 'p', reason: 'stale', priority: 3 }]);
    const p = planThinkWrite(
      { ap: w.autopilot, drafts, resets: v.resets, status: {}, decisions: [], extra: [] },
      input(w),
    );
    expect(p.written[0].status?.phase).toBe('Failed');
    expect(p.written[0].status?.message).toContain('spec.agentRef or spec.agent is required');
    expect(created(p.ops, 'AgentSession')).toEqual([]);
  });

  it('a pending Decision is written with its DecisionPending Event in the same transaction', () => {
    const w = world(autopilot({ autonomyLevel: 'cautious' }), {
      projects: [project('q', {}, { idleDays: 0 })],
      sessions: [session('q-1', 'q', 'Running')],
    });
    const { drafts, v } = think(w, [{ action: 'stop', project: 'q', session: 'q-1', reason: 'done', priority: 3 }]);
    const p = planThinkWrite(
      { ap: w.autopilot, drafts, resets: v.resets, status: {}, decisions: [], extra: [] },
      input(w),
    );
    expect(p.written[0].status?.phase).toBe('PendingApproval');
    expect(created(p.ops, 'Event')).toEqual([expect.objectContaining({ reason: 'DecisionPending' })]);
  });
});

const recovery = (phase: string, action: 'restart' | 'notify', cls = 'Crash'): Dec =>
  ({
    metadata: { name: 'd1', namespace: 'default' },
    spec: { action, reason: 'it crashed', target: { project: 'p' }, recovery: { session: 's', run: 2, class: cls } },
    status: { phase },
  }) as unknown as Dec;

describe("autopilot writes: the projects' error-retry counts", () => {
  const w = world(autopilot(), { projects: [project('p')] });

  it('an executed recovery restart counts one retry; a time-box continuation its own count', () => {
    const retries = new Map();
    bookRetries(recovery('Executed', 'restart'), fresh(w), retries, NOW);
    expect(retries.get('p')).toMatchObject({ count: 1, lastFailure: { session: 's', run: 2, class: 'Crash' } });
    bookRetries(recovery('Executed', 'restart', 'TimeBox'), fresh(w), retries, NOW);
    expect(retries.get('p')).toMatchObject({ count: 1, timeBoxes: 1 });
  });

  it('a recorded escalation sets Escalated=True on the project; a reset clears it', () => {
    const retries = new Map();
    bookRetries(recovery('Executed', 'notify'), fresh(w), retries, NOW);
    const [op] = projectWrites(fresh(w), retries, NOW);
    expect(op).toMatchObject({ op: 'updateStatus', object: { status: { errorRetries: { escalated: { at: NOW } } } } });
    const conds = op.op === 'updateStatus' ? (op.object as Project).status?.conditions : [];
    expect(conds).toContainEqual(expect.objectContaining({ type: 'Escalated', status: 'True' }));
    const [cleared] = projectWrites(fresh(w), new Map([['p', undefined]]), NOW);
    expect((cleared.op === 'updateStatus' ? (cleared.object as Project) : undefined)?.status?.errorRetries).toBe(
      undefined,
    );
  });

  it('a superseded escalation books nothing', () => {
    const retries = new Map();
    bookRetries(recovery('Superseded', 'notify'), fresh(w), retries, NOW);
    expect(retries.size).toBe(0);
  });
});

describe("autopilot writes: a person's answer and an expiry", () => {
  const w = world(autopilot({ autonomyLevel: 'cautious' }), {
    projects: [project('q', {}, { idleDays: 0 })],
    sessions: [session('q-1', 'q', 'Running')],
  });
  const pending = () =>
    think(w, [{ action: 'stop', project: 'q', session: 'q-1', reason: 'done', priority: 3 }]).drafts[0].decision;

  it('a rejection is recorded as Rejected by the person, with nothing carried out', () => {
    const p = planSettle(w.autopilot, pending(), { verdict: 'Rejected', by: 'ann' } as never, undefined, NOW)!;
    expect(p.decision.status).toMatchObject({ phase: 'Rejected', guardrail: 'Person', message: 'rejected by ann' });
    expect(p.ops).toHaveLength(1);
  });

  it('an approval carries it out against the fresh read', () => {
    const p = planSettle(w.autopilot, pending(), { verdict: 'Approved', by: 'ann' } as never, input(w), NOW)!;
    expect(p.decision.status).toMatchObject({ phase: 'Executed', message: 'approved by ann' });
  });

  it('an unanswered Decision expires with a DecisionExpired Event; nothing once it is no longer pending', () => {
    const s = settings({ ...w.autopilot.spec, approval: { timeout: '1h', onTimeout: { stop: 'reject' } } } as never);
    const p = planExpire(w.autopilot, pending(), s, input(w))!;
    expect(p.decision.status).toMatchObject({
      phase: 'Expired',
      message: 'nobody answered within 1h: dropped (onTimeout reject)',
    });
    expect(created(p.ops, 'Event')).toEqual([expect.objectContaining({ reason: 'DecisionExpired' })]);
    const done = { ...pending(), status: { phase: 'Executed' } } as Dec;
    expect(planExpire(w.autopilot, done, s, input(w))).toBeUndefined();
  });
});
