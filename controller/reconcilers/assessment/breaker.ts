/**
 * The circuit breaker of one session as an XState v5 machine, used purely (`transition`): the
 * persisted state goes in with an event, the next state and named actions come out.
 *
 *   Closed ──trip──▶ Open ──cooldown over (TICK)──▶ HalfOpen ──healthy turn──▶ Closed
 *                     ▲                               │
 *                     └────────── trip again ─────────┘
 *
 * Trips (each needs new evidence in the event that trips it; the first that holds wins):
 *  - correction storm: ≥ correctionThreshold corrections (UserCorrection, ToolRejected) within
 *    correctionWindow → ClarificationPause;
 *  - consecutiveFailures ≥ failureThreshold (failing build/test/lint, corrections; a passing
 *    build/test/lint resets the count) → ApproachPivot;
 *  - frustration EMA ≥ frustrationThreshold on a frustrated or correcting message → ExplicitCheckIn;
 *  - noProgressTurns turns in a row without progress (no commit, no file written, no git change)
 *    → ApproachPivot.
 * Entering Open asks for `intervene`. While Open, counters keep counting but nothing trips (the
 * cooldown). A healthy turn in HalfOpen — no failure, correction or frustration since the
 * cooldown ended, and no no-progress trip — closes it and resets the counters.
 *
 * Time is an input: every event carries `at` (ms; event timestamps, or the reconciler's clock
 * for TICK). No timers, no Date.now().
 */
import { assign, setup, transition } from 'xstate';
import type { BreakerStateName, InterventionType } from '../../api/assessment.js';
import { CORRECTION_SIGNALS, FAILURE_SIGNALS, SUCCESS_SIGNALS, type Signal } from './detector.js';

// The states are API vocabulary (status.breaker.state; metrics and the CLI read it).
export { BREAKER_STATES, type BreakerStateName } from '../../api/assessment.js';

export interface BreakerThresholds {
  failureThreshold: number;
  correctionThreshold: number;
  correctionWindowMs: number;
  frustrationThreshold: number;
  noProgressTurns: number;
  cooldownMs: number;
}

export interface BreakerContext {
  consecutiveFailures: number;
  /** Times (ms) of the corrections inside the window. */
  corrections: number[];
  frustrationEma: number;
  noProgressTurns: number;
  /** Failure-like signals since the current turn began (or since HalfOpen was entered). */
  turnFailures: number;
  openedAt?: number;
  reason?: InterventionType;
  why?: string;
  trips: number;
}

export type BreakerEvent =
  | { type: 'SIGNALS'; at: number; signals: Signal[]; frustrationEma: number; cfg: BreakerThresholds }
  | { type: 'TURN_END'; at: number; progress: boolean; cfg: BreakerThresholds }
  | { type: 'TICK'; at: number; cfg: BreakerThresholds };

type SignalsEvent = Extract<BreakerEvent, { type: 'SIGNALS' }>;
type TurnEvent = Extract<BreakerEvent, { type: 'TURN_END' }>;

export function initialBreakerContext(): BreakerContext {
  return { consecutiveFailures: 0, corrections: [], frustrationEma: 0, noProgressTurns: 0, turnFailures: 0, trips: 0 };
}

