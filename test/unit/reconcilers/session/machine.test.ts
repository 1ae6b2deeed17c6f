/**
 * The AgentSession lifecycle machine (controller/reconcilers/session/machine.ts), driven through
 * XState's pure API: initialTransition/transition return [snapshot, actions]; assign actions are
 * applied to context, named side effects come back as actions with a `type`.
 */
import { PHASES } from '../../../../controller/api/phases.js';
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import {
  ACTIVE_PHASES,
  nextSnapshot,
  sessionMachine,
  TERMINAL_PHASES,
  type LifecycleContext,
  type LifecycleEvent,
  type Phase,
  type RestartPolicy,
} from '../../../../controller/reconcilers/session/machine.js';

type Snap = ReturnType<typeof initialTransition<typeof sessionMachine>>[0];

const ALL_PHASES: Phase[] = [...PHASES];
const NAMED_ACTIONS = ['launchRun', 'sendStopKeys', 'killSession', 'captureOutput', 'scheduleRestart', 'escalate'];

const restart = (restartPolicy: RestartPolicy, maxRestarts: number): LifecycleEvent => ({
  type: 'RESTART',
  restartPolicy,
  maxRestarts,
});

/** Every event kind, with a representative payload. */
const ALL_EVENTS: LifecycleEvent[] = [
  { type: 'ADMIT' },
  { type: 'STARTED' },
  { type: 'START_FAILED', reason: 'CommandNotFound', message: 'no such agent' },
  { type: 'EXITED', exitCode: 0 },
  { type: 'EXITED', exitCode: 3 },
  { type: 'GONE' },
  { type: 'STOP' },
  { type: 'TIMEOUT' },
  { type: 'GRACE_EXPIRED' },
  restart('Always', 5),
  restart('OnFailure', 5),
  restart('Never', 5),
  { type: 'RESTART_DUE' },
  { type: 'NEW_RUN' },
];

/** A snapshot in `phase` with `ctx`, as the reconciler rebuilds it from status. */
function at(phase: Phase, ctx: Partial<LifecycleContext> = {}): Snap {
  return sessionMachine.resolveState({ value: phase, context: { run: 1, restarts: 0, ...ctx } }) as Snap;
}

/** One step: the next phase, context and the named actions requested (by type). */
function step(snap: Snap, event: LifecycleEvent) {
  const [next, actions] = transition(sessionMachine, snap, event);
  return { next, phase: next.value as Phase, ctx: next.context, actions: actions.map((a) => a.type) };
}

/** Runs a sequence of events from a fresh machine, collecting every requested action. */
function run(events: LifecycleEvent[], input: Partial<LifecycleContext> = {}) {
  let [snap] = initialTransition(sessionMachine, input);
  const actions: string[] = [];
  for (const e of events) {
    const r = step(snap, e);
    snap = r.next;
    actions.push(...r.actions);
  }
  return { phase: snap.value as Phase, ctx: snap.context, actions, snap };
}

describe('sessionMachine: initial state and input', () => {
  it('starts in Pending with run 0, no restarts and no stop reason', () => {
    const [snap, actions] = initialTransition(sessionMachine, {});
    expect(snap.value).toBe('Pending');
    expect(snap.context).toEqual({ run: 0, restarts: 0, stopReason: undefined });
    expect(actions.filter((a) => NAMED_ACTIONS.includes(a.type))).toEqual([]);
  });

  it('takes run, restarts and stopReason from input', () => {
    const [snap] = initialTransition(sessionMachine, { run: 4, restarts: 2, stopReason: 'Stopped' });
    expect(snap.value).toBe('Pending');
    expect(snap.context).toEqual({ run: 4, restarts: 2, stopReason: 'Stopped' });
  });

  it('phase sets partition the phases: active and terminal are disjoint', () => {
    expect([...TERMINAL_PHASES].sort()).toEqual(['Failed', 'Killed', 'Succeeded', 'TimedOut']);
    expect([...ACTIVE_PHASES].sort()).toEqual(['Running', 'Starting', 'Stopping']);
    for (const p of TERMINAL_PHASES) expect(ACTIVE_PHASES.has(p)).toBe(false);
    expect(Object.keys(sessionMachine.root.states).sort()).toEqual([...ALL_PHASES].sort());
  });
});

