/**
 * The restart annotation (orchctl.io/restartedAt, like `kubectl rollout restart`), pure: which
 * lifecycle event each phase gets for a new, the same or no annotation value under each
 * desiredState (decide.ts), and the plan's passes from a stamped session to its new run — the
 * current run stopped first, the value recorded with the new run so it is honoured once.
 */
import { describe, expect, it } from 'vitest';
import {
  DECISION_ANNOTATION,
  RESTART_REASON_ANNOTATION,
  RESTARTED_AT_ANNOTATION,
} from '../../../../controller/api/autopilot.js';
import type {
  AgentSession,
  AgentSessionSpec,
  AgentSessionStatus,
  AgentSpec,
} from '../../../../controller/api/kinds.js';
import type { Condition } from '../../../../controller/api/types.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';
import type { PaneInfo } from '../../../../controller/observers/tmux.js';
import {
  effective,
  observedEvent,
  type PaneState,
  restartRequested,
} from '../../../../controller/reconcilers/session/decide.js';
import type { Effect, Outcome, PreparedRun } from '../../../../controller/reconcilers/session/effects.js';
import type { LifecycleEvent, Phase } from '../../../../controller/reconcilers/session/machine.js';
import { type Observed, type PlanOutput, plan } from '../../../../controller/reconcilers/session/plan.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (t: number) => new Date(t).toISOString();
const STAMP_1 = '2026-11-24T09:00:00Z';
const STAMP_2 = '2026-11-24T09:59:00Z';

type Annotation = 'new' | 'same' | 'absent';

function session(
  o: { spec?: AgentSessionSpec; status?: AgentSessionStatus; stamp?: string; generation?: number } = {},
): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: {
      name: 's',
      namespace: 'default',
      uid: 'u-1234567890',
      generation: o.generation ?? 1,
      ...(o.stamp ? { annotations: { [RESTARTED_AT_ANNOTATION]: o.stamp } } : {}),
    },
    spec: { prompt: 'do it', ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  };
}

// ---- decide: the table ------------------------------------------------------------------------

const escalated: Condition = {
  type: 'Escalated',
  status: 'True',
  reason: 'RetryLimitReached',
  message: 'gave up',
  lastTransitionTime: iso(T0 - 60_000),
};

/** A session in `phase` as the controller leaves it, the last run started for STAMP_1. */
function inPhase(phase: Phase, annotation: Annotation, desiredState: 'Running' | 'Stopped'): AgentSession {
  const ended = ['Succeeded', 'Failed', 'Killed', 'TimedOut'].includes(phase);
  const status: AgentSessionStatus = {
    phase,
    run: phase === 'Pending' ? 0 : 1,
    startTime: iso(T0 - 60_000),
    lifecycle: { runGeneration: 1, restartedAt: STAMP_1 },
    // The ended ones as the restart policy leaves them alone: a stop's reason, an escalation.
    ...(ended ? { reason: phase === 'Killed' ? 'Stopped' : phase, conditions: [escalated] } : {}),
    ...(phase === 'Backoff' ? { nextRestartTime: iso(T0 + 60_000), conditions: [escalated] } : {}),
    ...(phase === 'Stopping' ? { stopRequestTime: iso(T0 - 1000) } : {}),
  };
  const stamp = annotation === 'new' ? STAMP_2 : annotation === 'same' ? STAMP_1 : undefined;
  return session({ spec: { desiredState, restartPolicy: 'Never' }, status, stamp });
}

const PANE: Partial<Record<Phase, PaneState>> = {
  Starting: { kind: 'alive' },
  Running: { kind: 'alive' },
  Stopping: { kind: 'alive' },
};

/** Expected event by phase, for [new & Running, same|absent & Running, Stopped (any annotation)]. */
const EXPECTED: Record<Phase, [LifecycleEvent['type'] | undefined, LifecycleEvent['type'] | undefined, string?]> = {
  Pending: [undefined, undefined, undefined],
  Starting: ['STOP', 'STARTED', 'STOP'],
  Running: ['STOP', undefined, 'STOP'],
  Stopping: [undefined, undefined, undefined],
  Backoff: ['NEW_RUN', undefined, 'STOP'],
  Succeeded: ['NEW_RUN', undefined, undefined],
  Failed: ['NEW_RUN', undefined, undefined],
  Killed: ['NEW_RUN', undefined, undefined],
  TimedOut: ['NEW_RUN', undefined, undefined],
};

