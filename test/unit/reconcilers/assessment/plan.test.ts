/**
 * The assessment reconciler's pure plan (controller/reconcilers/assessment/plan.ts) on data alone:
 * no store, no event-log file, no send. A batch of events in; the status write, the Events, the
 * intervention to deliver and when to look again out; and what becomes of a pending intervention.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus } from '../../../../controller/api/kinds.js';
import { newAssessmentState } from '../../../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import {
  type ConsumeObserved,
  type DeliveryObserved,
  deliveredStatus,
  FROZEN_WAIT_MS,
  planConsume,
  planDelivery,
} from '../../../../controller/reconcilers/assessment/plan.js';
import type { PendingIntervention } from '../../../../controller/reconcilers/assessment/status.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';
import { TranscriptBuilder } from '../../../support/assessment-transcript.js';

const cfg = assessmentConfig(undefined);
const START = { seq: 0, offset: 0 };

/** Three corrections within five minutes: the breaker opens with a ClarificationPause. */
function correctionStorm(): AgentEvent[] {
  return new TranscriptBuilder('2026-11-22T03:00:00.000Z', 20_000)
    .user('Rename the config loader to loadSettings and update the callers.')
    .edit('src/config.ts')
    .endTurn('Renamed it to loadConfigFile.')
    .user("No, that's not what I asked. loadSettings.")
    .edit('src/config.ts')
    .endTurn('Renamed to loadSettings; I also changed the return type.')
    .user("Don't change the return type. Revert that.")
    .edit('src/config.ts')
    .endTurn('Reverted the return type, and moved the file to lib/.')
    .user('I said only the name. Undo the move.')
    .events();
}

const batch = (events: AgentEvent[], o: Partial<ConsumeObserved> = {}): ConsumeObserved => ({
  status: {},
  generation: 2,
  from: START,
  prev: newAssessmentState(),
  events,
  next: { seq: events.at(-1)?.seq ?? 0, offset: 1000 },
  batch: 500,
  now: events.length ? Date.parse(events.at(-1)!.ts) : Date.parse('2026-11-22T03:00:00.000Z'),
  ...o,
});

describe('assessment plan: a batch', () => {
  it('nothing logged and no status yet: nothing to write', () => {
    expect(planConsume(batch([]), cfg)).toBeUndefined();
  });

  it('a quiet batch moves the position and writes the detector, with no Event and no intervention', () => {
    const events = new TranscriptBuilder().user('add a test').edit('a.test.ts').endTurn('Added.').events();
    const p = planConsume(batch(events), cfg)!;
    expect(p.status.assessment.position).toEqual(batch(events).next);
    expect(p.status.detector?.messages).toBeGreaterThan(0);
    expect(p.events).toEqual([]);
    expect(p.deliver).toBeUndefined();
    expect(p.status.conditions.some((c) => c.type === 'BreakerOpen')).toBe(false);
  });

  it('a correction storm opens the breaker: BreakerOpen=True, a Warning, the intervention pending', () => {
    const p = planConsume(batch(correctionStorm()), cfg)!;
    expect(p.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'BreakerOpen', status: 'True', observedGeneration: 2 }),
    );
    expect(p.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'BreakerOpen' })]);
    expect(p.deliver).toMatchObject({ type: 'ClarificationPause', text: cfg.breaker.texts.ClarificationPause });
    expect(p.status.assessment.pendingIntervention).toEqual(p.deliver);
    // The breaker's cooldown brings the session back.
    expect(p.requeueAfterMs).toBeGreaterThanOrEqual(1000);
  });

  it('a trip older than the cooldown is recorded as Stale, not sent', () => {
    const events = correctionStorm();
    const now = Date.parse(events.at(-1)!.ts) + cfg.breaker.cooldownMs + 60_000;
    const p = planConsume(batch(events, { now }), cfg)!;
    expect(p.deliver).toBeUndefined();
    expect(p.status.breaker.history?.at(-1)).toMatchObject({ result: 'Stale', delivered: false });
  });

  it('a full batch asks to come back at once', () => {
    const events = new TranscriptBuilder().user('go').endTurn('ok').events();
    expect(planConsume(batch(events, { batch: events.length }), cfg)!.requeueAfterMs).toBe(0);
  });
});

const pending: PendingIntervention = {
  id: '1-9',
  type: 'ClarificationPause',
  why: 'correction storm',
  text: 'Please stop and ask.',
  seq: 9,
  decidedTime: '2026-11-22T03:05:00.000Z',
  from: START,
};
const NOW = Date.parse('2026-11-22T03:06:00.000Z');
const running = (st: AgentSessionStatus = {}): AgentSession => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name: 'web', namespace: 'default' },
  spec: { agent: { command: ['true'] }, prompt: 'p' },
  status: { phase: 'Running', assessment: { pendingIntervention: pending } as never, breaker: {} as never, ...st },
});
const delivery = (o: Partial<DeliveryObserved> = {}): DeliveryObserved => ({
  session: running(),
  pending,
  arrived: false,
  graceMs: 30_000,
  now: NOW,
  ...o,
});

describe('assessment plan: a pending intervention', () => {
  it('a Running session is sent it', () => {
    expect(planDelivery(delivery(), cfg)).toEqual({ kind: 'send' });
  });

  it('not sent to a session that is not Running, nor under a policy that only observes', () => {
    expect(planDelivery(delivery({ session: running({ phase: 'Succeeded' }) }), cfg)).toMatchObject({
      kind: 'record',
      outcome: { delivered: false, result: 'NotRunning' },
    });
    const observe = { ...cfg, breaker: { ...cfg.breaker, deliver: false } };
    expect(planDelivery(delivery(), observe)).toMatchObject({ outcome: { result: 'Observe' } });
  });

  it('a frozen session keeps it for after the thaw', () => {
    expect(planDelivery(delivery({ session: running({ frozen: {} as never }) }), cfg)).toEqual({
      kind: 'wait',
      ms: FROZEN_WAIT_MS,
    });
  });

  it('after an attempt: delivered when its text arrived, else wait out the grace, then send again', () => {
    const attempted = { ...pending, attemptTime: new Date(NOW - 10_000).toISOString() };
    expect(planDelivery(delivery({ pending: attempted, arrived: true }), cfg)).toMatchObject({
      outcome: { delivered: true, result: 'DeliveredBeforeRestart' },
    });
    expect(planDelivery(delivery({ pending: attempted }), cfg)).toEqual({ kind: 'wait', ms: 20_000 });
    expect(planDelivery(delivery({ pending: attempted, now: NOW + 20_000 }), cfg)).toEqual({ kind: 'send' });
  });

  it("this process's own send is recorded as it answered", () => {
    const sent = { delivered: false, reason: 'Busy', message: 'a dialog is open', at: NOW };
    expect(planDelivery(delivery({ sent }), cfg)).toEqual({
      kind: 'record',
      outcome: { delivered: false, result: 'Busy', message: 'a dialog is open', at: NOW },
    });
  });

  it('the outcome moves the intervention from pending to the history, with its Event', () => {
    const out = deliveredStatus(running().status!, pending, {
      delivered: true,
      result: 'Delivered',
      message: 'ok',
      at: NOW,
    });
    expect(out.assessment.pendingIntervention).toBeUndefined();
    expect(out.breaker.interventions).toBe(1);
    expect(out.breaker.history?.at(-1)).toMatchObject({
      id: '1-9',
      delivered: true,
      deliveredTime: new Date(NOW).toISOString(),
    });
    expect(out.event).toMatchObject({ type: 'Normal', reason: 'InterventionDelivered' });
  });
});
