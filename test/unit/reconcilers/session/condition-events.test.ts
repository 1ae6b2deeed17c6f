/**
 * WaitingForInput, Stalled and QuotaExhausted turning True each record an Event (the notifier
 * routes Events, never conditions): once per transition, none while the condition stays True, one
 * again after it went False and True again. The plan is pure (data in, effects out); the last test
 * runs the reconciler on the real store and recorder and kills it in its status write, which must
 * leave neither the condition nor its Event (they go in one transaction), then tells it once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventObject } from '../../../../controller/api/event.js';
import { clock } from '../../../../controller/api/pause.js';
import type { AgentSession, AgentSessionStatus, AgentSpec } from '../../../../controller/api/kinds.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import type { ScreenReading } from '../../../../controller/reconcilers/session/agent-state.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import type { Actuator, Effect, Outcome } from '../../../../controller/reconcilers/session/effects.js';
import type { SessionObservation } from '../../../../controller/reconcilers/session/observe.js';
import {
  type AgentFacts,
  gitKey,
  type Observed,
  plan,
  type PlanOutput,
} from '../../../../controller/reconcilers/session/plan.js';
import {
  SESSION_FINALIZER,
  SessionReconciler,
  type SessionDeps,
} from '../../../../controller/reconcilers/session/reconciler.js';
import { type AgentEvent, LOG_START } from '../../../../controller/store/eventlog.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const agent: AgentSpec = { command: ['sh'], promptDelivery: 'argument' };

const obj: AgentSession = {
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name: 's', namespace: 'default', uid: 'u-1', generation: 1 },
  spec: { prompt: 'do it' },
};
const running: AgentSessionStatus = {
  phase: 'Running',
  run: 1,
  restarts: 0,
  tmuxSession: 'orchctl-s',
  workspace: '/ws/run-1',
  workdir: '/repo',
  startTime: new Date(T0 - 60_000).toISOString(),
  lifecycle: { runGeneration: 1 },
  conditions: [],
};

const QUESTION = 'Delete the build directory? (y/n)';
const screen = (state: string, extra: Partial<ScreenReading> = {}): ScreenReading => ({ state, at: T0, ...extra });
const waiting = screen('waiting', { prompt: QUESTION });

/** One pass of a Running session whose agent shows `reading` (events: what its sources reported). */
function pass(status: AgentSessionStatus, reading: ScreenReading, now = T0, more: Partial<AgentFacts> = {}) {
  const facts: AgentFacts = { run: 1, screen: reading, screenChangedAt: T0 - 60_000, events: [], next: LOG_START };
  const observed: Observed = {
    pane: { kind: 'alive' },
    hasPanes: true,
    retag: [],
    agent: { ...facts, ...more },
    gitKey: gitKey(status),
  };
  const resolved = { agent, workdir: '/repo', effective: effective(obj.spec ?? {}, undefined) };
  const out = plan({ key: 'default/s', obj: { ...obj, status }, status, observed, resolved, now });
  expect(out.done).toBe(true);
  return out;
}
const events = (out: PlanOutput) =>
  out.effects.flatMap((e) => (e.type === 'RecordEvent' ? [`${e.eventType} ${e.reason}: ${e.message}`] : []));
const cond = (s: AgentSessionStatus, type: string) => s.conditions?.find((c) => c.type === type);

