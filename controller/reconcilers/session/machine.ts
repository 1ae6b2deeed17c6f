/**
 * The AgentSession lifecycle as an XState v5 machine. It only decides: transitions are pure
 * (tested with `transition`/`initialTransition` and model-based paths from xstate/graph), and
 * the side effects it asks for come back as named actions that the reconciler executes
 * (launchRun, sendStopKeys, killSession, captureOutput, scheduleRestart, escalate).
 *
 *   Pending ──ADMIT──▶ Starting ──STARTED──▶ Running ──EXITED(0)──▶ Succeeded
 *                        │                     │  └──EXITED(≠0)──▶ Failed
 *                        └─START_FAILED──▶ Failed   └──GONE──────▶ Killed
 *   Running ──STOP/TIMEOUT──▶ Stopping ──EXITED/GONE──▶ Killed | TimedOut
 *   Failed|Killed|TimedOut (|Succeeded with Always) ──RESTART──▶ Backoff ──RESTART_DUE──▶ Pending
 *   any ended phase ──NEW_RUN──▶ Pending (spec changed, or asked to run again)
 *
 * A restart asked by the annotation (orchctl.io/restartedAt) needs no transition of its own: an
 * active run gets STOP, and once it has ended (or from Backoff) NEW_RUN (decide.ts).
 *
 * No timers live in the machine: due times (restart, deadline, grace) are stored in status and
 * the work queue's RequeueAfter brings the object back, so they survive a controller restart.
 */
import { type AnyActorScope, assign, createActor, type ExecutableActionsFrom, setup, type SnapshotFrom } from 'xstate';

import type { RestartPolicy } from '../../api/phases.js';

// The vocabulary lives in api/ (metrics and the CLI read it too); re-exported for the machine's users.
export { ACTIVE_PHASES, TERMINAL_PHASES, type Phase, type RestartPolicy } from '../../api/phases.js';

export interface LifecycleContext {
  run: number; // number of the current (or last) run; 0 before the first
  restarts: number; // restarts since the last NEW_RUN
  /** BudgetExceeded: its SessionPolicy's budget (action Stop) stopped it at an idle point (pause.ts). */
  stopReason?: 'Stopped' | 'TimedOut' | 'BudgetExceeded';
}

export type LifecycleEvent =
  | { type: 'ADMIT' }
  | { type: 'STARTED' }
  | { type: 'START_FAILED'; reason: string; message: string }
  | { type: 'EXITED'; exitCode: number /** When it ended (ms), when known. */; at?: number; fenced?: boolean }
  | { type: 'GONE' }
  | { type: 'STOP'; reason?: 'BudgetExceeded' }
  | { type: 'TIMEOUT' }
  | { type: 'GRACE_EXPIRED' }
  | { type: 'RESTART'; restartPolicy: RestartPolicy; maxRestarts: number /** Hung up by a fuse. */; fenced?: boolean }
  | { type: 'RESTART_DUE' }
  | { type: 'NEW_RUN' };

type RestartEvent = Extract<LifecycleEvent, { type: 'RESTART' }>;
const underCap = (ctx: LifecycleContext, e: LifecycleEvent) =>
  e.type === 'RESTART' && ctx.restarts < (e as RestartEvent).maxRestarts;
const wantsRestartOnFailure = (e: LifecycleEvent) =>
  e.type === 'RESTART' && (e as RestartEvent).restartPolicy !== 'Never';
const wantsRestartAlways = (e: LifecycleEvent) =>
  e.type === 'RESTART' && (e as RestartEvent).restartPolicy === 'Always';

/** What an ended run does on RESTART, by whether the restart policy covers it. */
const restartFrom = <G extends 'always' | 'onFailure'>(covered: G) =>
  ({
    RESTART: [
      // A run the node's fuse hung up is restarted after the usual backoff, uncounted: the agent did not fail.
      { guard: `${covered}Fenced`, target: 'Backoff', actions: 'scheduleRestart' },
      { guard: `${covered}UnderCap`, target: 'Backoff', actions: ['countRestart', 'scheduleRestart'] },
      { guard: `${covered}CapReached`, actions: 'escalate' },
    ],
    NEW_RUN: { target: 'Pending', actions: 'resetRestarts' },
  }) as const;

