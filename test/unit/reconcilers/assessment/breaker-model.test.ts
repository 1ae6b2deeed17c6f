/**
 * Model-based tests of the circuit-breaker machine with xstate/graph, in the manner of
 * reconcilers/session/machine-model.test.ts: every state is reachable with realistic event samples, the
 * transition relation is exactly the documented diagram, and every generated path, replayed
 * through `transition`, keeps the invariants (cooldown, trip reasons, resets) — and the fast
 * path the assessment step takes (stepBreaker) agrees with the machine at every step.
 *
 * Counters and times make the state space infinite, so the graph is built on an abstraction
 * (counters capped just above their thresholds) and traversals stop at a bounded depth.
 */
import { describe, expect, it } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { createTestModel, getAdjacencyMap, getShortestPaths, getSimplePaths } from 'xstate/graph';
import {
  breakerMachine,
  stepBreaker,
  type BreakerEvent,
  type BreakerStateName,
  type BreakerThresholds,
} from '../../../../controller/reconcilers/assessment/breaker.js';

type Snap = ReturnType<typeof initialTransition<typeof breakerMachine>>[0];
interface Path {
  state: Snap;
  steps: { event: { type: string }; state: Snap }[];
}

const STATES: BreakerStateName[] = ['Closed', 'Open', 'HalfOpen'];
const cfg: BreakerThresholds = {
  failureThreshold: 2,
  correctionThreshold: 2,
  correctionWindowMs: 60_000,
  frustrationThreshold: 0.7,
  noProgressTurns: 2,
  cooldownMs: 1000,
};

/** Event samples: what the detector and the turn logic send, at t=0 (trips) and later (ticks). */
const EVENTS: BreakerEvent[] = [
  { type: 'SIGNALS', at: 0, signals: ['TestFailure'], frustrationEma: 0, cfg },
  { type: 'SIGNALS', at: 0, signals: ['BuildSuccess'], frustrationEma: 0, cfg },
  { type: 'SIGNALS', at: 0, signals: ['UserCorrection'], frustrationEma: 0.3, cfg },
  { type: 'SIGNALS', at: 0, signals: ['Frustration'], frustrationEma: 0.8, cfg },
  { type: 'SIGNALS', at: 0, signals: [], frustrationEma: 0.1, cfg },
  { type: 'SIGNALS', at: 0, signals: ['ToolFailure', 'Commit'], frustrationEma: 0, cfg },
  { type: 'TURN_END', at: 0, progress: true, cfg },
  { type: 'TURN_END', at: 0, progress: false, cfg },
  { type: 'TICK', at: 500, cfg },
  { type: 'TICK', at: 5000, cfg },
];

const cap = (n: number) => Math.min(n, 3);
const serializeState = (s: Snap) =>
  JSON.stringify([
    s.value,
    cap(s.context.consecutiveFailures),
    cap(s.context.corrections.length),
    cap(s.context.noProgressTurns),
    Math.min(s.context.turnFailures, 1),
    s.context.frustrationEma >= 0.7,
    s.context.reason ?? null,
  ]);
const serializeEvent = (e: BreakerEvent) => JSON.stringify(e);
const opts = { events: EVENTS, serializeState, serializeEvent } as const;
const depth = (n: number) => (s: Snap) => s.context.trips > n;

