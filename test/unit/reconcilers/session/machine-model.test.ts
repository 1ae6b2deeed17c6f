/**
 * Model-based tests of the AgentSession lifecycle machine with xstate/graph: every phase is
 * reachable with realistic event samples, the transition relation is exactly the documented
 * diagram, and every generated path, replayed through `transition`, keeps the invariants.
 *
 * The state space is infinite (run grows on every ADMIT), so traversals stop once run > 2
 * (shortest paths) or run > 1 (simple paths), or abstract `run` away in serializeState.
 */
import { PHASES } from '../../../../controller/api/phases.js';
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { createTestModel, getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import {
  sessionMachine,
  TERMINAL_PHASES,
  type LifecycleEvent,
  type Phase,
  type RestartPolicy,
} from '../../../../controller/reconcilers/session/machine.js';

type Snap = ReturnType<typeof initialTransition<typeof sessionMachine>>[0];
interface Path {
  state: Snap;
  steps: { event: { type: string }; state: Snap }[];
}

const ALL_PHASES: Phase[] = [...PHASES];

const RESTARTS: LifecycleEvent[] = (['OnFailure', 'Always', 'Never'] as RestartPolicy[]).flatMap((restartPolicy) =>
  [0, 1].map((maxRestarts) => ({ type: 'RESTART' as const, restartPolicy, maxRestarts })),
);

/** Event samples: payload variants for the events that carry data. */
const EVENTS: LifecycleEvent[] = [
  { type: 'ADMIT' },
  { type: 'STARTED' },
  { type: 'START_FAILED', reason: 'CommandNotFound', message: 'agent not found' },
  { type: 'EXITED', exitCode: 0 },
  { type: 'EXITED', exitCode: 3 },
  { type: 'GONE' },
  { type: 'STOP' },
  { type: 'TIMEOUT' },
  { type: 'GRACE_EXPIRED' },
  ...RESTARTS,
  { type: 'RESTART_DUE' },
  { type: 'NEW_RUN' },
];

const input = {};
const runAtMost = (n: number) => (s: Snap) => s.context.run > n;

/** Follows a generated path with `transition`, checking the invariants at every step. */
function replay(path: Path): Snap {
  let [snap] = initialTransition(sessionMachine, input);
  let timedOutThisRun = false; // a TIMEOUT was accepted since the last ADMIT
  let maxRestartsSeen = 0; // the largest maxRestarts a restart was granted under since the last NEW_RUN
  const route = path.steps.map((s) => s.event.type).join(' → ');
  for (const { event, state: expected } of path.steps) {
    if (event.type.startsWith('xstate.')) continue; // the init step
    const e = event as LifecycleEvent;
    const [next, actionObjs] = transition(sessionMachine, snap, e);
    const actions = actionObjs.map((a) => a.type);
    const from = snap.value as Phase;
    const to = next.value as Phase;
    const where = `${from} --${JSON.stringify(e)}--> ${to} (path ${route})`;

    // run never decreases and moves by exactly one, on an accepted ADMIT.
    expect(next.context.run, where).toBe(snap.context.run + (from === 'Pending' && e.type === 'ADMIT' ? 1 : 0));
    if (e.type === 'ADMIT' && from === 'Pending') {
      expect(to, where).toBe('Starting');
      expect(actions, where).toEqual(['launchRun']);
      expect(next.context.stopReason, where).toBeUndefined();
      timedOutThisRun = false;
    }
    if (from === 'Running' && e.type === 'TIMEOUT') timedOutThisRun = true;

    // Backoff is only entered through RESTART, under a policy that covers the ended phase, below the cap.
    if (to === 'Backoff' && from !== 'Backoff') {
      expect(e.type, where).toBe('RESTART');
      const r = e as Extract<LifecycleEvent, { type: 'RESTART' }>;
      expect(r.restartPolicy, where).not.toBe('Never');
      if (from === 'Succeeded') expect(r.restartPolicy, where).toBe('Always');
      expect(TERMINAL_PHASES.has(from), where).toBe(true);
      expect(next.context.restarts, where).toBe(snap.context.restarts + 1);
      expect(next.context.restarts, where).toBeLessThanOrEqual(r.maxRestarts);
      expect(actions, where).toEqual(['scheduleRestart']);
      maxRestartsSeen = Math.max(maxRestartsSeen, r.maxRestarts);
    }
    // restarts only change by counting one (into Backoff) or by a reset to 0 (NEW_RUN).
    if (next.context.restarts !== snap.context.restarts) {
      expect(to === 'Backoff' || (e.type === 'NEW_RUN' && next.context.restarts === 0), where).toBe(true);
    }
    if (e.type === 'NEW_RUN' && to === 'Pending') {
      expect(next.context.restarts, where).toBe(0);
      maxRestartsSeen = 0;
    }
    // restarts never exceed the largest cap a restart was granted under.
    expect(next.context.restarts, where).toBeLessThanOrEqual(maxRestartsSeen);

    // TimedOut only after a TIMEOUT in this run, through Stopping, with the matching stop reason.
    if (to === 'TimedOut' && from !== 'TimedOut') {
      expect(from, where).toBe('Stopping');
      expect(timedOutThisRun, where).toBe(true);
    }
    if (to === 'TimedOut') expect(next.context.stopReason, where).toBe('TimedOut');
    // Stopping only through STOP or TIMEOUT, asking for the stop keys.
    if (to === 'Stopping' && from !== 'Stopping') {
      expect(['STOP', 'TIMEOUT'], where).toContain(e.type);
      expect(actions.at(-1), where).toBe('sendStopKeys');
      expect(next.context.stopReason, where).toBe(e.type === 'TIMEOUT' ? 'TimedOut' : 'Stopped');
    }
    // Succeeded only on a clean exit of a run nobody stopped.
    if (to === 'Succeeded' && from !== 'Succeeded') {
      expect(['Starting', 'Running'], where).toContain(from);
      expect(e, where).toEqual({ type: 'EXITED', exitCode: 0 });
    }
    // Pending is only re-entered when a restart is due or a new run is asked for.
    if (to === 'Pending' && from !== 'Pending') expect(['RESTART_DUE', 'NEW_RUN'], where).toContain(e.type);

    // Named actions only where the diagram puts them.
    if (actions.includes('escalate')) {
      expect(e.type, where).toBe('RESTART');
      expect(to, where).toBe(from);
      expect(TERMINAL_PHASES.has(from), where).toBe(true);
      const r = e as Extract<LifecycleEvent, { type: 'RESTART' }>;
      expect(r.restartPolicy, where).not.toBe('Never');
      expect(snap.context.restarts, where).toBeGreaterThanOrEqual(r.maxRestarts);
    }
    if (actions.includes('killSession'))
      expect([from, to, e.type], where).toEqual(['Stopping', 'Stopping', 'GRACE_EXPIRED']);
    if (actions.includes('captureOutput'))
      expect([from, to, e.type], where).toEqual(['Running', 'Stopping', 'TIMEOUT']);
    if (actions.includes('launchRun')) expect([from, e.type], where).toEqual(['Pending', 'ADMIT']);
    if (actions.includes('scheduleRestart')) expect(to, where).toBe('Backoff');
    if (actions.includes('sendStopKeys')) expect(to, where).toBe('Stopping');

    // The path generator and `transition` agree.
    expect(next.value, where).toEqual(expected.value);
    expect(next.context, where).toEqual(expected.context);
    snap = next;
  }
  expect(snap.value).toEqual(path.state.value);
  expect(snap.context).toEqual(path.state.context);
  return snap;
}

describe('sessionMachine model: reachability', () => {
  it('every phase is reachable from Pending with the event samples', () => {
    const paths = getShortestPaths(sessionMachine, {
      events: EVENTS,
      input,
      stopWhen: runAtMost(2),
    }) as unknown as Path[];
    const reached = new Set(paths.map((p) => p.state.value as Phase));
    expect([...reached].sort()).toEqual([...ALL_PHASES].sort());
    // The shortest route to each phase is the obvious one.
    const shortest = (phase: Phase) =>
      paths
        .filter((p) => p.state.value === phase)
        .map((p) => p.steps.filter((s) => !s.event.type.startsWith('xstate.')).map((s) => s.event.type))
        .sort((a, b) => a.length - b.length)[0];
    expect(shortest('Running')).toEqual(['ADMIT', 'STARTED']);
    expect(shortest('Failed')).toEqual(['ADMIT', 'START_FAILED']);
    expect(shortest('Stopping')).toEqual(['ADMIT', 'STOP']);
    expect(shortest('TimedOut')).toEqual(['ADMIT', 'STARTED', 'TIMEOUT', 'EXITED']);
    expect(shortest('Backoff')).toEqual(['ADMIT', 'START_FAILED', 'RESTART']);
  });

  it('with only restartPolicy Never, Backoff is unreachable', () => {
    const events = EVENTS.filter((e) => e.type !== 'RESTART' || e.restartPolicy === 'Never');
    const paths = getShortestPaths(sessionMachine, { events, input, stopWhen: runAtMost(2) }) as unknown as Path[];
    const reached = new Set(paths.map((p) => p.state.value));
    expect(reached.has('Backoff')).toBe(false);
    expect([...reached].sort()).toEqual(ALL_PHASES.filter((p) => p !== 'Backoff').sort());
  });

  it('with maxRestarts 0 only, Backoff is unreachable (every restart escalates)', () => {
    const events = EVENTS.filter((e) => e.type !== 'RESTART' || e.maxRestarts === 0);
    const paths = getShortestPaths(sessionMachine, { events, input, stopWhen: runAtMost(2) }) as unknown as Path[];
    expect(paths.some((p) => p.state.value === 'Backoff')).toBe(false);
  });

  it('TimedOut is unreachable without TIMEOUT, Stopping without STOP or TIMEOUT', () => {
    const noTimeout = getShortestPaths(sessionMachine, {
      events: EVENTS,
      input,
      stopWhen: runAtMost(2),
      filterEvents: (_s, e) => e.type !== 'TIMEOUT',
    }) as unknown as Path[];
    expect(noTimeout.some((p) => p.state.value === 'TimedOut')).toBe(false);
    expect(noTimeout.some((p) => p.state.value === 'Stopping')).toBe(true);
    const noStop = getShortestPaths(sessionMachine, {
      events: EVENTS,
      input,
      stopWhen: runAtMost(2),
      filterEvents: (_s, e) => e.type !== 'TIMEOUT' && e.type !== 'STOP',
    }) as unknown as Path[];
    expect(noStop.some((p) => p.state.value === 'Stopping' || p.state.value === 'TimedOut')).toBe(false);
  });
});

/**
 * The adjacency map with `run` abstracted away, so the graph is finite (restarts stay bounded
 * by the samples' caps).
 */
function runAbstractedAdjacency() {
  const adj = getAdjacencyMap(sessionMachine, {
    events: EVENTS,
    input,
    serializeState: (s) => JSON.stringify([s.value, s.context.restarts, s.context.stopReason ?? null]),
    serializeEvent: (e) => JSON.stringify(e),
  });
  return Object.values(adj).map(({ state, transitions }) => ({
    state: state as Snap,
    transitions: Object.values(transitions) as { event: LifecycleEvent; state: Snap }[],
  }));
}

describe('sessionMachine model: the transition relation is the documented diagram', () => {
  it('the phase-changing edges are exactly those of the diagram', () => {
    const adj = runAbstractedAdjacency();
    const edges = new Set<string>();
    const selfLoops = new Set<string>();
    for (const { state, transitions } of adj) {
      for (const { event, state: next } of transitions) {
        const edge = `${state.value} --${event.type}--> ${next.value}`;
        if (state.value !== next.value) edges.add(edge);
        // The samples are offered in every state; count a self-loop only if the phase handles the event.
        else if (sessionMachine.root.states[state.value as Phase].ownEvents.includes(event.type)) selfLoops.add(edge);
      }
    }
    expect([...edges].sort()).toEqual(
      [
        'Pending --ADMIT--> Starting',
        'Starting --STARTED--> Running',
        'Starting --START_FAILED--> Failed',
        'Starting --EXITED--> Succeeded',
        'Starting --EXITED--> Failed',
        'Starting --GONE--> Killed',
        'Starting --STOP--> Stopping',
        'Running --EXITED--> Succeeded',
        'Running --EXITED--> Failed',
        'Running --GONE--> Killed',
        'Running --STOP--> Stopping',
        'Running --TIMEOUT--> Stopping',
        'Stopping --EXITED--> Killed',
        'Stopping --EXITED--> TimedOut',
        'Stopping --GONE--> Killed',
        'Stopping --GONE--> TimedOut',
        'Backoff --RESTART_DUE--> Pending',
        'Backoff --STOP--> Killed',
        'Backoff --NEW_RUN--> Pending',
        'Succeeded --RESTART--> Backoff',
        'Succeeded --NEW_RUN--> Pending',
        'Failed --RESTART--> Backoff',
        'Failed --NEW_RUN--> Pending',
        'Killed --RESTART--> Backoff',
        'Killed --NEW_RUN--> Pending',
        'TimedOut --RESTART--> Backoff',
        'TimedOut --NEW_RUN--> Pending',
      ].sort(),
    );
    // Staying put happens only for GRACE_EXPIRED (kill and wait) and RESTART (escalate or not covered).
    expect([...selfLoops].sort()).toEqual(
      [
        'Stopping --GRACE_EXPIRED--> Stopping',
        'Succeeded --RESTART--> Succeeded',
        'Failed --RESTART--> Failed',
        'Killed --RESTART--> Killed',
        'TimedOut --RESTART--> TimedOut',
      ].sort(),
    );
  });

  it('the run-abstracted graph is finite and small', () => {
    const adj = runAbstractedAdjacency();
    // 9 phases × restarts 0..1 × stopReason (none | Stopped | TimedOut) at most.
    expect(adj.length).toBeLessThanOrEqual(9 * 2 * 3);
    expect(new Set(adj.map((a) => a.state.value))).toEqual(new Set(ALL_PHASES));
    for (const { state } of adj) expect(state.context.restarts).toBeLessThanOrEqual(1);
  });
});

describe('sessionMachine model: generated paths keep the invariants', () => {
  it('every shortest path (run ≤ 2) replays through transition with the invariants holding', () => {
    const paths = getShortestPaths(sessionMachine, {
      events: EVENTS,
      input,
      stopWhen: runAtMost(2),
    }) as unknown as Path[];
    expect(paths.length).toBeGreaterThan(ALL_PHASES.length);
    for (const p of paths) replay(p);
  });

  it('every simple path (run ≤ 1) replays through transition with the invariants holding', () => {
    const paths = getSimplePaths(sessionMachine, {
      events: EVENTS,
      input,
      stopWhen: runAtMost(1),
    }) as unknown as Path[];
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.length).toBeLessThan(5000);
    for (const p of paths) replay(p);
    // Simple paths cover restart, escalation and re-run routes into every phase.
    expect(new Set(paths.map((p) => p.state.value))).toEqual(new Set(ALL_PHASES));
  });

  it('restart cycles under maxRestarts 1 never count past 1 (simple paths, run ≤ 2)', () => {
    const events = EVENTS.filter((e) => e.type !== 'RESTART' || e.maxRestarts === 1);
    const paths = getSimplePaths(sessionMachine, {
      events,
      input,
      stopWhen: runAtMost(2),
      // Keep the explosion bounded: one failure mode and no user stop.
      filterEvents: (_s, e) => !['STOP', 'TIMEOUT', 'GONE', 'START_FAILED', 'GRACE_EXPIRED'].includes(e.type),
    }) as unknown as Path[];
    expect(paths.length).toBeLessThan(5000);
    for (const p of paths) {
      replay(p);
      for (const s of p.steps) expect(s.state.context.restarts).toBeLessThanOrEqual(1);
    }
    // A second restart in a row escalates instead: Failed with restarts 1 is reached.
    expect(paths.some((p) => p.state.value === 'Failed' && p.state.context.restarts === 1)).toBe(true);
  });
});

