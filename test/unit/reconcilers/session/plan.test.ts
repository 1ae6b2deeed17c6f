/**
 * The session plan, pure: the lifecycle's main paths as data in, status + effects out, no tmux,
 * no files, no clock. The reconciler's loop over it is in reconcilers/session/reconciler.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus, AgentSpec, SessionPolicy } from '../../../../controller/api/kinds.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';
import type { PaneInfo } from '../../../../controller/observers/tmux.js';
import { LOG_START } from '../../../../controller/store/eventlog.js';
import { effective } from '../../../../controller/reconcilers/session/decide.js';
import type { Effect, Outcome, PreparedRun } from '../../../../controller/reconcilers/session/effects.js';
import {
  type Observed,
  type PlanInput,
  type PlanOutput,
  plan,
  planFinalize,
  type Resolved,
} from '../../../../controller/reconcilers/session/plan.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const agent: AgentSpec = { command: ['sh', '-c', 'exit 3'], promptDelivery: 'paste' };
const host: HostSnapshot = {
  cpu: 2,
  loadAverage: [0.1, 0.1, 0.1],
  memoryTotalBytes: 8 << 30,
  memoryAvailableBytes: 4 << 30,
  diskFreeBytes: 50 << 30,
  diskTotalBytes: 100 << 30,
} as HostSnapshot;

function session(spec: AgentSession['spec'] = {}, status?: AgentSessionStatus): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', uid: 'u-1234567890', generation: 1 },
    spec: { prompt: 'do it', ...spec },
    ...(status ? { status } : {}),
  };
}

function resolved(obj: AgentSession, policy?: SessionPolicy): Resolved {
  return { agent, workdir: '/work/repo', policy, effective: effective(obj.spec ?? {}, policy) };
}

const missing: Observed = {
  pane: { kind: 'missing' },
  hasPanes: false,
  retag: [],
  admission: { activeUnderPolicy: 0, host, nodeUnschedulable: false },
};

function input(obj: AgentSession, extra: Partial<PlanInput> = {}): PlanInput {
  return {
    key: 'default/s',
    obj,
    status: obj.status ?? {},
    observed: missing,
    resolved: resolved(obj),
    now: T0,
    ...extra,
  };
}

const types = (fx: Effect[]) => fx.map((e) => e.type);
const events = (fx: Effect[]) =>
  fx.flatMap((e) => (e.type === 'RecordEvent' ? [`${e.eventType} ${e.reason}: ${e.message}`] : []));
const cond = (s: AgentSessionStatus, type: string) => s.conditions?.find((c) => c.type === type);

const prepared: PreparedRun = {
  workdir: '/work/repo',
  workspace: '/home/ws/run-1',
  promptFile: '/home/ws/run-1/prompt.md',
  outputLog: '/home/ws/run-1/output.log',
  headBefore: 'abc123',
  position: LOG_START,
  launch: {
    session: 'orchctl-default-s-u1234567',
    cwd: '/work/repo',
    argv: ['sh', '-c', 'x'],
    env: {},
    tags: { uid: 'u', key: 'default/s#1' },
  },
};

/** Pending → admitted → prepared → launched: the three steps of a start. */
function start(obj = session()): { out: PlanOutput; steps: PlanOutput[] } {
  const first = plan(input(obj));
  const second = plan(
    input(obj, {
      status: first.status,
      observed: first.observed,
      continuation: first.continuation,
      outcomes: [{ type: 'Prepared', run: prepared }],
    }),
  );
  const launched: Outcome = { type: 'Launched', obj: { ...obj, status: second.status } };
  const third = plan(
    input(obj, {
      status: second.status,
      observed: second.observed,
      continuation: second.continuation,
      outcomes: [launched],
    }),
  );
  return { out: third, steps: [first, second, third] };
}

