/**
 * A message posted on a session (orchctl.io/message), as its node plans it (messages.ts, pure):
 * typed only at an idle point of a live, unpaused run whose prompt went in; Delivering is recorded
 * by the actuator before typing; the outcome is written once with an Event; a Delivering with no
 * delivery in flight (the node stopped) is Unconfirmed and never typed again; each id is answered
 * once; a withdrawn message is Failed; a session with no live run fails it at once.
 */
import { describe, expect, it } from 'vitest';
import { MESSAGE_ANNOTATION } from '../../../../controller/api/message.js';
import type { AgentSessionStatus, MessageDeliveryStatus } from '../../../../controller/api/session.js';
import type { Condition } from '../../../../controller/api/types.js';
import { type MessageInput, planMessage } from '../../../../controller/reconcilers/session/messages.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = new Date(NOW).toISOString();
const delivered: Condition = {
  type: 'PromptDelivered',
  status: 'True',
  reason: 'DeliveredByArgument',
  message: '',
  lastTransitionTime: iso,
};
const idle: AgentSessionStatus = {
  phase: 'Running',
  run: 2,
  conditions: [delivered],
  agent: { run: 2, position: { offset: 0 } as never, counts: {}, hooks: true, turns: 1, state: 'idle' },
};
const post = (id: string, text = 'go on', extra: object = {}) => ({
  [MESSAGE_ANNOTATION]: JSON.stringify({ id, text, from: 'pipeline/p', ...extra }),
});
const plan = (status: AgentSessionStatus, over: Partial<MessageInput> = {}) =>
  planMessage({ annotations: post('m1'), status, live: true, now: NOW, ...over });
const kinds = (r: ReturnType<typeof planMessage>) =>
  r.effects.map((e) => (e.type === 'RecordEvent' ? `Event:${e.reason}` : e.type));