describe('agent conditions turning True record an Event', () => {
  it('WaitingForInput: on the transition with the question, not while it stays True, again after False', () => {
    const first = pass(running, waiting);
    expect(cond(first.status, 'WaitingForInput')).toMatchObject({ status: 'True', message: QUESTION });
    expect(events(first)).toEqual([`Normal WaitingForInput: ${QUESTION}`]);

    const still = pass(first.status, waiting, T0 + 5000);
    expect(cond(still.status, 'WaitingForInput')?.status).toBe('True');
    expect(events(still)).toEqual([]);

    const answered = pass(still.status, screen('busy'), T0 + 10_000);
    expect(cond(answered.status, 'WaitingForInput')?.status).toBe('False');
    expect(events(answered)).toEqual([]);

    const again = pass(answered.status, waiting, T0 + 20_000);
    expect(events(again)).toEqual([`Normal WaitingForInput: ${QUESTION}`]);
  });

  it('WaitingForInput carries the condition message as clipped (a long question is not sent whole)', () => {
    const long = `${'x'.repeat(2000)}?`;
    const out = pass(running, screen('waiting', { prompt: long }));
    const message = cond(out.status, 'WaitingForInput')!.message;
    expect(message.length).toBeLessThan(1000);
    expect(out.effects).toContainEqual({
      type: 'RecordEvent',
      eventType: 'Normal',
      reason: 'WaitingForInput',
      message,
    });
  });

  it('Stalled: a Warning once busy with no progress reaches stalledAfter; its message does not tick', () => {
    const busy = screen('busy');
    expect(events(pass(running, busy, T0 + 500_000))).toEqual([]);
    const stalled = pass(running, busy, T0 + 541_000); // 10m 1s after the start, and after the screen's last change
    expect(cond(stalled.status, 'Stalled')).toMatchObject({ status: 'True', message: expect.stringMatching(/601s/) });
    expect(events(stalled)).toEqual(['Warning Stalled: busy with no new events or screen change for over 10m']);

    const later = pass(stalled.status, busy, T0 + 900_000);
    expect(cond(later.status, 'Stalled')?.message).toMatch(/960s/);
    expect(events(later)).toEqual([]);

    const moved = pass(later.status, busy, T0 + 901_000, { screenChangedAt: T0 + 900_500 });
    expect(cond(moved.status, 'Stalled')?.status).toBe('False');
    expect(events(pass(moved.status, busy, T0 + 1_501_000, { screenChangedAt: T0 + 900_500 }))).toEqual([
      'Warning Stalled: busy with no new events or screen change for over 10m',
    ]);
  });

  it('QuotaExhausted: a Warning with the limit the agent reported, once', () => {
    const error: AgentEvent = {
      seq: 1,
      ts: new Date(T0).toISOString(),
      run: 1,
      source: 'transcript',
      type: 'assistant_message',
      text: 'API Error: 429 rate limit reached for requests',
    };
    const hit = pass(running, screen('idle'), T0, { events: [error], next: { seq: 1, offset: 100 } });
    expect(cond(hit.status, 'QuotaExhausted')).toMatchObject({ status: 'True', reason: 'RateLimited' });
    // The limit pauses the run (pause.ts; rateLimit.pause defaults to true): no reset time given, so defaultWait.
    const until = clock(hit.status.pause!.until!);
    expect(events(hit)).toEqual([
      `Warning QuotaExhausted: ${error.text}`,
      `Normal Paused: RateLimited until ${until} (no reset time given: defaultWait 15m): ${error.text}`,
    ]);
    expect(events(pass(hit.status, screen('idle'), T0 + 5000))).toEqual([]);
  });

  it('a limit shown on the screen counts too', () => {
    const out = pass(running, screen('idle', { quotaExhausted: true, prompt: 'Usage limit reached' }));
    expect(events(out)[0]).toBe('Warning QuotaExhausted: Usage limit reached');
    expect(events(out)[1]).toMatch(/^Normal Paused: RateLimited until \d\d:\d\d/);
  });

  it('conditions that stay False, or were True in the stored status already, record nothing', () => {
    const idle = pass(running, screen('idle'));
    expect(events(idle)).toEqual([]);
    const stored = structuredClone(running);
    stored.conditions = [
      { type: 'WaitingForInput', status: 'True', reason: 'Question', message: QUESTION, lastTransitionTime: '' },
    ];
    expect(events(pass(stored, waiting))).toEqual([]);
  });
});

// ---- crash-only: the Event comes before the status write -----------------------------------------

/** The world of a Running session whose agent asks a question. */
class WaitingObserver implements SessionObservation {
  resolve(o: AgentSession) {
    return { agent, workdir: '/repo', effective: effective(o.spec ?? {}, undefined) };
  }
  async observe(): Promise<Observed> {
    return { pane: { kind: 'alive' }, hasPanes: true, retag: [] };
  }
  async agent(): Promise<AgentFacts> {
    return { run: 1, screen: { ...waiting, at: Date.now() }, events: [], next: LOG_START };
  }
  async git(status: AgentSessionStatus) {
    return { gitKey: gitKey(status) };
  }
  admission() {
    return undefined;
  }
  async panesOf() {
    return [];
  }
  projectPath() {
    return undefined;
  }
  forget() {}
}