const rows = (Object.keys(EXPECTED) as Phase[]).flatMap((phase) =>
  (['new', 'same', 'absent'] as Annotation[]).flatMap((annotation) =>
    (['Running', 'Stopped'] as const).map((desired) => {
      const [asked, notAsked, stopped] = EXPECTED[phase];
      const want = desired === 'Stopped' ? stopped : annotation === 'new' ? asked : notAsked;
      return [phase, annotation, desired, want] as const;
    }),
  ),
);

describe('decide: the restart annotation in each phase', () => {
  it.each(rows)('%s, annotation %s, desiredState %s → %s', (phase, annotation, desired, want) => {
    const s = inPhase(phase, annotation, desired);
    const pane = PANE[phase] ?? { kind: 'missing' };
    const ev = observedEvent({ phase, session: s, pane, now: T0, effective: effective(s.spec ?? {}, undefined) });
    expect(ev?.type).toBe(want);
  });

  it('a first stamp (no run was started for one yet) asks; an empty value does not', () => {
    const s = session({ status: { phase: 'Failed', run: 1, lifecycle: { runGeneration: 1 } }, stamp: STAMP_1 });
    expect(restartRequested(s)).toBe(STAMP_1);
    const ev = observedEvent({
      phase: 'Failed',
      session: s,
      pane: { kind: 'missing' },
      now: T0,
      effective: effective({}, undefined),
    });
    expect(ev).toEqual({ type: 'NEW_RUN' });
    expect(restartRequested(session({ status: s.status, stamp: '' }))).toBeUndefined();
  });

  it('a run that ends on its own while a restart is asked ends as usual (the new run follows from there)', () => {
    const s = inPhase('Running', 'new', 'Running');
    const e = effective({}, undefined);
    const at = (pane: PaneState) => observedEvent({ phase: 'Running', session: s, pane, now: T0, effective: e });
    expect(at({ kind: 'dead', exitCode: 3 })).toEqual({ type: 'EXITED', exitCode: 3 });
    expect(at({ kind: 'missing' })).toEqual({ type: 'GONE' });
  });
});

// ---- plan: from a stamp to the new run -----------------------------------------------------------

const agent: AgentSpec = { command: ['sh', '-c', 'sleep 60'], promptDelivery: 'none' };
const host = {
  cpu: 2,
  loadAverage: [0.1, 0.1, 0.1],
  memoryTotalBytes: 8 << 30,
  memoryAvailableBytes: 4 << 30,
  diskFreeBytes: 50 << 30,
  diskTotalBytes: 100 << 30,
} as HostSnapshot;
const admission = { activeUnderPolicy: 0, host, nodeUnschedulable: false };
const SESSION_NAME = 'orchctl-default-s-u1234567';
const pane: PaneInfo = { paneId: '%1', session: SESSION_NAME, dead: false, key: 'default/s#1' } as PaneInfo;
const alive: Observed = {
  pane: { kind: 'alive' },
  paneInfo: pane,
  hasPanes: true,
  retag: [],
  admission,
  agent: { run: 1, events: [], next: LOG_START },
  gitKey: '/work/repo\n',
};
const gone: Observed = { pane: { kind: 'missing' }, hasPanes: false, retag: [], admission };

function prepared(run: number): PreparedRun {
  const ws = `/home/ws/${run}`;
  return {
    workdir: '/work/repo',
    workspace: ws,
    promptFile: `${ws}/prompt.md`,
    outputLog: `${ws}/output.log`,
    position: LOG_START,
    launch: { session: SESSION_NAME, cwd: '/work/repo', argv: ['sh'], env: {}, tags: { uid: 'u', key: `s#${run}` } },
  };
}

/**
 * One reconcile pass over the pure plan, answering its continuations as the actuator would
 * (prepared, launched, settled) and its `needs` with "nothing new"; returns every step's output.
 */