const fmtWindow = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`);

/** Counters after the signals of one event. */
export function countSignals(ctx: BreakerContext, e: SignalsEvent): BreakerContext {
  let { consecutiveFailures, turnFailures } = ctx;
  const corrections = ctx.corrections.filter((t) => e.at - t <= e.cfg.correctionWindowMs);
  for (const s of e.signals) {
    if (CORRECTION_SIGNALS.has(s)) corrections.push(e.at);
    if (FAILURE_SIGNALS.has(s)) consecutiveFailures++;
    if (SUCCESS_SIGNALS.has(s)) consecutiveFailures = 0;
    if (FAILURE_SIGNALS.has(s) || s === 'Frustration') turnFailures++;
  }
  return { ...ctx, consecutiveFailures, corrections, turnFailures, frustrationEma: e.frustrationEma };
}

/** Counters after a turn ended. */
export function countTurn(ctx: BreakerContext, e: TurnEvent): BreakerContext {
  return { ...ctx, noProgressTurns: e.progress ? 0 : ctx.noProgressTurns + 1, turnFailures: 0 };
}

/** Why the signals of this event trip the breaker (on the counters after them), if they do. */
export function signalTrip(
  ctx: BreakerContext,
  e: SignalsEvent,
): { reason: InterventionType; why: string } | undefined {
  const c = countSignals(ctx, e);
  const has = (set: ReadonlySet<Signal>) => e.signals.some((s) => set.has(s));
  if (has(CORRECTION_SIGNALS) && c.corrections.length >= e.cfg.correctionThreshold)
    return {
      reason: 'ClarificationPause',
      why:
        `correction storm: ${c.corrections.length} corrections within ${fmtWindow(e.cfg.correctionWindowMs)} ` +
        `(threshold ${e.cfg.correctionThreshold})`,
    };
  if (has(FAILURE_SIGNALS) && c.consecutiveFailures >= e.cfg.failureThreshold) {
    const last = e.signals.filter((s) => FAILURE_SIGNALS.has(s)).at(-1);
    return {
      reason: 'ApproachPivot',
      why: `${c.consecutiveFailures} consecutive failures (threshold ${e.cfg.failureThreshold}), the last a ${last}`,
    };
  }
  if (
    (e.signals.includes('Frustration') || e.signals.includes('UserCorrection')) &&
    e.frustrationEma >= e.cfg.frustrationThreshold
  )
    return {
      reason: 'ExplicitCheckIn',
      why:
        `frustration EMA ${e.frustrationEma.toFixed(2)} ` +
        `reached the threshold ${e.cfg.frustrationThreshold.toFixed(2)}`,
    };
  return undefined;
}

export function turnTrip(ctx: BreakerContext, e: TurnEvent): { reason: InterventionType; why: string } | undefined {
  const c = countTurn(ctx, e);
  if (e.cfg.noProgressTurns > 0 && c.noProgressTurns >= e.cfg.noProgressTurns)
    return {
      reason: 'ApproachPivot',
      why:
        `${c.noProgressTurns} turns without progress ` +
        `(no commit, no file written; threshold ${e.cfg.noProgressTurns})`,
    };
  return undefined;
}

const tripOf = (ctx: BreakerContext, e: BreakerEvent) =>
  e.type === 'SIGNALS' ? signalTrip(ctx, e) : e.type === 'TURN_END' ? turnTrip(ctx, e) : undefined;

export const breakerMachine = setup({
  types: {
    context: {} as BreakerContext,
    events: {} as BreakerEvent,
    input: {} as Partial<BreakerContext>,
  },
  guards: {
    trips: ({ context, event }) => tripOf(context, event) !== undefined,
    cooledDown: ({ context, event }) => event.at - (context.openedAt ?? event.at) >= event.cfg.cooldownMs,
    healthyTurn: ({ context, event }) =>
      event.type === 'TURN_END' && context.turnFailures === 0 && turnTrip(context, event) === undefined,
  },
  actions: {
    count: assign(({ context, event }) =>
      event.type === 'SIGNALS'
        ? countSignals(context, event)
        : event.type === 'TURN_END'
          ? countTurn(context, event)
          : context,
    ),
    open: assign(({ context, event }) => {
      const t = tripOf(context, event)!;
      return { openedAt: event.at, reason: t.reason, why: t.why, trips: context.trips + 1 };
    }),
    halfOpen: assign({ turnFailures: 0 }),
    reset: assign({ consecutiveFailures: 0, corrections: [], noProgressTurns: 0, turnFailures: 0 }),
    // Named side effects, carried out by the reconciler.
    intervene: () => {},
    closed: () => {},
  },
}).createMachine({
  id: 'breaker',
  context: ({ input }) => ({ ...initialBreakerContext(), ...input }),
  initial: 'Closed',
  states: {
    Closed: {
      on: {
        SIGNALS: [{ guard: 'trips', target: 'Open', actions: ['open', 'count', 'intervene'] }, { actions: 'count' }],
        TURN_END: [{ guard: 'trips', target: 'Open', actions: ['open', 'count', 'intervene'] }, { actions: 'count' }],
      },
    },
    Open: {
      on: {
        SIGNALS: { actions: 'count' },
        TURN_END: { actions: 'count' },
        TICK: { guard: 'cooledDown', target: 'HalfOpen', actions: 'halfOpen' },
      },
    },
    HalfOpen: {
      on: {
        SIGNALS: [{ guard: 'trips', target: 'Open', actions: ['open', 'count', 'intervene'] }, { actions: 'count' }],
        TURN_END: [
          { guard: 'healthyTurn', target: 'Closed', actions: ['count', 'reset', 'closed'] },
          { guard: 'trips', target: 'Open', actions: ['open', 'count', 'intervene'] },
          { actions: 'count' },
        ],
      },
    },
  },
});

export interface BreakerSnapshot {
  value: BreakerStateName;
  context: BreakerContext;
}

/**
 * One event through the breaker: the machine's answer, computed without the machine when no
 * transition can fire (the guards are false) — then only the `count` action applies, which is a
 * pure function here. Most events are such (xstate's `transition` costs ~25 µs, more than the
 * detector's whole budget per event); the model-based tests check the two agree on every step.
 */
export function stepBreaker(cur: BreakerSnapshot, e: BreakerEvent): { next: BreakerSnapshot; actions: string[] } {
  const { value, context: ctx } = cur;
  const stay = (context: BreakerContext) => ({ next: { value, context }, actions: context === ctx ? [] : ['count'] });
  if (e.type === 'SIGNALS') {
    if (value === 'Open' || !signalTrip(ctx, e)) return stay(countSignals(ctx, e));
  } else if (e.type === 'TURN_END') {
    if (value === 'Open') return stay(countTurn(ctx, e));
    const trip = turnTrip(ctx, e);
    if (value === 'Closed' && !trip) return stay(countTurn(ctx, e));
    if (value === 'HalfOpen' && ctx.turnFailures > 0 && !trip) return stay(countTurn(ctx, e));
  } else if (value !== 'Open' || e.at - (ctx.openedAt ?? e.at) < e.cfg.cooldownMs) return { next: cur, actions: [] };
  const [next, acts] = transition(breakerMachine, breakerMachine.resolveState({ value, context: ctx }), e);
  return { next: { value: next.value as BreakerStateName, context: next.context }, actions: acts.map((a) => a.type) };
}