/** The world answers nothing: Events are the reconciler's to write, not the actuator's. */
class QuietActuator implements Actuator {
  readonly effects: Effect[] = [];
  async run(_key: string, _o: AgentSession, effects: Effect[]): Promise<Outcome[]> {
    this.effects.push(...effects);
    return [];
  }
}

describe('a controller killed in the status write that records a condition turning True', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-condition-events-'));
    store = new SqliteStore(path.join(dir, 'state.db'));
    const created = await store.create({ ...obj, metadata: { name: 's', namespace: 'default' } });
    const withFinalizer = await store.update({
      ...created,
      metadata: { ...created.metadata, finalizers: [SESSION_FINALIZER] },
    });
    await store.updateStatus({ ...withFinalizer, status: running });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** `killed`: the store dies at the pass's write (a kill -9 at that instant): nothing of it lands. */
  const reconciler = (killed = false) => {
    const log = { debug() {}, info() {}, warn() {}, error() {} };
    const dying = Object.create(store) as SqliteStore;
    dying.txn = async () => {
      throw new Error('controller killed');
    };
    dying.updateStatus = dying.txn as never;
    const target = killed ? dying : store;
    const actuator = new QuietActuator();
    const deps = { store: target, log, observer: new WaitingObserver(), actuator, recorder: new EventRecorder(target) };
    return { reconciler: new SessionReconciler(deps as Partial<SessionDeps> as SessionDeps), actuator };
  };
  const waitingEvents = async () =>
    ((await store.list('Event', { namespace: 'default' })).items as EventObject[]).filter(
      (e) => e.reason === 'WaitingForInput',
    );
  const condition = async () =>
    (
      (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's' })) as AgentSession
    ).status?.conditions?.find((c) => c.type === 'WaitingForInput');

  it('leaves neither the condition nor its Event, then records both once, and not again', async () => {
    const dead = reconciler(true);
    await expect(dead.reconciler.reconcile('default/s')).rejects.toThrow('controller killed');
    expect(await waitingEvents()).toEqual([]);
    expect((await condition())?.status).not.toBe('True');

    const restarted = reconciler();
    await restarted.reconciler.reconcile('default/s');
    expect((await condition())?.status).toBe('True');
    expect(await waitingEvents()).toMatchObject([{ type: 'Normal', message: QUESTION, count: 1 }]);
    // Held for the write, never handed to the actuator.
    expect(restarted.actuator.effects.filter((e) => e.type === 'RecordEvent')).toEqual([]);

    await restarted.reconciler.reconcile('default/s');
    expect(await waitingEvents()).toMatchObject([{ count: 1 }]);
  });
});

describe('the context window from the transcript (seed 003)', () => {
  it('a reading that jumps from 23 % to 56 % records a ContextWindow Event for each step: 30, 40, 50', () => {
    const answer = (seq: number, inputTokens: number): AgentEvent => ({
      seq,
      ts: new Date(T0 + seq).toISOString(),
      run: 1,
      source: 'transcript',
      type: 'assistant_message',
      text: 'working',
      usage: { inputTokens, outputTokens: 0 },
    });
    const first = pass(running, screen('busy'), T0, { events: [answer(1, 46_000)], next: { seq: 1, offset: 10 } });
    expect(events(first).filter((e) => e.includes('ContextWindow'))).toEqual([
      'Normal ContextWindow: context window 10% used (now 23%: 46000 of 200000 tokens)',
      'Normal ContextWindow: context window 20% used (now 23%: 46000 of 200000 tokens)',
    ]);
    const jump = pass(first.status, screen('busy'), T0 + 1000, {
      events: [answer(2, 112_000)],
      next: { seq: 2, offset: 20 },
    });
    expect(jump.status.context).toMatchObject({ percent: 56, lastStep: 50, source: 'transcript' });
    expect(events(jump).filter((e) => e.includes('ContextWindow'))).toEqual([
      'Normal ContextWindow: context window 30% used (now 56%: 112000 of 200000 tokens)',
      'Normal ContextWindow: context window 40% used (now 56%: 112000 of 200000 tokens)',
      'Normal ContextWindow: context window 50% used (now 56%: 112000 of 200000 tokens)',
    ]);
  });
});