function pass(obj: AgentSession, observed: Observed, now = T0): PlanOutput[] {
  const outs: PlanOutput[] = [];
  let status = obj.status ?? {};
  let outcomes: Outcome[] = [];
  let continuation: PlanOutput['continuation'];
  let cur = observed;
  for (let step = 0; step < 12; step++) {
    const resolved = { agent, workdir: '/work/repo', effective: effective(obj.spec ?? {}, undefined) };
    const out = plan({ key: 'default/s', obj, status, observed: cur, resolved, now, outcomes, continuation });
    outs.push(out);
    if (out.done) return outs;
    status = out.status;
    cur = out.observed;
    continuation = out.continuation;
    outcomes = out.effects.flatMap((e): Outcome[] => {
      if (e.type === 'PrepareRun') return [{ type: 'Prepared', run: prepared(e.run) }];
      if (e.type === 'Launch') return [{ type: 'Launched', obj: { ...obj, status: e.record } }];
      if (e.type === 'SettleRun') return [{ type: 'Settled', run: {} }];
      return [];
    });
    if (out.needs?.agent) cur = { ...cur, agent: { run: status.run ?? 0, events: [], next: LOG_START } };
    if (out.needs?.git) cur = { ...cur, gitKey: `${status.workdir}\n${status.headBefore ?? ''}` };
  }
  throw new Error('no settled plan');
}

const last = (outs: PlanOutput[]) => outs[outs.length - 1];
const allEffects = (outs: PlanOutput[]) => outs.flatMap((o) => o.effects);
const events = (fx: Effect[]) =>
  fx.flatMap((e) => (e.type === 'RecordEvent' ? [`${e.eventType} ${e.reason}: ${e.message}`] : []));
const launches = (fx: Effect[]) => fx.filter((e) => e.type === 'Launch');

const runningStatus = (over: Partial<AgentSessionStatus> = {}): AgentSessionStatus => ({
  phase: 'Running',
  run: 1,
  restarts: 0,
  tmuxSession: SESSION_NAME,
  workspace: '/home/ws/1',
  workdir: '/work/repo',
  startTime: iso(T0 - 60_000),
  lifecycle: { runGeneration: 1 },
  conditions: [],
  ...over,
});