describe('starting a run', () => {
  it('admits a Pending session, takes a slot and asks the actuator to prepare run 1', () => {
    const out = plan(input(session()));
    expect(out.reserve).toBe(true);
    expect(out.status).toMatchObject({ phase: 'Starting', run: 1, reason: 'Starting', message: 'starting run 1' });
    expect(cond(out.status, 'Admitted')).toMatchObject({ status: 'True', reason: 'Admitted' });
    expect(out.effects.at(-1)).toEqual({ type: 'PrepareRun', run: 1, agent, workdir: '/work/repo' });
    expect(out.continuation).toEqual({ kind: 'prepare' });
    expect(out.done).toBe(false);
  });

  it('records the prepared run in the Launch effect itself, so a crash after tmux starts finds it', () => {
    const { steps } = start();
    const launch = steps[1].effects.find((e) => e.type === 'Launch');
    expect(launch).toMatchObject({
      type: 'Launch',
      clearFirst: false,
      record: {
        phase: 'Starting',
        run: 1,
        tmuxSession: prepared.launch.session,
        workspace: prepared.workspace,
        headBefore: 'abc123',
      },
    });
    expect(steps[1].continuation).toMatchObject({ kind: 'launch' });
  });

  it('once launched: Running, Started, the prompt pasted beside the loop, and the agent observed next', () => {
    const { out } = start();
    expect(out.status).toMatchObject({ phase: 'Running', reason: 'Running' });
    expect(events(out.effects)).toEqual([`Normal Started: Started run 1 in tmux session ${prepared.launch.session}`]);
    expect(out.effects.find((e) => e.type === 'Deliver')).toMatchObject({
      run: 1,
      target: `=${prepared.launch.session}:`,
    });
    expect(cond(out.status, 'PromptDelivered')).toMatchObject({ status: 'Unknown', reason: 'Delivering' });
    expect(out.needs).toEqual({ agent: true, git: true });
  });

  it('a session with no working directory fails its start at once, without preparing anything', () => {
    const obj = session();
    const out = plan(input(obj, { resolved: { ...resolved(obj), workdir: undefined } }));
    expect(types(out.effects)).not.toContain('PrepareRun');
    expect(out.continuation).toMatchObject({ kind: 'ended', to: 'Failed' });
    const settled = plan(
      input(obj, { status: out.status, continuation: out.continuation, outcomes: [{ type: 'Settled', run: {} }] }),
    );
    expect(settled.status).toMatchObject({ phase: 'Failed', reason: 'NoWorkdir' });
  });

  it('waits in Pending, Admitted=False, when the policy has no slot left', () => {
    const obj = session();
    const policy = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'p', namespace: 'default' },
      spec: { maxConcurrentSessions: 2 },
    } as SessionPolicy;
    const observed = { ...missing, admission: { activeUnderPolicy: 2, host, nodeUnschedulable: false } };
    const out = plan(input(obj, { observed, resolved: resolved(obj, policy) }));
    expect(out.done).toBe(true);
    expect(out.reserve).toBe(false);
    expect(out.effects).toEqual([]);
    expect(out.status).toMatchObject({ phase: 'Pending', reason: 'MaxConcurrentSessions' });
    expect(cond(out.status, 'Ready')).toMatchObject({ status: 'False', reason: 'MaxConcurrentSessions' });
  });

  it('asks for the admission count only when it reaches Pending (a restart come due), then admits', () => {
    const due = new Date(T0 - 1).toISOString();
    const obj = session(
      { restartPolicy: 'OnFailure' },
      { phase: 'Backoff', run: 1, restarts: 1, nextRestartTime: due },
    );
    const out = plan(input(obj, { observed: { ...missing, admission: undefined } }));
    expect(out.needs).toEqual({ admission: true });
    expect(out.status).toMatchObject({ phase: 'Pending', reason: 'Restarting' });
    expect(types(out.effects)).not.toContain('PrepareRun');
    const again = plan(input(obj, { status: out.status, observed: missing }));
    expect(again.reserve).toBe(true);
    expect(again.effects.at(-1)).toMatchObject({ type: 'PrepareRun', run: 2 });
  });

  it('waits in Pending with the reason while a referenced object is missing', () => {
    const obj = session();
    const problem = { reason: 'AgentNotFound', message: 'Agent "x" not found in namespace default', fatal: false };
    const out = plan(input(obj, { resolved: { ...resolved(obj), problem } }));
    expect(out).toMatchObject({ done: true, effects: [] });
    expect(cond(out.status, 'Ready')).toMatchObject({ status: 'False', reason: 'AgentNotFound' });
  });

  it('an agent command missing before the run starts is told once: a CommandNotFound Event, not every pass', () => {
    const obj = session();
    const problem = { reason: 'CommandNotFound', message: 'claude: command not found — install it', fatal: false };
    const out = plan(input(obj, { resolved: { ...resolved(obj), problem } }));
    expect(out.status).toMatchObject({ phase: 'Pending', reason: 'CommandNotFound', message: problem.message });
    expect(out.effects).toEqual([
      { type: 'RecordEvent', eventType: 'Warning', reason: 'CommandNotFound', message: problem.message },
    ]);
    // The next passes find it told (the status that recorded it): nothing more.
    const again = plan(input(obj, { status: out.status, resolved: { ...resolved(obj), problem } }));
    expect(again).toMatchObject({ done: true, effects: [] });
    // Another command missing is another occurrence.
    const other = { ...problem, message: 'codex: command not found — install it' };
    const next = plan(input(obj, { status: again.status, resolved: { ...resolved(obj), problem: other } }));
    expect(next.effects).toEqual([
      { type: 'RecordEvent', eventType: 'Warning', reason: 'CommandNotFound', message: other.message },
    ]);
  });
});