describe('sessionMachine: the transitions of the diagram', () => {
  it('Pending --ADMIT--> Starting: launches the next run and clears stopReason', () => {
    const r = step(at('Pending', { run: 2, restarts: 1, stopReason: 'TimedOut' }), { type: 'ADMIT' });
    expect(r.phase).toBe('Starting');
    expect(r.ctx).toEqual({ run: 3, restarts: 1, stopReason: undefined });
    expect(r.actions).toEqual(['launchRun']);
  });

  it('Starting --STARTED--> Running, with no side effects', () => {
    const r = step(at('Starting'), { type: 'STARTED' });
    expect(r.phase).toBe('Running');
    expect(r.actions).toEqual([]);
    expect(r.ctx).toEqual({ run: 1, restarts: 0, stopReason: undefined });
  });

  it('Starting --START_FAILED--> Failed', () => {
    const r = step(at('Starting'), { type: 'START_FAILED', reason: 'CommandNotFound', message: 'x' });
    expect(r.phase).toBe('Failed');
    expect(r.actions).toEqual([]);
  });

  it('Starting --EXITED--> Succeeded (0) or Failed (non-zero); --GONE--> Killed', () => {
    expect(step(at('Starting'), { type: 'EXITED', exitCode: 0 }).phase).toBe('Succeeded');
    expect(step(at('Starting'), { type: 'EXITED', exitCode: 127 }).phase).toBe('Failed');
    expect(step(at('Starting'), { type: 'GONE' }).phase).toBe('Killed');
  });

  it('Starting --STOP--> Stopping: marks Stopped and sends the stop keys', () => {
    const r = step(at('Starting'), { type: 'STOP' });
    expect(r.phase).toBe('Stopping');
    expect(r.ctx.stopReason).toBe('Stopped');
    expect(r.actions).toEqual(['sendStopKeys']);
  });

  it('Running --EXITED(0)--> Succeeded', () => {
    const r = step(at('Running'), { type: 'EXITED', exitCode: 0 });
    expect(r.phase).toBe('Succeeded');
    expect(r.actions).toEqual([]);
  });

  it.each([1, 2, 3, 127, 137, 255, -1])('Running --EXITED(%i)--> Failed', (exitCode) => {
    expect(step(at('Running'), { type: 'EXITED', exitCode }).phase).toBe('Failed');
  });

  it('Running --GONE--> Killed, without a stop reason', () => {
    const r = step(at('Running'), { type: 'GONE' });
    expect(r.phase).toBe('Killed');
    expect(r.ctx.stopReason).toBeUndefined();
    expect(r.actions).toEqual([]);
  });

  it('Running --STOP--> Stopping: marks Stopped and sends the stop keys', () => {
    const r = step(at('Running'), { type: 'STOP' });
    expect(r.phase).toBe('Stopping');
    expect(r.ctx.stopReason).toBe('Stopped');
    expect(r.actions).toEqual(['sendStopKeys']);
  });

  it('Running --TIMEOUT--> Stopping: marks TimedOut, captures the output, then sends the stop keys', () => {
    const r = step(at('Running'), { type: 'TIMEOUT' });
    expect(r.phase).toBe('Stopping');
    expect(r.ctx.stopReason).toBe('TimedOut');
    expect(r.actions).toEqual(['captureOutput', 'sendStopKeys']);
  });

  describe('Stopping --EXITED/GONE--> Killed | TimedOut (guard stoppedForTimeout)', () => {
    const cases: [LifecycleContext['stopReason'], LifecycleEvent, Phase][] = [
      ['Stopped', { type: 'EXITED', exitCode: 0 }, 'Killed'],
      ['Stopped', { type: 'EXITED', exitCode: 130 }, 'Killed'],
      ['Stopped', { type: 'GONE' }, 'Killed'],
      [undefined, { type: 'EXITED', exitCode: 0 }, 'Killed'],
      [undefined, { type: 'GONE' }, 'Killed'],
      ['TimedOut', { type: 'EXITED', exitCode: 0 }, 'TimedOut'],
      ['TimedOut', { type: 'EXITED', exitCode: 143 }, 'TimedOut'],
      ['TimedOut', { type: 'GONE' }, 'TimedOut'],
    ];
    it.each(cases)('stopReason %s + %o -> %s', (stopReason, event, expected) => {
      const r = step(at('Stopping', { stopReason }), event);
      expect(r.phase).toBe(expected);
      expect(r.ctx.stopReason).toBe(stopReason);
      expect(r.actions).toEqual([]);
    });

    it('an exit code 0 during Stopping is never Succeeded', () => {
      expect(step(at('Stopping', { stopReason: 'Stopped' }), { type: 'EXITED', exitCode: 0 }).phase).not.toBe(
        'Succeeded',
      );
    });
  });

  it('Stopping --GRACE_EXPIRED--> Stopping: kills the session and waits for it to go', () => {
    const r = step(at('Stopping', { stopReason: 'Stopped' }), { type: 'GRACE_EXPIRED' });
    expect(r.phase).toBe('Stopping');
    expect(r.ctx).toEqual({ run: 1, restarts: 0, stopReason: 'Stopped' });
    expect(r.actions).toEqual(['killSession']);
    // It keeps asking for the kill on every GRACE_EXPIRED until the pane is gone.
    expect(step(r.next, { type: 'GRACE_EXPIRED' }).actions).toEqual(['killSession']);
    expect(step(r.next, { type: 'GONE' }).phase).toBe('Killed');
  });

  it('Backoff --RESTART_DUE--> Pending, keeping the restart count', () => {
    const r = step(at('Backoff', { run: 2, restarts: 2 }), { type: 'RESTART_DUE' });
    expect(r.phase).toBe('Pending');
    expect(r.ctx).toEqual({ run: 2, restarts: 2, stopReason: undefined });
    expect(r.actions).toEqual([]);
  });

  it('Backoff --STOP--> Killed with stopReason Stopped, without stop keys (nothing runs)', () => {
    const r = step(at('Backoff', { restarts: 1 }), { type: 'STOP' });
    expect(r.phase).toBe('Killed');
    expect(r.ctx.stopReason).toBe('Stopped');
    expect(r.ctx.restarts).toBe(1);
    expect(r.actions).toEqual([]);
  });

  it('Backoff --NEW_RUN--> Pending, resetting restarts', () => {
    const r = step(at('Backoff', { run: 3, restarts: 2 }), { type: 'NEW_RUN' });
    expect(r.phase).toBe('Pending');
    expect(r.ctx).toEqual({ run: 3, restarts: 0, stopReason: undefined });
  });

  it.each(['Succeeded', 'Failed', 'Killed', 'TimedOut'] as Phase[])(
    '%s --NEW_RUN--> Pending, resetting restarts',
    (phase) => {
      const r = step(at(phase, { run: 5, restarts: 3, stopReason: phase === 'TimedOut' ? 'TimedOut' : undefined }), {
        type: 'NEW_RUN',
      });
      expect(r.phase).toBe('Pending');
      expect(r.ctx.restarts).toBe(0);
      expect(r.ctx.run).toBe(5);
      expect(r.actions).toEqual([]);
    },
  );
});