describe('plan: a restart asked for', () => {
  it('Running: the STOP path (stop keys, Stopping), nothing recorded yet; once it ended, run 2 with the value', () => {
    const obj = session({ status: runningStatus(), stamp: STAMP_2 });
    const stopping = last(pass(obj, alive));
    const stopFx = allEffects([stopping]);
    expect(stopFx.find((e) => e.type === 'SendKeys')).toEqual({ type: 'SendKeys', paneId: '%1', keys: ['C-c'] });
    expect(stopping.status).toMatchObject({ phase: 'Stopping', reason: 'Stopping', stopRequestTime: iso(T0) });
    expect(stopping.status.message).toBe(
      `restart requested (${RESTARTED_AT_ANNOTATION}=${STAMP_2}); stopping run 1 first`,
    );
    expect(stopping.status.lifecycle?.restartedAt).toBeUndefined();
    expect(launches(stopFx)).toEqual([]);

    // The agent quit on its stop keys: Killed (reason Stopped), then at once a new run.
    const ended = { ...obj, status: stopping.status };
    const outs = pass(
      ended,
      { ...alive, pane: { kind: 'dead', exitCode: 130 }, paneInfo: { ...pane, dead: true } },
      T0 + 500,
    );
    const fx = allEffects(outs);
    expect(events(fx)).toEqual([
      'Normal Stopped: Run 1 Killed: stopped on request (exit code 130)',
      `Normal Restarting: Starting run 2 for ${RESTARTED_AT_ANNOTATION}=${STAMP_2}`,
      `Normal Started: Started run 2 in tmux session ${SESSION_NAME}`,
    ]);
    expect(launches(fx)).toHaveLength(1);
    const after = last(outs).status;
    expect(after).toMatchObject({ phase: 'Running', run: 2, restarts: 0 });
    expect(after.lifecycle).toEqual({ runGeneration: 1, restartedAt: STAMP_2 });
    // The run is recorded with the value before tmux starts (a crash after it does not restart twice).
    expect(launches(fx)[0]).toMatchObject({ record: { run: 2, lifecycle: { restartedAt: STAMP_2 } } });

    // The same value again does nothing.
    const again = pass(
      { ...obj, status: { ...after, phase: 'Running' } },
      { ...alive, paneInfo: { ...pane, key: 's#2' } },
    );
    expect(allEffects(again).filter((e) => e.type === 'SendKeys' || e.type === 'PrepareRun')).toEqual([]);
    expect(last(again).status.phase).toBe('Running');
  });

  it('Failed, restartPolicy Never, escalated: a new run now, restarts reset, escalation cleared', () => {
    const status: AgentSessionStatus = {
      ...runningStatus({ phase: 'Failed', reason: 'Error', exitCode: 1, restarts: 3, run: 4 }),
      conditions: [escalated],
    };
    const obj = session({ spec: { restartPolicy: 'Never' }, status, stamp: STAMP_2 });
    const outs = pass(obj, gone);
    const s = last(outs).status;
    expect(s).toMatchObject({ phase: 'Running', run: 5, restarts: 0 });
    expect(s.lifecycle?.restartedAt).toBe(STAMP_2);
    expect(s.conditions?.find((c) => c.type === 'Escalated')).toMatchObject({ status: 'False', reason: 'NewRun' });
    expect(events(allEffects(outs))).toEqual([
      `Normal Restarting: Starting run 5 for ${RESTARTED_AT_ANNOTATION}=${STAMP_2}`,
      `Normal Started: Started run 5 in tmux session ${SESSION_NAME}`,
    ]);
  });

  it('Backoff held by an escalation: the new run starts now, not at the scheduled restart', () => {
    const status: AgentSessionStatus = {
      ...runningStatus({ phase: 'Backoff', reason: 'RestartHeld', restarts: 1, nextRestartTime: iso(T0 + 60_000) }),
      conditions: [escalated],
    };
    const s = last(pass(session({ spec: { restartPolicy: 'OnFailure' }, status, stamp: STAMP_2 }), gone)).status;
    expect(s).toMatchObject({ phase: 'Running', run: 2, restarts: 0 });
    expect(s.nextRestartTime).toBeUndefined();
  });

  it('a new prompt in the same write as the stamp (generation 2) gives one new run, from the current spec', () => {
    const status = runningStatus({ phase: 'Succeeded', reason: 'Completed', exitCode: 0 });
    const obj = session({ spec: { prompt: 'recover from the error' }, status, stamp: STAMP_2, generation: 2 });
    const outs = pass(obj, gone);
    expect(launches(allEffects(outs))).toHaveLength(1);
    const s = last(outs).status;
    expect(s).toMatchObject({ phase: 'Running', run: 2 });
    expect(s.lifecycle).toEqual({ runGeneration: 2, restartedAt: STAMP_2 });
    // Neither the generation nor the annotation asks again.
    const again = pass({ ...obj, status: s }, { ...alive, paneInfo: { ...pane, key: 's#2' } });
    expect(allEffects(again).filter((e) => e.type === 'SendKeys' || e.type === 'PrepareRun')).toEqual([]);
  });

  it('desiredState Stopped: nothing; Running again gives one run, which takes the value', () => {
    const status = runningStatus({ phase: 'Killed', reason: 'Stopped' });
    const stopped = session({ spec: { desiredState: 'Stopped' }, status, stamp: STAMP_2 });
    const idle = pass(stopped, gone);
    expect(allEffects(idle).filter((e) => e.type !== 'Log')).toEqual([]);
    expect(last(idle).status.phase).toBe('Killed');
    const resumed = session({ spec: { desiredState: 'Running' }, status, stamp: STAMP_2, generation: 2 });
    const outs = pass(resumed, gone);
    expect(launches(allEffects(outs))).toHaveLength(1);
    expect(last(outs).status).toMatchObject({ run: 2, lifecycle: { runGeneration: 2, restartedAt: STAMP_2 } });
  });

  it('a first run of a session created with the annotation records it quietly', () => {
    const outs = pass(session({ stamp: STAMP_1 }), gone);
    const s = last(outs).status;
    expect(s).toMatchObject({ phase: 'Running', run: 1, lifecycle: { restartedAt: STAMP_1 } });
    expect(events(allEffects(outs))).toEqual([`Normal Started: Started run 1 in tmux session ${SESSION_NAME}`]);
  });
});