describe('sessionMachine model: createTestModel', () => {
  const model = createTestModel(sessionMachine, { events: EVENTS, input, stopWhen: runAtMost(2) } as Parameters<
    typeof createTestModel<typeof sessionMachine>
  >[1]);

  it('its shortest paths reach every phase and pass per-state assertions', async () => {
    // Paths that are prefixes of longer ones are deduplicated away, so count every step's state.
    const paths = model.getShortestPaths();
    expect(new Set(paths.flatMap((p) => p.steps.map((s) => s.state.value)))).toEqual(new Set(ALL_PHASES));
    const visited = new Set<string>();
    for (const p of paths) {
      replay(p as unknown as Path);
      await p.test({
        states: {
          Pending: (s) => void visited.add(String(s.value)),
          Starting: (s) => {
            visited.add(String(s.value));
            expect(s.context.run).toBeGreaterThan(0);
            expect(s.context.stopReason).toBeUndefined();
          },
          Running: (s) => {
            visited.add(String(s.value));
            expect(s.context.run).toBeGreaterThan(0);
            expect(s.context.stopReason).toBeUndefined();
          },
          Stopping: (s) => {
            visited.add(String(s.value));
            expect(['Stopped', 'TimedOut']).toContain(s.context.stopReason);
          },
          Backoff: (s) => {
            visited.add(String(s.value));
            expect(s.context.restarts).toBeGreaterThan(0);
          },
          Succeeded: (s) => {
            visited.add(String(s.value));
            expect(s.context.stopReason).toBeUndefined();
          },
          TimedOut: (s) => {
            visited.add(String(s.value));
            expect(s.context.stopReason).toBe('TimedOut');
          },
          Failed: (s) => void visited.add(String(s.value)),
          Killed: (s) => void visited.add(String(s.value)),
        },
        events: {
          // The model's events are executed against the real machine, as a SUT would be.
          RESTART: ({ event, state }) => {
            expect(TERMINAL_PHASES.has(state.value as Phase) || state.value === 'Backoff').toBe(true);
            expect(['OnFailure', 'Always', 'Never']).toContain(
              (event as Extract<LifecycleEvent, { type: 'RESTART' }>).restartPolicy,
            );
          },
        },
      });
    }
    expect([...visited].sort()).toEqual([...ALL_PHASES].sort());
  });

  it('its simple paths to TimedOut all pass through TIMEOUT', () => {
    const paths = model.getSimplePaths({
      stopWhen: runAtMost(1),
      toState: (s) => s.value === 'TimedOut',
      // One restart policy keeps the number of simple paths small.
      filterEvents: (_s, e) => e.type !== 'RESTART' || e.restartPolicy === 'OnFailure',
    });
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) {
      expect(p.state.value).toBe('TimedOut');
      expect(p.steps.map((s) => s.event.type)).toContain('TIMEOUT');
      replay(p as unknown as Path);
    }
  });
});