describe('sessionMachine: RESTART guards', () => {
  describe.each(['Failed', 'Killed', 'TimedOut'] as Phase[])('%s (restarted by OnFailure and Always)', (phase) => {
    it.each(['OnFailure', 'Always'] as RestartPolicy[])(
      '%s under the cap -> Backoff, counts the restart, schedules it',
      (policy) => {
        const r = step(at(phase, { restarts: 0 }), restart(policy, 1));
        expect(r.phase).toBe('Backoff');
        expect(r.ctx.restarts).toBe(1);
        expect(r.actions).toEqual(['scheduleRestart']);
      },
    );

    it.each(['OnFailure', 'Always'] as RestartPolicy[])(
      '%s just under the cap (restarts = max-1) still restarts',
      (policy) => {
        const r = step(at(phase, { restarts: 2 }), restart(policy, 3));
        expect(r.phase).toBe('Backoff');
        expect(r.ctx.restarts).toBe(3);
      },
    );

    it.each(['OnFailure', 'Always'] as RestartPolicy[])(
      '%s at the cap -> stays, escalates, restart count unchanged',
      (policy) => {
        const r = step(at(phase, { restarts: 3 }), restart(policy, 3));
        expect(r.phase).toBe(phase);
        expect(r.ctx.restarts).toBe(3);
        expect(r.actions).toEqual(['escalate']);
      },
    );

    it.each(['OnFailure', 'Always'] as RestartPolicy[])(
      '%s above the cap (cap lowered since) -> escalates',
      (policy) => {
        const r = step(at(phase, { restarts: 5 }), restart(policy, 2));
        expect(r.phase).toBe(phase);
        expect(r.actions).toEqual(['escalate']);
      },
    );

    it.each(['OnFailure', 'Always'] as RestartPolicy[])('%s with maxRestarts 0 escalates at once', (policy) => {
      const r = step(at(phase), restart(policy, 0));
      expect(r.phase).toBe(phase);
      expect(r.actions).toEqual(['escalate']);
    });

    it.each([0, 1, 100])('Never (maxRestarts %i) neither restarts nor escalates', (max) => {
      const r = step(at(phase), restart('Never', max));
      expect(r.phase).toBe(phase);
      expect(r.ctx).toEqual(at(phase).context);
      expect(r.actions).toEqual([]);
    });
  });

  describe('Succeeded (restarted only by Always)', () => {
    it('Always under the cap -> Backoff', () => {
      const r = step(at('Succeeded'), restart('Always', 2));
      expect(r.phase).toBe('Backoff');
      expect(r.ctx.restarts).toBe(1);
      expect(r.actions).toEqual(['scheduleRestart']);
    });

    it('Always at the cap -> stays Succeeded and escalates', () => {
      const r = step(at('Succeeded', { restarts: 2 }), restart('Always', 2));
      expect(r.phase).toBe('Succeeded');
      expect(r.actions).toEqual(['escalate']);
    });

    it.each([0, 1, 5])('OnFailure (maxRestarts %i) neither restarts nor escalates', (max) => {
      const r = step(at('Succeeded', { restarts: 0 }), restart('OnFailure', max));
      expect(r.phase).toBe('Succeeded');
      expect(r.actions).toEqual([]);
    });

    it.each([0, 1, 5])('Never (maxRestarts %i) neither restarts nor escalates', (max) => {
      const r = step(at('Succeeded'), restart('Never', max));
      expect(r.phase).toBe('Succeeded');
      expect(r.actions).toEqual([]);
    });
  });

  it('restarts count up to the cap across Backoff cycles, then escalate; NEW_RUN resets them', () => {
    const cycle: LifecycleEvent[] = [
      { type: 'ADMIT' },
      { type: 'STARTED' },
      { type: 'EXITED', exitCode: 1 },
      restart('OnFailure', 2),
    ];
    let r = run([...cycle]);
    expect(r).toMatchObject({ phase: 'Backoff', ctx: { run: 1, restarts: 1 } });
    r = run([...cycle, { type: 'RESTART_DUE' }, ...cycle]);
    expect(r).toMatchObject({ phase: 'Backoff', ctx: { run: 2, restarts: 2 } });
    r = run([...cycle, { type: 'RESTART_DUE' }, ...cycle, { type: 'RESTART_DUE' }, ...cycle]);
    expect(r).toMatchObject({ phase: 'Failed', ctx: { run: 3, restarts: 2 } });
    expect(r.actions).toEqual([
      'launchRun',
      'scheduleRestart',
      'launchRun',
      'scheduleRestart',
      'launchRun',
      'escalate',
    ]);
    const again = step(r.snap, { type: 'NEW_RUN' });
    expect(again).toMatchObject({ phase: 'Pending', ctx: { run: 3, restarts: 0 } });
    expect(step(again.next, { type: 'ADMIT' }).ctx).toEqual({ run: 4, restarts: 0, stopReason: undefined });
  });
});