describe('plan: why a run started (status.lastStart)', () => {
  const withReason = (obj: AgentSession, reason?: string, decision?: string): AgentSession => ({
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: {
        ...obj.metadata.annotations,
        ...(reason ? { [RESTART_REASON_ANNOTATION]: reason } : {}),
        ...(decision ? { [DECISION_ANNOTATION]: decision } : {}),
      },
    },
  });
  const startOf = (obj: AgentSession) => {
    const outs = pass(obj, gone);
    // Recorded with the run, before tmux starts it.
    expect(launches(allEffects(outs))[0]).toMatchObject({ record: { lastStart: last(outs).status.lastStart } });
    return last(outs).status;
  };
  const failed = runningStatus({ phase: 'Failed', reason: 'Error', exitCode: 1, run: 1 });

  it('a new run asked through the restart annotation: run 2, restarts unchanged, the reason its writer gave', () => {
    const manual = startOf(withReason(session({ status: failed, stamp: STAMP_2 }), 'Manual'));
    expect(manual).toMatchObject({ run: 2, restarts: 0 });
    expect(manual.lastStart).toEqual({
      run: 2,
      reason: 'Manual',
      time: iso(T0),
      message: `orchctl restart (${RESTARTED_AT_ANNOTATION}=${STAMP_2})`,
    });
    const ap = startOf(withReason(session({ status: failed, stamp: STAMP_2 }), 'Autopilot', 'restart-webapp-1'));
    expect(ap.lastStart).toMatchObject({
      reason: 'Autopilot',
      message: expect.stringMatching(/^Decision restart-webapp-1 /),
    });
    for (const reason of ['Recovery', 'Resume', 'Context'])
      expect(startOf(withReason(session({ status: failed, stamp: STAMP_2 }), reason)).lastStart?.reason).toBe(reason);
    // No reason, or one that is not ours (metadata anyone may write): Restart, and the value is not repeated.
    expect(startOf(session({ status: failed, stamp: STAMP_2 })).lastStart?.reason).toBe('Restart');
    const odd = startOf(withReason(session({ status: failed, stamp: STAMP_2 }), 'Bogus\u001b[2J'));
    expect(odd.lastStart).toMatchObject({
      reason: 'Restart',
      message: `restart requested (${RESTARTED_AT_ANNOTATION}=${STAMP_2})`,
    });
  });

  it('the run of a lost node started again on this one: NodeLost', () => {
    const obj = session({ status: { phase: 'Pending', run: 1, restarts: 0, lifecycle: { runGeneration: 1 } } });
    const outs = pass(obj, { ...gone, moved: { note: 'run 1 was lost with node a' } });
    expect(last(outs).status.lastStart).toMatchObject({ run: 2, reason: 'NodeLost' });
  });

  it('the first run, a restart by the restart policy (counted in restarts), a spec change', () => {
    expect(startOf(session()).lastStart).toMatchObject({ run: 1, reason: 'FirstRun' });
    const backoff = runningStatus({ phase: 'Backoff', restarts: 1, exitCode: 3, nextRestartTime: iso(T0 - 1) });
    const restarted = startOf(session({ spec: { restartPolicy: 'OnFailure' }, status: backoff }));
    expect(restarted).toMatchObject({ run: 2, restarts: 1 });
    expect(restarted.lastStart).toMatchObject({
      reason: 'RestartPolicy',
      message: 'restart 1/3: run 1 exited with code 3',
    });
    const succeeded = runningStatus({ phase: 'Succeeded', reason: 'Completed', exitCode: 0 });
    const changed = startOf(session({ spec: { prompt: 'more' }, status: succeeded, generation: 2 }));
    expect(changed.lastStart).toMatchObject({
      run: 2,
      reason: 'SpecChanged',
      message: 'the spec changed (generation 1 → 2)',
    });
  });
});