/** Follows a path with `transition`, checking the invariants at every step. */
function replay(path: Path): Snap {
  let [snap] = initialTransition(breakerMachine, {});
  for (const { event } of path.steps) {
    if (event.type.startsWith('xstate.')) continue;
    const e = event as BreakerEvent;
    const [next, acts] = transition(breakerMachine, snap, e);
    const actions = acts.map((a) => a.type);
    const from = snap.value as BreakerStateName;
    const to = next.value as BreakerStateName;
    const where = `${from} --${JSON.stringify({ ...e, cfg: undefined })}--> ${to}`;

    // The fast path the assessment step uses agrees with the machine on every step.
    const fast = stepBreaker({ value: from, context: snap.context }, e);
    expect(fast.next.value, `stepBreaker: ${where}`).toBe(to);
    expect(fast.next.context, `stepBreaker: ${where}`).toEqual(next.context);
    expect(fast.actions.includes('intervene'), `stepBreaker: ${where}`).toBe(actions.includes('intervene'));

    // An intervention exactly when the breaker opens; it then carries a reason and counts a trip.
    expect(actions.includes('intervene'), where).toBe(to === 'Open' && from !== 'Open');
    if (to === 'Open' && from !== 'Open') {
      expect(['SIGNALS', 'TURN_END'], where).toContain(e.type);
      expect(next.context.trips, where).toBe(snap.context.trips + 1);
      expect(next.context.openedAt, where).toBe(e.at);
      expect(next.context.why, where).toBeTruthy();
      // The reason follows the evidence in the event, in priority order.
      if (e.type !== 'SIGNALS') expect(next.context.reason, where).toBe('ApproachPivot');
      else if (e.signals.includes('UserCorrection') && next.context.corrections.length >= cfg.correctionThreshold)
        expect(next.context.reason, where).toBe('ClarificationPause');
      else if (
        e.signals.some((s) => s === 'TestFailure' || s === 'UserCorrection') &&
        next.context.consecutiveFailures >= cfg.failureThreshold
      )
        expect(next.context.reason, where).toBe('ApproachPivot');
      else expect(next.context.reason, where).toBe('ExplicitCheckIn');
    } else expect(next.context.trips, where).toBe(snap.context.trips);
    // The cooldown: Open is left only by a TICK after cooldownMs, and only for HalfOpen.
    if (from === 'Open') {
      if (to !== 'Open') {
        expect([to, e.type], where).toEqual(['HalfOpen', 'TICK']);
        expect(e.at - snap.context.openedAt!, where).toBeGreaterThanOrEqual(cfg.cooldownMs);
      }
      if (e.type === 'TICK' && e.at - snap.context.openedAt! < cfg.cooldownMs) expect(to, where).toBe('Open');
    }
    // Closed never goes straight to HalfOpen; HalfOpen closes only on a healthy turn.
    if (from === 'Closed') expect(to, where).not.toBe('HalfOpen');
    if (from === 'HalfOpen' && to === 'Closed') {
      expect(e.type, where).toBe('TURN_END');
      expect(snap.context.turnFailures, where).toBe(0);
      expect(actions, where).toContain('closed');
      expect(next.context, where).toMatchObject({
        consecutiveFailures: 0,
        corrections: [],
        noProgressTurns: 0,
        turnFailures: 0,
      });
    }
    if (to === 'HalfOpen' && from === 'Open') expect(next.context.turnFailures, where).toBe(0);
    // Counters: a success resets consecutive failures; a turn with progress resets no-progress.
    if (e.type === 'SIGNALS' && e.signals.includes('BuildSuccess'))
      expect(next.context.consecutiveFailures, where).toBe(0);
    if (e.type === 'SIGNALS' && e.signals.includes('TestFailure'))
      expect(next.context.consecutiveFailures, where).toBe(snap.context.consecutiveFailures + 1);
    if (e.type === 'TURN_END')
      expect(next.context.noProgressTurns, where).toBe(
        e.progress ? 0 : to === 'Closed' && from === 'HalfOpen' ? 0 : snap.context.noProgressTurns + 1,
      );
    if (e.type === 'TICK')
      expect({ ...next.context, turnFailures: 0 }, where).toEqual({ ...snap.context, turnFailures: 0 });
    snap = next;
  }
  expect(snap.value).toEqual(path.state.value);
  return snap;
}

describe('breakerMachine model: reachability', () => {
  it('every state is reachable, by the obvious shortest routes', () => {
    const paths = getShortestPaths(breakerMachine, { ...opts, stopWhen: depth(2) }) as unknown as Path[];
    expect(new Set(paths.map((p) => p.state.value))).toEqual(new Set(STATES));
    const shortest = (st: BreakerStateName, pick: (p: Path) => boolean = () => true) =>
      paths
        .filter((p) => p.state.value === st && pick(p))
        .map((p) => p.steps.filter((s) => !s.event.type.startsWith('xstate.')).map((s) => s.event.type))
        .sort((a, b) => a.length - b.length)[0];
    expect(shortest('Open')).toEqual(['SIGNALS']); // one frustrated message at EMA 0.8
    expect(shortest('HalfOpen')).toEqual(['SIGNALS', 'TICK']);
    expect(shortest('Closed', (p) => p.state.context.trips > 0)).toEqual(['SIGNALS', 'TICK', 'TURN_END']);
  });

  it('without TICK the breaker never leaves Open (the cooldown needs time to pass)', () => {
    const paths = getShortestPaths(breakerMachine, {
      ...opts,
      stopWhen: depth(2),
      filterEvents: (_s, e) => e.type !== 'TICK',
    }) as unknown as Path[];
    expect(paths.some((p) => p.state.value === 'HalfOpen')).toBe(false);
    for (const p of paths) {
      const firstOpen = p.steps.findIndex((s) => s.state.value === 'Open');
      if (firstOpen >= 0) expect(p.steps.slice(firstOpen).every((s) => s.state.value === 'Open')).toBe(true);
    }
  });

  it('a TICK before the cooldown is over changes nothing', () => {
    const paths = getShortestPaths(breakerMachine, {
      ...opts,
      stopWhen: depth(2),
      filterEvents: (_s, e) => e.type !== 'TICK' || e.at < cfg.cooldownMs,
    }) as unknown as Path[];
    expect(paths.some((p) => p.state.value === 'HalfOpen')).toBe(false);
  });

  it('with only successes, progress and calm messages, it stays Closed', () => {
    const calm = (e: BreakerEvent) =>
      e.type !== 'SIGNALS' || e.signals.every((s) => s === 'BuildSuccess' || s === 'ToolFailure' || s === 'Commit');
    const paths = getShortestPaths(breakerMachine, {
      ...opts,
      stopWhen: depth(2),
      filterEvents: (_s, e) => calm(e) && !(e.type === 'TURN_END' && !e.progress),
    }) as unknown as Path[];
    expect(new Set(paths.map((p) => p.state.value))).toEqual(new Set(['Closed']));
  });
});