const running = (status: Partial<AgentSessionStatus> = {}): AgentSessionStatus => ({
  phase: 'Running',
  run: 1,
  restarts: 0,
  tmuxSession: prepared.launch.session,
  workspace: prepared.workspace,
  workdir: '/work/repo',
  startTime: new Date(T0 - 60_000).toISOString(),
  lifecycle: { runGeneration: 1 },
  conditions: [],
  ...status,
});
const pane = { paneId: '%1', session: prepared.launch.session, dead: false, key: 'default/s#1' } as PaneInfo;

describe('a run that ends', () => {
  it('exit 3 → settle the run, then Failed (Error) and a restart in 10s under OnFailure', () => {
    const obj = session({ restartPolicy: 'OnFailure' }, running());
    const observed: Observed = { ...missing, pane: { kind: 'dead', exitCode: 3 }, paneInfo: { ...pane, dead: true } };
    const out = plan(input(obj, { observed }));
    expect(out.effects.at(-1)).toMatchObject({ type: 'SettleRun', run: 1, paneId: '%1', readTail: false });
    const settled: Outcome = { type: 'Settled', run: { lastOutput: 'boom', events: [], next: LOG_START } };
    const next = plan(
      input(obj, { status: out.status, observed: out.observed, continuation: out.continuation, outcomes: [settled] }),
    );
    expect(next.status).toMatchObject({ phase: 'Backoff', exitCode: 3, lastOutput: 'boom', restarts: 1 });
    expect(next.status.nextRestartTime).toBe(new Date(T0 + 10_000).toISOString());
    expect(types(next.effects)).toContain('Kill'); // the dead pane kept under remain-on-exit goes
    expect(events(next.effects)).toEqual([
      'Warning Error: Run 1 Failed: agent exited with code 3',
      'Normal BackOff: Restarting after Error: restart 1/3 in 10s',
    ]);
    expect(next.requeueAfterMs).toBe(10_000);
  });

  it("a run its node's fuse hung up (exit 129) is restarted after the backoff without counting a restart", () => {
    const obj = session({ restartPolicy: 'OnFailure', maxRestarts: 1 }, running({ restarts: 1, run: 2 }));
    const observed: Observed = {
      ...missing,
      pane: { kind: 'dead', exitCode: 129, fenced: true },
      paneInfo: { ...pane, dead: true, fused: true },
    };
    const out = plan(input(obj, { observed }));
    const settled: Outcome = { type: 'Settled', run: {} };
    const next = plan(
      input(obj, { status: out.status, observed: out.observed, continuation: out.continuation, outcomes: [settled] }),
    );
    // maxRestarts 1 is used up: a counted restart would escalate; this one is not the agent's failure.
    expect(next.status).toMatchObject({ phase: 'Backoff', reason: 'NodeFenced', exitCode: 129, restarts: 1 });
    expect(cond(next.status, 'Escalated')).toBeUndefined();
    expect(events(next.effects)).toContainEqual(
      expect.stringMatching(/^Warning NodeFenced: Run 2 Failed: the node's fuse/),
    );
    expect(events(next.effects)).toContain(
      "Normal BackOff: Restarting after NodeFenced: restart (not counted: the node's fuse hung it up) in 10s",
    );
  });

  it('exit 127 is CommandNotFound and is not restarted', () => {
    const obj = session({ restartPolicy: 'Always' }, running());
    const observed: Observed = { ...missing, pane: { kind: 'dead', exitCode: 127 } };
    const out = plan(input(obj, { observed }));
    const next = plan(
      input(obj, {
        status: out.status,
        observed: out.observed,
        continuation: out.continuation,
        outcomes: [{ type: 'Settled', run: {} }],
      }),
    );
    expect(next.status).toMatchObject({ phase: 'Failed', reason: 'CommandNotFound' });
    expect(next.status.message).toBe('sh: command not found — install it or run orchctl doctor (exit code 127)');
    expect(next.done).toBe(true);
  });

  it('completionTime is when the process ended, when known; never before the start nor after now', () => {
    const obj = session({}, running()); // started at T0 - 60 s
    const endAt = (at: number | undefined) => {
      const pane = { kind: 'dead', exitCode: 0, ...(at !== undefined ? { at } : {}) } as const;
      const out = plan(input(obj, { observed: { ...missing, pane } }));
      const settled: Outcome = { type: 'Settled', run: {} };
      const next = plan(
        input(obj, { status: out.status, observed: out.observed, continuation: out.continuation, outcomes: [settled] }),
      );
      const ended = next.effects.find((e) => e.type === 'RunEnded');
      return [next.status.completionTime, ended?.type === 'RunEnded' ? ended.seconds : undefined];
    };
    const at = (ms: number) => new Date(ms).toISOString();
    expect(endAt(T0 - 20_000)).toEqual([at(T0 - 20_000), 40]); // ended 20 s before it was noticed
    expect(endAt(undefined)).toEqual([at(T0), 60]); // not known: when it was noticed
    expect(endAt(T0 - 90_000)).toEqual([at(T0 - 60_000), 0]); // pane_dead_time's whole second before the start
    expect(endAt(T0 + 5_000)).toEqual([at(T0), 60]); // a clock ahead of ours
  });

  it('after maxRestarts the run stays Failed and is Escalated', () => {
    const obj = session({ restartPolicy: 'OnFailure', maxRestarts: 1 }, running({ restarts: 1, run: 2 }));
    const out = plan(input(obj, { observed: { ...missing, pane: { kind: 'dead', exitCode: 1 } } }));
    const next = plan(
      input(obj, {
        status: out.status,
        observed: out.observed,
        continuation: out.continuation,
        outcomes: [{ type: 'Settled', run: {} }],
      }),
    );
    expect(next.status.phase).toBe('Failed');
    expect(cond(next.status, 'Escalated')).toMatchObject({ status: 'True', reason: 'RetryLimitReached' });
    expect(next.effects.find((e) => e.type === 'Audit' && e.entry.to === 'Escalated')).toBeDefined();
  });
});

describe('stopping', () => {
  it('desiredState Stopped: stop keys to the live pane, Stopping, then a kill once the grace is over', () => {
    const obj = session({ desiredState: 'Stopped' }, running());
    const observed: Observed = {
      ...missing,
      pane: { kind: 'alive' },
      paneInfo: pane,
      agent: { run: 1, events: [], next: LOG_START },
      gitKey: '/work/repo\n',
    };
    const out = plan(input(obj, { observed }));
    expect(out.effects.find((e) => e.type === 'SendKeys')).toEqual({ type: 'SendKeys', paneId: '%1', keys: ['C-c'] });
    expect(out.status).toMatchObject({
      phase: 'Stopping',
      reason: 'Stopping',
      stopRequestTime: new Date(T0).toISOString(),
    });
    const later = plan(input({ ...obj, status: out.status }, { status: out.status, observed, now: T0 + 10_001 }));
    expect(later.effects.find((e) => e.type === 'Kill')).toEqual({
      type: 'Kill',
      tmuxSession: prepared.launch.session,
    });
  });

  it('the time box: the screen is captured for the record before the stop keys', () => {
    const obj = session({ maxDuration: '1m' }, running({ deadlineTime: new Date(T0 - 1).toISOString() }));
    const observed: Observed = {
      ...missing,
      pane: { kind: 'alive' },
      paneInfo: pane,
      agent: { run: 1, events: [], next: LOG_START },
      gitKey: '/work/repo\n',
    };
    const out = plan(input(obj, { observed }));
    expect(types(out.effects).filter((t) => t === 'Capture' || t === 'SendKeys')).toEqual(['Capture', 'SendKeys']);
    expect(out.status).toMatchObject({ phase: 'Stopping', reason: 'TimedOut' });
    const next = plan(
      input(obj, { status: out.status, observed: out.observed, outcomes: [{ type: 'Captured', text: 'last screen' }] }),
    );
    expect(next.status.lastOutput).toBe('last screen');
  });
});

describe('deletion', () => {
  it('asks a live agent to stop, waits out the grace period, then kills and lets the object go', () => {
    const obj = session({}, running());
    const first = planFinalize({ key: 'default/s', obj, panes: [pane], stopKeys: ['C-c'], graceMs: 10_000, now: T0 });
    expect(first.effects).toEqual([{ type: 'SendKeys', paneId: '%1', keys: ['C-c'] }]);
    expect(first.status).toMatchObject({ phase: 'Stopping', reason: 'Deleting' });
    const stopping = { ...obj, status: first.status };
    const waiting = planFinalize({
      key: 'default/s',
      obj: stopping,
      panes: [pane],
      stopKeys: ['C-c'],
      graceMs: 10_000,
      now: T0 + 2000,
    });
    expect(waiting).toEqual({ effects: [], requeueAfterMs: 500 });
    const done = planFinalize({
      key: 'default/s',
      obj: stopping,
      panes: [pane],
      stopKeys: ['C-c'],
      graceMs: 10_000,
      now: T0 + 10_000,
    });
    expect(types(done.effects)).toEqual(['Kill', 'Audit', 'Log', 'RecordEvent', 'RemoveFinalizer']);
    expect(events(done.effects)).toEqual(['Normal Deleted: Session deleted: killed after the grace period']);
  });
});