describe('planMessage', () => {
  it('an idle, live run: Delivering is handed to the actuator to record before it types', () => {
    const r = plan(idle, { annotations: post('m1', 'use key K', { force: true }) });
    expect(kinds(r)).toEqual(['DeliverMessage', 'WorkspaceLog']);
    expect(r.effects[0]).toEqual({
      type: 'DeliverMessage',
      run: 2,
      request: { id: 'm1', text: 'use key K', from: 'pipeline/p', force: true },
      record: {
        id: 'm1',
        from: 'pipeline/p',
        run: 2,
        state: 'Delivering',
        reason: 'Delivering',
        message: "typing 9 characters into run 2's pane",
        at: iso,
      },
    });
    // This pass leaves status.messageDelivery as it found it: the actuator's record is the one write.
    expect(r.delivery).toBeUndefined();
  });

  it('waits while paused, busy, starting, delivering its prompt, in a context step or without a pane', () => {
    const cases: [string, AgentSessionStatus, boolean][] = [
      [
        'Paused',
        { ...idle, pause: { run: 2, reason: 'RateLimited', since: iso, until: iso, message: '', holdsSlot: true } },
        true,
      ],
      ['AgentBusy', { ...idle, agent: { ...idle.agent!, state: 'busy' } }, true],
      ['Starting', { ...idle, phase: 'Starting' }, true],
      ['PromptPending', { ...idle, conditions: [{ ...delivered, status: 'Unknown', reason: 'Delivering' }] }, true],
      [
        'ContextAction',
        { ...idle, context: { run: 2, step: { name: 'Compact', since: iso, deadline: iso } } as never },
        true,
      ],
      ['NoPane', idle, false],
    ];
    for (const [reason, status, live] of cases) {
      const r = plan(status, { live });
      expect(r.delivery, reason).toMatchObject({ id: 'm1', state: 'Waiting', reason, run: 2 });
      expect(
        r.effects.some((e) => e.type === 'DeliverMessage'),
        reason,
      ).toBe(false);
      expect(r.dueMs).toBe(5000);
    }
    // The pause is told once (an Event), then the message just waits; it goes in once the pause is over.
    const paused = {
      ...idle,
      pause: { run: 2, reason: 'RateLimited' as const, since: iso, message: '', holdsSlot: true },
    };
    const first = plan(paused);
    expect(kinds(first)).toEqual(['Event:MessageWaiting']);
    expect(first.delivery?.message).toBe('the run is paused (RateLimited); sent when it resumes');
    const again = plan({ ...paused, messageDelivery: first.delivery });
    expect(again.effects).toEqual([]);
    expect(again.delivery).toBe(first.delivery);
    expect(kinds(plan({ ...idle, messageDelivery: first.delivery }))).toEqual(['DeliverMessage', 'WorkspaceLog']);
    // A pane-only agent nothing reports on ('starting', no source) is not held: verified delivery waits for its pane.
    expect(kinds(plan({ ...idle, agent: { ...idle.agent!, state: 'starting' } }))[0]).toBe('DeliverMessage');
  });

  it("the delivery's outcome is written once with an Event; the actuator may then forget it", () => {
    const delivering: MessageDeliveryStatus = {
      id: 'm1',
      run: 2,
      state: 'Delivering',
      reason: 'Delivering',
      message: '',
      at: iso,
    };
    const status = { ...idle, messageDelivery: delivering };
    expect(plan(status, { inFlight: { id: 'm1', result: 'pending' } })).toEqual({ delivery: delivering, effects: [] });
    const ok = plan(status, {
      inFlight: {
        id: 'm1',
        result: {
          delivered: true,
          reason: 'Confirmed',
          message: 'submitted and confirmed',
          retries: 1,
          confirmedBy: 'hook',
        },
      },
    });
    expect(ok.delivery).toEqual({
      ...delivering,
      state: 'Delivered',
      delivered: true,
      reason: 'Confirmed',
      message: 'submitted and confirmed',
      retries: 1,
      confirmedBy: 'hook',
    });
    expect(kinds(ok)).toEqual(['Event:MessageSent', 'MessageRecorded']);
    const bad = plan(status, {
      inFlight: { id: 'm1', result: { delivered: false, reason: 'Unconfirmed', message: 'never confirmed' } },
    });
    expect(bad.delivery).toMatchObject({ state: 'Failed', delivered: false, reason: 'Unconfirmed' });
    expect(kinds(bad)).toEqual(['Event:MessageNotConfirmed', 'MessageRecorded']);
    // Answered: the same id posted still is never typed again.
    expect(plan({ ...idle, messageDelivery: ok.delivery })).toEqual({ delivery: ok.delivery, effects: [] });
  });

  it('Delivering with nothing in flight: the node stopped mid-delivery; Unconfirmed, not typed again', () => {
    const delivering: MessageDeliveryStatus = {
      id: 'm1',
      run: 2,
      state: 'Delivering',
      reason: 'Delivering',
      message: '',
      at: iso,
    };
    for (const inFlight of [undefined, { id: 'older', result: 'pending' as const }]) {
      const r = plan({ ...idle, messageDelivery: delivering }, { inFlight });
      expect(r.delivery).toMatchObject({ id: 'm1', state: 'Unconfirmed', delivered: false });
      expect(kinds(r)).toEqual(['Event:MessageNotConfirmed']);
      expect(plan({ ...idle, messageDelivery: r.delivery }).effects).toEqual([]);
    }
  });

  it('withdrawn while it waited: Failed; no live run: Failed at once; a broken request: Failed', () => {
    const waiting: MessageDeliveryStatus = {
      id: 'm1',
      run: 2,
      state: 'Waiting',
      reason: 'AgentBusy',
      message: '',
      at: iso,
    };
    const withdrawn = plan({ ...idle, messageDelivery: waiting }, { annotations: {} });
    expect(withdrawn.delivery).toMatchObject({ id: 'm1', state: 'Failed', reason: 'Withdrawn' });
    for (const phase of ['Succeeded', 'Pending', 'Backoff', 'Stopping'] as const) {
      const r = plan({ ...idle, phase });
      expect(r.delivery).toMatchObject({ id: 'm1', state: 'Failed', reason: 'NotRunning' });
      expect(kinds(r)).toEqual(['Event:MessageNotConfirmed']);
    }
    const broken = plan(idle, { annotations: { [MESSAGE_ANNOTATION]: '{"id": "m2", "text": ""}' } });
    expect(broken.delivery).toMatchObject({
      id: 'm2',
      state: 'Failed',
      reason: 'Invalid',
      message: expect.stringMatching(/text is empty/),
    });
    const huge = plan(idle, { annotations: post('m3', 'x'.repeat(40_000)) });
    expect(huge.delivery).toMatchObject({ id: 'm3', reason: 'Invalid', message: expect.stringMatching(/over 32768/) });
    const notJson = plan(idle, { annotations: { [MESSAGE_ANNOTATION]: 'hello' } });
    expect(notJson.delivery).toMatchObject({ id: expect.stringMatching(/^invalid-/), state: 'Failed' });
    // No annotation, nothing recorded: nothing to do.
    expect(plan(idle, { annotations: undefined })).toEqual({ delivery: undefined, effects: [] });
  });
});