describe('sessionMachine: context', () => {
  it('run increments by one on every ADMIT and only then', () => {
    const r = run([
      { type: 'ADMIT' },
      { type: 'STARTED' },
      { type: 'EXITED', exitCode: 0 },
      { type: 'NEW_RUN' },
      { type: 'ADMIT' },
      { type: 'START_FAILED', reason: 'x', message: 'y' },
      restart('OnFailure', 3),
      { type: 'RESTART_DUE' },
      { type: 'ADMIT' },
    ]);
    expect(r.phase).toBe('Starting');
    expect(r.ctx.run).toBe(3);
    expect(r.ctx.restarts).toBe(1);
  });

  it('stopReason survives to the terminal phase and is cleared only by the next ADMIT', () => {
    const r = run([{ type: 'ADMIT' }, { type: 'STARTED' }, { type: 'TIMEOUT' }, { type: 'GONE' }]);
    expect(r).toMatchObject({ phase: 'TimedOut', ctx: { stopReason: 'TimedOut' } });
    const pending = step(r.snap, { type: 'NEW_RUN' });
    expect(pending.ctx.stopReason).toBe('TimedOut');
    expect(step(pending.next, { type: 'ADMIT' }).ctx.stopReason).toBeUndefined();
  });

  it('a run stopped by the user ends Killed with stopReason Stopped', () => {
    const r = run([
      { type: 'ADMIT' },
      { type: 'STARTED' },
      { type: 'STOP' },
      { type: 'GRACE_EXPIRED' },
      { type: 'GONE' },
    ]);
    expect(r).toMatchObject({ phase: 'Killed', ctx: { run: 1, stopReason: 'Stopped' } });
    expect(r.actions).toEqual(['launchRun', 'sendStopKeys', 'killSession']);
  });

  it('a timed-out run ends TimedOut, with output captured before the stop keys', () => {
    const r = run([{ type: 'ADMIT' }, { type: 'STARTED' }, { type: 'TIMEOUT' }, { type: 'EXITED', exitCode: 0 }]);
    expect(r).toMatchObject({ phase: 'TimedOut', ctx: { stopReason: 'TimedOut' } });
    expect(r.actions).toEqual(['launchRun', 'captureOutput', 'sendStopKeys']);
  });

  it('a second STOP or TIMEOUT while Stopping changes nothing (the first reason sticks)', () => {
    const stopping = step(at('Running'), { type: 'TIMEOUT' }).next;
    for (const e of [{ type: 'STOP' }, { type: 'TIMEOUT' }] as LifecycleEvent[]) {
      const r = step(stopping, e);
      expect(r.phase).toBe('Stopping');
      expect(r.ctx.stopReason).toBe('TimedOut');
      expect(r.actions).toEqual([]);
    }
  });
});