describe('breakerMachine model: the transition relation is the documented diagram', () => {
  it('the state-changing edges are exactly those of the diagram', () => {
    const adj = getAdjacencyMap(breakerMachine, opts);
    const edges = new Set<string>();
    for (const { state, transitions } of Object.values(adj))
      for (const { event, state: next } of Object.values(transitions) as { event: BreakerEvent; state: Snap }[])
        if ((state as Snap).value !== next.value)
          edges.add(`${(state as Snap).value} --${event.type}--> ${next.value}`);
    expect([...edges].sort()).toEqual(
      [
        'Closed --SIGNALS--> Open',
        'Closed --TURN_END--> Open',
        'Open --TICK--> HalfOpen',
        'HalfOpen --SIGNALS--> Open',
        'HalfOpen --TURN_END--> Open',
        'HalfOpen --TURN_END--> Closed',
      ].sort(),
    );
  });

  it('the abstracted graph is finite and small', () => {
    const adj = getAdjacencyMap(breakerMachine, opts);
    expect(Object.keys(adj).length).toBeLessThan(3 * 4 * 4 * 4 * 2 * 2 * 4);
    expect(new Set(Object.values(adj).map((a) => (a.state as Snap).value))).toEqual(new Set(STATES));
  });
});

describe('breakerMachine model: generated paths keep the invariants', () => {
  it('every shortest path (≤ 3 trips) replays through transition with the invariants holding', () => {
    const paths = getShortestPaths(breakerMachine, { ...opts, stopWhen: depth(3) }) as unknown as Path[];
    expect(paths.length).toBeGreaterThan(20);
    for (const p of paths) replay(p);
    // Each trip reason is reached (the priority is checked in replay).
    expect(new Set(paths.filter((p) => p.state.value === 'Open').map((p) => p.state.context.reason))).toEqual(
      new Set(['ClarificationPause', 'ApproachPivot', 'ExplicitCheckIn']),
    );
  });

  it('every simple path over the coarse graph (state and reason, ≤ 2 trips) replays with the invariants held', () => {
    // Simple paths explode on the fine graph (its Open region is strongly connected); on the
    // coarse one they are the distinct routes between states and reasons.
    const coarse = (s: Snap) => JSON.stringify([s.value, s.context.reason ?? null]);
    const paths = getSimplePaths(breakerMachine, {
      ...opts,
      serializeState: coarse,
      stopWhen: depth(2),
    }) as unknown as Path[];
    expect(paths.length).toBeGreaterThanOrEqual(STATES.length);
    expect(paths.length).toBeLessThan(5000);
    for (const p of paths) replay(p);
    expect(new Set(paths.map((p) => p.state.value))).toEqual(new Set(STATES));
  });

  it('long random walks (seeded) keep the invariants', () => {
    let seed = 42;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let walk = 0; walk < 300; walk++) {
      let at = 0;
      const steps: Path['steps'] = [];
      let [snap] = initialTransition(breakerMachine, {});
      for (let i = 0; i < 40; i++) {
        at += Math.floor(rand() * 600);
        const base = EVENTS[Math.floor(rand() * EVENTS.length)];
        const event = { ...base, at } as BreakerEvent;
        [snap] = transition(breakerMachine, snap, event);
        steps.push({ event, state: snap });
      }
      replay({ state: snap, steps });
    }
  });

  it('createTestModel: per-state assertions along its shortest paths', async () => {
    const model = createTestModel(breakerMachine, { ...opts, stopWhen: depth(2) } as Parameters<
      typeof createTestModel<typeof breakerMachine>
    >[1]);
    const visited = new Set<string>();
    for (const p of model.getShortestPaths()) {
      replay(p as unknown as Path);
      await p.test({
        states: {
          Closed: (s) => void visited.add(String(s.value)),
          Open: (s) => {
            visited.add(String(s.value));
            expect(s.context.reason).toBeDefined();
            expect(s.context.openedAt).toBeDefined();
            expect(s.context.trips).toBeGreaterThan(0);
          },
          HalfOpen: (s) => {
            visited.add(String(s.value));
            expect(s.context.trips).toBeGreaterThan(0);
          },
        },
      });
    }
    expect([...visited].sort()).toEqual([...STATES].sort());
  });
});