export const sessionMachine = setup({
  types: {
    context: {} as LifecycleContext,
    events: {} as LifecycleEvent,
    input: {} as Partial<LifecycleContext>,
  },
  guards: {
    exitedOk: ({ event }) => event.type === 'EXITED' && event.exitCode === 0,
    stoppedForTimeout: ({ context }) => context.stopReason === 'TimedOut',
    onFailureUnderCap: ({ context, event }) => wantsRestartOnFailure(event) && underCap(context, event),
    onFailureCapReached: ({ context, event }) => wantsRestartOnFailure(event) && !underCap(context, event),
    onFailureFenced: ({ event }) => wantsRestartOnFailure(event) && !!(event as RestartEvent).fenced,
    alwaysFenced: ({ event }) => wantsRestartAlways(event) && !!(event as RestartEvent).fenced,
    alwaysUnderCap: ({ context, event }) => wantsRestartAlways(event) && underCap(context, event),
    alwaysCapReached: ({ context, event }) => wantsRestartAlways(event) && !underCap(context, event),
  },
  actions: {
    // Named side effects, executed by the reconciler (they are no-ops inside the machine).
    launchRun: () => {},
    sendStopKeys: () => {},
    killSession: () => {},
    captureOutput: () => {},
    scheduleRestart: () => {},
    escalate: () => {},
    nextRun: assign({ run: ({ context }) => context.run + 1, stopReason: undefined }),
    countRestart: assign({ restarts: ({ context }) => context.restarts + 1 }),
    resetRestarts: assign({ restarts: 0 }),
    markStop: assign({
      stopReason: ({ event }) => (event.type === 'STOP' && event.reason) || ('Stopped' as const),
    }),
    markTimeout: assign({ stopReason: 'TimedOut' as const }),
  },
}).createMachine({
  id: 'agentSession',
  context: ({ input }) => ({ run: input.run ?? 0, restarts: input.restarts ?? 0, stopReason: input.stopReason }),
  initial: 'Pending',
  states: {
    Pending: {
      on: { ADMIT: { target: 'Starting', actions: ['nextRun', 'launchRun'] } },
    },
    Starting: {
      on: {
        STARTED: 'Running',
        START_FAILED: 'Failed',
        EXITED: [{ guard: 'exitedOk', target: 'Succeeded' }, { target: 'Failed' }],
        GONE: 'Killed',
        STOP: { target: 'Stopping', actions: ['markStop', 'sendStopKeys'] },
      },
    },
    Running: {
      on: {
        EXITED: [{ guard: 'exitedOk', target: 'Succeeded' }, { target: 'Failed' }],
        GONE: 'Killed',
        STOP: { target: 'Stopping', actions: ['markStop', 'sendStopKeys'] },
        TIMEOUT: { target: 'Stopping', actions: ['markTimeout', 'captureOutput', 'sendStopKeys'] },
      },
    },
    Stopping: {
      on: {
        EXITED: [{ guard: 'stoppedForTimeout', target: 'TimedOut' }, { target: 'Killed' }],
        GONE: [{ guard: 'stoppedForTimeout', target: 'TimedOut' }, { target: 'Killed' }],
        GRACE_EXPIRED: { actions: 'killSession' },
      },
    },
    Backoff: {
      on: {
        RESTART_DUE: 'Pending',
        STOP: { target: 'Killed', actions: 'markStop' },
        NEW_RUN: { target: 'Pending', actions: 'resetRestarts' },
      },
    },
    Succeeded: { on: restartFrom('always') },
    Failed: { on: restartFrom('onFailure') },
    Killed: { on: restartFrom('onFailure') },
    TimedOut: { on: restartFrom('onFailure') },
  },
});

type Snapshot = SnapshotFrom<typeof sessionMachine>;
type Action = ExecutableActionsFrom<typeof sessionMachine>;

/** The one actor scope of every {@link nextSnapshot}: the machine spawns nothing, so it holds nothing between calls. */
let scope: AnyActorScope | undefined;

/**
 * xstate's `transition(sessionMachine, snapshot, event)`: the next snapshot and the actions to
 * execute. xstate's own builds a new actor for each call (its initial snapshot computed each time):
 * two thirds of the transition's time, ~0.4 ms of every launch in a burst (issue 29). Synchronous,
 * so the scope's action collector is never shared by two calls.
 */
export function nextSnapshot(snapshot: Snapshot, event: LifecycleEvent): [Snapshot, Action[]] {
  if (!scope) {
    const self = createActor(sessionMachine, { input: {} });
    const none = () => {};
    const fields = { id: '', sessionId: '', logger: none, defer: none, emit: none, stopChild: none };
    scope = { ...fields, self, system: self.system, actionExecutor: none };
  }
  const actions: Action[] = [];
  scope.actionExecutor = (a) => actions.push(a as Action);
  try {
    return [sessionMachine.transition(snapshot, event, scope), actions];
  } finally {
    scope.actionExecutor = () => {}; // an action executed later has no one to tell
  }
}