describe('sessionMachine: events each phase ignores', () => {
  /** The event kinds each phase reacts to (anything else must leave it untouched). */
  const handled: Record<Phase, string[]> = {
    Pending: ['ADMIT'],
    Starting: ['STARTED', 'START_FAILED', 'EXITED', 'GONE', 'STOP'],
    Running: ['EXITED', 'GONE', 'STOP', 'TIMEOUT'],
    Stopping: ['EXITED', 'GONE', 'GRACE_EXPIRED'],
    Backoff: ['RESTART_DUE', 'STOP', 'NEW_RUN'],
    Succeeded: ['RESTART', 'NEW_RUN'],
    Failed: ['RESTART', 'NEW_RUN'],
    Killed: ['RESTART', 'NEW_RUN'],
    TimedOut: ['RESTART', 'NEW_RUN'],
  };

  const ignored = ALL_PHASES.flatMap((phase) =>
    ALL_EVENTS.filter((e) => !handled[phase].includes(e.type)).map(
      (e) => [phase, e.type, e] as [Phase, string, LifecycleEvent],
    ),
  );

  it.each(ignored)('%s ignores %s', (phase, _type, event) => {
    const before = at(phase, {
      run: 2,
      restarts: 1,
      stopReason: phase === 'TimedOut' || phase === 'Stopping' ? 'TimedOut' : undefined,
    });
    const r = step(before, event);
    expect(r.phase).toBe(phase);
    expect(r.ctx).toEqual(before.context);
    expect(r.actions).toEqual([]);
  });

  it('terminal phases do not react to the pane (EXITED/GONE), to STOP or to TIMEOUT', () => {
    for (const phase of TERMINAL_PHASES) {
      for (const e of [
        { type: 'EXITED', exitCode: 1 },
        { type: 'GONE' },
        { type: 'STOP' },
        { type: 'TIMEOUT' },
        { type: 'ADMIT' },
      ] as LifecycleEvent[]) {
        expect(step(at(phase), e).phase).toBe(phase);
      }
    }
  });

  it('the machine accepts, per phase, exactly the event kinds listed above', () => {
    for (const phase of ALL_PHASES) {
      const node = sessionMachine.root.states[phase];
      expect([...node.ownEvents].sort(), phase).toEqual([...handled[phase]].sort());
    }
  });
});

describe('sessionMachine: resuming from a persisted snapshot', () => {
  it('resolveState rebuilds a snapshot that continues where it left off', () => {
    // What the reconciler does: phase + status.run/restarts + lifecycle.stopReason.
    const snap = sessionMachine.resolveState({
      value: 'Stopping',
      context: { run: 7, restarts: 2, stopReason: 'TimedOut' },
    });
    expect(snap.value).toBe('Stopping');
    expect(snap.status).toBe('active');
    const r = step(snap as Snap, { type: 'GONE' });
    expect(r.phase).toBe('TimedOut');
    expect(r.ctx).toEqual({ run: 7, restarts: 2, stopReason: 'TimedOut' });
  });

  it('a restored terminal snapshot applies the restart cap from its persisted restarts', () => {
    const snap = sessionMachine.resolveState({ value: 'Failed', context: { run: 4, restarts: 3 } }) as Snap;
    expect(step(snap, restart('OnFailure', 3)).actions).toEqual(['escalate']);
    expect(step(snap, restart('OnFailure', 4))).toMatchObject({ phase: 'Backoff', ctx: { run: 4, restarts: 4 } });
  });

  it('every phase can be restored, and the restored snapshot equals one reached by transitions', () => {
    const reached = run([
      { type: 'ADMIT' },
      { type: 'STARTED' },
      { type: 'EXITED', exitCode: 2 },
      restart('Always', 3),
    ]);
    const restored = sessionMachine.resolveState({ value: reached.phase, context: reached.ctx });
    expect(restored.value).toBe(reached.snap.value);
    expect(restored.context).toEqual(reached.snap.context);
    for (const e of ALL_EVENTS) {
      const a = step(reached.snap, e);
      const b = step(restored as Snap, e);
      expect([b.phase, b.ctx, b.actions]).toEqual([a.phase, a.ctx, a.actions]);
    }
    for (const phase of ALL_PHASES)
      expect(sessionMachine.resolveState({ value: phase, context: { run: 0, restarts: 0 } }).value).toBe(phase);
  });

  it('a restored snapshot survives a JSON round trip of its context', () => {
    const snap = at('Running', { run: 3, restarts: 1, stopReason: undefined });
    const persisted = JSON.parse(
      JSON.stringify({ phase: snap.value, run: snap.context.run, restarts: snap.context.restarts }),
    );
    const back = sessionMachine.resolveState({
      value: persisted.phase,
      context: { run: persisted.run, restarts: persisted.restarts },
    }) as Snap;
    expect(step(back, { type: 'TIMEOUT' })).toMatchObject({
      phase: 'Stopping',
      ctx: { run: 3, restarts: 1, stopReason: 'TimedOut' },
    });
  });

  it('transition never mutates the snapshot it is given', () => {
    const snap = at('Failed', { run: 2, restarts: 1 });
    const frozen = structuredClone({ value: snap.value, context: snap.context });
    step(snap, restart('OnFailure', 5));
    step(snap, { type: 'NEW_RUN' });
    expect({ value: snap.value, context: snap.context }).toEqual(frozen);
  });
});

describe('nextSnapshot (the plan’s transition, one actor scope for every call)', () => {
  it('gives what xstate’s transition gives, for every event from every phase, context and stop reason', () => {
    const contexts: Partial<LifecycleContext>[] = [
      {},
      { restarts: 5 },
      { run: 3, restarts: 2, stopReason: 'TimedOut' },
    ];
    for (const phase of ALL_PHASES)
      for (const ctx of contexts)
        for (const e of ALL_EVENTS) {
          const [want, wantActions] = transition(sessionMachine, at(phase, ctx), e);
          const [got, gotActions] = nextSnapshot(at(phase, ctx), e);
          const what = `${phase} ${JSON.stringify(ctx)} ${e.type}`;
          expect([got.value, got.context, got.status], what).toEqual([want.value, want.context, want.status]);
          expect(
            gotActions.map((a) => a.type),
            what,
          ).toEqual(wantActions.map((a) => a.type));
        }
  });
});
