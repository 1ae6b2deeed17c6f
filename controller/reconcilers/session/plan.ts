/**
 * The session reconciler's plan: desired state + what was observed in, the new status and the
 * effects to perform out. Pure — no tmux, git, files or clock: `now` is an input.
 *
 * The lifecycle machine (machine.ts) turns observations into transitions; each transition's
 * named actions and the phase it enters become status changes and effects. Where the plan needs
 * the world's answer to go on (a run prepared and launched, a run's last facts settled) it
 * returns a continuation with the effects; the reconciler performs them and calls again with the
 * outcomes. Where it needs an observation it has not got (the agent of a run started in this
 * pass) it says so in `needs`.
 */
import { currentPause } from '../../api/pause.js';
import { RunEndReason, SessionReason } from '../../api/event-reasons.js';
import { isDeepStrictEqual } from 'node:util';
import type { SnapshotFrom } from 'xstate';
import { isTrue, setCondition } from '../../api/conditions.js';
import { formatDuration } from '../../api/duration.js';
import type { AgentSession, AgentSessionStatus } from '../../api/kinds.js';
import type { Condition } from '../../api/types.js';
import type { EventType } from '../../client/events.js';
import type { GitProgress } from '../../observers/git.js';
import type { PaneInfo } from '../../observers/tmux.js';
import { LOG_START } from '../../store/eventlog.js';
import { foldAgent, foldRunUsage, settleObservation, type AgentStatus } from './agent-pass.js';
import { contextStepMessage } from './agent-state.js';
import {
  DECISION_ANNOTATION,
  RESTARTED_AT_ANNOTATION,
  RESTART_NOTE_ANNOTATION,
  RESTART_REASON_ANNOTATION,
} from '../../api/autopilot.js';
import { type LastStart, RESTART_REASONS, type RestartReason } from '../../api/session.js';
import {
  admit,
  backoffMs,
  FENCED_REASON,
  nextLookMs,
  observedEvent,
  restartRequested,
  restartsHeld,
  wantsRunning,
} from './decide.js';
import type { Effect, Level, Outcome, PreparedRun, SettledRun } from './effects.js';
import { ACTIVE_PHASES, type LifecycleEvent, nextSnapshot, type Phase, sessionMachine } from './machine.js';
import { MAX_REPORT_BYTES } from '../../observers/report.js';
import { applyReport } from './report.js';
import { newUsage } from './usage.js';
import { budgetStopDue, budgetStopMessage, planPause } from './pause.js';
import { driverFor } from '../../agents/drivers.js';
import { classifyFailure, profileFor } from '../../agents/detection.js';
import { planContext } from './context.js';
import { applyHandoff } from './handoff.js';
import { planMessage } from './messages.js';

import type { Observed, Problem, Resolved } from './observation.js';

export type { AgentFacts, Observed, Problem, Resolved } from './observation.js';

export type Continuation =
  | { kind: 'prepare' }
  | { kind: 'launch'; prepared: PreparedRun }
  | { kind: 'ended'; from: Phase; to: Phase; ev: LifecycleEvent };

export interface PlanInput {
  key: string;
  obj: AgentSession;
  /** The status built so far in this pass (the stored one on the first step). */
  status: AgentSessionStatus;
  observed: Observed;
  resolved: Resolved;
  now: number;
  outcomes?: Outcome[];
  continuation?: Continuation;
}

export interface PlanOutput {
  status: AgentSessionStatus;
  observed: Observed;
  effects: Effect[];
  /** Call again with the effects' outcomes and this. */
  continuation?: Continuation;
  /** Observe these, then call again. */
  needs?: { agent?: boolean; git?: boolean; admission?: boolean };
  /** This session takes an admission slot now (held until its status shows it active). */
  reserve?: boolean;
  /** The pass is over: write status, look again after this long (none: on the next event). */
  done: boolean;
  requeueAfterMs?: number;
}

type Snap = SnapshotFrom<typeof sessionMachine>;

/** What status.lifecycle keeps beside phase, run and restarts to resume the machine. */
type Lifecycle = NonNullable<AgentSessionStatus['lifecycle']>;

const iso = (t: number) => new Date(t).toISOString();
const MAX_STEPS = 12;

/** One step's working state. */
class Step {
  readonly s: AgentSessionStatus;
  readonly fx: Effect[] = [];
  snap: Snap;
  observed: Observed;
  reserve = false;
  needsAdmission = false;

  constructor(readonly i: PlanInput) {
    this.s = structuredClone(i.status);
    this.s.conditions ??= [];
    this.observed = { ...i.observed };
    const lifecycle = (this.s.lifecycle ?? {}) as Lifecycle;
    this.snap = sessionMachine.resolveState({
      value: (this.s.phase as Phase | undefined) ?? 'Pending',
      context: { run: this.s.run ?? 0, restarts: this.s.restarts ?? 0, stopReason: lifecycle.stopReason },
    }) as Snap;
  }

  get phase(): Phase {
    return this.snap.value as Phase;
  }
  get gen(): number | undefined {
    return this.i.obj.metadata.generation;
  }
  cond(type: string, status: Condition['status'], reason: string, message = ''): boolean {
    return setCondition(this.s.conditions!, { type, status, reason, message, observedGeneration: this.gen });
  }
  event(eventType: EventType, reason: string, message: string): void {
    this.fx.push({ type: 'RecordEvent', eventType, reason, message });
  }
  wsLog(level: Level, message: string, run = this.s.run ?? 0): void {
    if (this.s.workspace) this.fx.push({ type: 'WorkspaceLog', run, level, message });
  }
  audit(from: string | undefined, to: string, reason?: string, message?: string): void {
    const m = this.i.obj.metadata;
    const entry = { kind: 'AgentSession', namespace: m.namespace, name: m.name, uid: m.uid, run: this.s.run };
    this.fx.push({ type: 'Audit', entry: { ...entry, from, to, reason, message } });
  }
  /** The restart annotation's value while it asks for a new run (decide.ts restartRequested). */
  get restartAsked(): string | undefined {
    return wantsRunning(this.i.obj) ? restartRequested({ ...this.i.obj, status: this.s }) : undefined;
  }
  out(extra: Partial<PlanOutput>): PlanOutput {
    return { status: this.s, observed: this.observed, effects: this.fx, done: false, reserve: this.reserve, ...extra };
  }
}

export function plan(i: PlanInput): PlanOutput {
  const p = new Step(i);
  const { resolved } = i;
  // Waiting for a referenced Agent/Project/path to appear: not an error, a condition.
  if (!i.continuation && p.phase === 'Pending' && !i.observed.adopt && resolved.problem && !resolved.problem.fatal) {
    const { reason, message } = resolved.problem;
    // A missing agent command waits for a person to install it: told once, when the session comes to
    // wait for it (not every pass), with the status write that records it.
    const told = p.s.reason === reason && p.s.message === message;
    if (reason === RunEndReason.CommandNotFound && !told) p.event('Warning', reason, message);
    p.s.phase = 'Pending';
    p.s.reason = reason;
    p.s.message = message;
    p.cond('Ready', 'False', reason, message);
    return p.out({ done: true });
  }
  for (const session of i.observed.retag) p.fx.push({ type: 'TagStore', tmuxSession: session });
  p.observed = { ...p.observed, retag: [] };

  let injected: LifecycleEvent | undefined;
  for (const o of i.outcomes ?? []) {
    if (o.type === 'Captured' && o.text) p.s.lastOutput = o.text;
    if (o.type === 'StartFailed') injected = { type: 'START_FAILED', reason: o.reason, message: o.message };
  }
  const c = i.continuation;
  if (c?.kind === 'prepare') {
    const prepared = i.outcomes?.find((o) => o.type === 'Prepared');
    if (prepared?.type === 'Prepared') return recordAndLaunch(p, prepared.run);
  } else if (c?.kind === 'launch' && !injected) {
    launched(p, c.prepared);
  } else if (c?.kind === 'ended') {
    const settled = i.outcomes?.find((o) => o.type === 'Settled');
    runEnded(p, c.to, c.ev, settled?.type === 'Settled' ? settled.run : {});
    finishEntering(p, c.from, c.to);
  }

  for (let step = 0; step < MAX_STEPS; step++) {
    const phase = p.phase;
    const session = { ...i.obj, status: p.s };
    const effective = resolved.effective;
    let ev = injected ?? observedEvent({ phase, session, pane: p.observed.pane, now: i.now, effective });
    injected = undefined;
    // A budget with action Stop ends the run at an idle point (pause.ts).
    if (!ev && phase === 'Running' && budgetStopDue(p.s, resolved.policy))
      ev = { type: 'STOP', reason: 'BudgetExceeded' };
    if (!ev && phase === 'Pending') ev = admission(p);
    if (!ev) break;
    const [next, actions] = nextSnapshot(p.snap, ev);
    const changed = next.value !== p.snap.value || !isDeepStrictEqual(next.context, p.snap.context);
    if (!changed && actions.length === 0) break;
    p.snap = next as Snap;
    p.s.phase = next.value as Phase;
    p.s.run = next.context.run;
    p.s.restarts = next.context.restarts;
    const prev = (p.s.lifecycle ?? {}) as Lifecycle;
    p.s.lifecycle = {
      ...(prev.runGeneration !== undefined ? { runGeneration: prev.runGeneration } : {}),
      ...(prev.restartedAt !== undefined ? { restartedAt: prev.restartedAt } : {}),
      ...(prev.epoch !== undefined ? { epoch: prev.epoch } : {}),
      ...(prev.nodeName !== undefined ? { nodeName: prev.nodeName } : {}),
      ...(next.context.stopReason ? { stopReason: next.context.stopReason } : {}),
    };
    const to = next.value as Phase;
    let launching: PlanOutput | LifecycleEvent | undefined;
    for (const a of actions) {
      if (a.type !== 'launchRun') act(p, a.type, ev);
      else if (p.observed.adopt) adoptRun(p, p.observed.adopt);
      else {
        // The run starts: say so, then let the actuator prepare it; we go on with its outcome.
        p.s.phase = to;
        entered(p, phase, to, ev);
        launching = launchRun(p);
      }
    }
    if (launching && 'effects' in launching) return launching;
    if (launching) {
      injected = launching; // nothing to launch with: START_FAILED now
      continue;
    }
    if (to !== phase) {
      if (isEnded(to)) return endRun(p, phase, to, ev);
      entered(p, phase, to, ev);
    }
    if (ev.type === 'GRACE_EXPIRED') break; // the kill shows in the next observation
  }
  return finish(p);
}

const isEnded = (ph: Phase) => ph === 'Succeeded' || ph === 'Failed' || ph === 'Killed' || ph === 'TimedOut';

// ---- admission and the machine's actions ------------------------------------------------------

function admission(p: Step): LifecycleEvent | undefined {
  const { i, s } = p;
  if (!wantsRunning(i.obj)) {
    s.reason = 'Stopped';
    s.message = 'desiredState is Stopped';
    return undefined;
  }
  if (p.observed.adopt) return { type: 'ADMIT' };
  if (i.resolved.problem) return undefined;
  if (!p.observed.admission) {
    p.needsAdmission = true; // counted only for a session that asks: an O(sessions) look at the cache
    return undefined;
  }
  const { activeUnderPolicy, host, nodeUnschedulable } = p.observed.admission;
  const a = admit(i.resolved.policy, activeUnderPolicy, host, nodeUnschedulable);
  p.cond('Admitted', a.admitted ? 'True' : 'False', a.reason, a.message);
  if (!a.admitted) {
    s.reason = a.reason;
    s.message = `waiting for admission: ${a.message}`;
    return undefined;
  }
  p.reserve = true;
  return { type: 'ADMIT' };
}

function act(p: Step, action: string, ev: LifecycleEvent): void {
  const { s, i } = p;
  const pane = p.observed.paneInfo;
  const e = i.resolved.effective;
  switch (action) {
    case 'sendStopKeys': {
      s.stopRequestTime = iso(i.now);
      const keys = i.resolved.agent?.stop?.keys ?? ['C-c'];
      if (pane && !pane.dead) p.fx.push({ type: 'SendKeys', paneId: pane.paneId, keys });
      const restart = p.restartAsked;
      const why =
        ev.type === 'TIMEOUT'
          ? 'time box reached'
          : restart
            ? `restart requested: ${RESTARTED_AT_ANNOTATION}=${restart}`
            : 'desiredState Stopped';
      p.wsLog('INFO', `sent stop keys ${keys.join(' ')} (${why})`);
      return;
    }
    case 'killSession':
      if (s.tmuxSession) p.fx.push({ type: 'Kill', tmuxSession: s.tmuxSession });
      p.wsLog('WARN', `grace period over; killed tmux session ${s.tmuxSession}`);
      return;
    case 'captureOutput':
      if (pane) p.fx.push({ type: 'Capture', paneId: pane.paneId });
      return;
    case 'scheduleRestart': {
      const delay = backoffMs(e, Math.max(0, (p.snap.context.restarts ?? 1) - 1));
      s.nextRestartTime = iso(i.now + delay);
      s.message =
        s.reason === FENCED_REASON
          ? `restart (not counted: the node's fuse hung it up) in ${formatDuration(delay)}`
          : `restart ${p.snap.context.restarts}/${e.maxRestarts} in ${formatDuration(delay)}`;
      p.event('Normal', SessionReason.BackOff, `Restarting after ${s.reason ?? 'failure'}: ${s.message}`);
      return;
    }
    case 'escalate': {
      const n = p.snap.context.restarts;
      const exit = s.exitCode !== undefined ? ` with exit code ${s.exitCode}` : '';
      const msg =
        `gave up after ${n} restart${n === 1 ? '' : 's'} (maxRestarts ${e.maxRestarts}); ` +
        `last run ended ${s.reason ?? ''}${exit}`;
      p.cond('Escalated', 'True', 'RetryLimitReached', msg);
      p.event('Warning', SessionReason.Escalated, msg);
      p.fx.push({ type: 'Log', level: 'WARN', message: `agentsession ${i.key}: escalated: ${msg}` });
      // An audit line of its own: the escalation is not a phase (the run stays in its ended phase).
      p.audit(s.phase, 'Escalated', 'RetryLimitReached', msg);
      return;
    }
  }
}

// ---- starting a run ---------------------------------------------------------------------------

/** Asks the actuator to prepare the run; what cannot even be tried fails at once. */
function launchRun(p: Step): PlanOutput | LifecycleEvent {
  const { s, i } = p;
  const restart = p.restartAsked;
  s.lastStart = startOf(p, iso(i.now)); // before runGeneration moves on: a spec change is one reason
  s.lifecycle = { ...(s.lifecycle ?? {}), runGeneration: i.obj.metadata.generation };
  // The binding the run starts under (epoch.ts): a later binding makes this run stale.
  const binding = i.obj.status?.binding;
  if (binding) Object.assign(s.lifecycle, { epoch: binding.epoch, nodeName: binding.nodeName });
  // Recorded with the run (the Launch effect writes it before tmux starts): the value is honoured once.
  if (restart) {
    s.lifecycle.restartedAt = restart;
    if (p.snap.context.run > 1)
      p.event(
        'Normal',
        SessionReason.Restarting,
        `Starting run ${p.snap.context.run} for ${RESTARTED_AT_ANNOTATION}=${restart}`,
      );
  }
  const agent = i.resolved.agent;
  const workdir = i.resolved.workdir;
  const failed = (reason: string, message: string): LifecycleEvent => ({ type: 'START_FAILED', reason, message });
  if (!agent) return failed('AgentNotFound', 'no agent to run');
  if (!workdir) return failed('NoWorkdir', 'neither a Project nor a workdir gives a working directory');
  // A run that replaces one lost with its node (epoch.ts) is told so, like a restart with a note.
  const moved = p.observed.moved?.note;
  const note = restart ? i.obj.metadata.annotations?.[RESTART_NOTE_ANNOTATION] : moved;
  // A restarted run is given the previous run's handoff, if it left one (rehydrate.ts).
  const handoffFrom = (restart || moved) && p.snap.context.run > 1 ? { handoffFrom: p.snap.context.run - 1 } : {};
  const inheritEnv = i.resolved.policy?.spec?.inheritEnv;
  p.fx.push({
    type: 'PrepareRun',
    run: p.snap.context.run,
    agent,
    workdir,
    ...(note ? { note } : {}),
    ...handoffFrom,
    ...(inheritEnv?.length ? { inheritEnv } : {}),
  });
  return p.out({ continuation: { kind: 'prepare' } });
}

/**
 * Why the run about to start starts (status.lastStart): a restart asked through the annotation,
 * with its writer's reason; the run of a lost node; a spec change; the restart policy (the only
 * restarts status.restarts counts); else the first run.
 */
function startOf(p: Step, time: string): LastStart {
  const { i, s } = p;
  const run = p.snap.context.run;
  const at = (reason: LastStart['reason'], message: string): LastStart => ({ run, reason, time, message });
  if (run <= 1) return at('FirstRun', 'the first run');
  const annotations = i.obj.metadata.annotations ?? {};
  const restart = p.restartAsked;
  if (restart) {
    const said = annotations[RESTART_REASON_ANNOTATION];
    // Metadata anyone may write: only the known values are taken.
    const reason = RESTART_REASONS.includes(said as RestartReason) ? (said as RestartReason) : undefined;
    const by = reason ? askedBy(reason, annotations, run) : 'restart requested';
    return at(reason ?? 'Restart', `${by} (${RESTARTED_AT_ANNOTATION}=${restart})`);
  }
  if (p.observed.moved) return at('NodeLost', `run ${run - 1} was lost with its node`);
  const runGeneration = s.lifecycle?.runGeneration;
  const gen = i.obj.metadata.generation ?? 0;
  if (runGeneration !== undefined && runGeneration !== gen)
    return at('SpecChanged', `the spec changed (generation ${runGeneration} → ${gen})`);
  const restarts = p.snap.context.restarts;
  if (restarts > 0) {
    const exit = s.exitCode !== undefined ? `: run ${run - 1} exited with code ${s.exitCode}` : '';
    return at('RestartPolicy', `restart ${restarts}/${i.resolved.effective.maxRestarts}${exit}`);
  }
  return at('NewRun', 'a new run');
}

function askedBy(reason: RestartReason, annotations: Record<string, string>, run: number): string {
  switch (reason) {
    case 'Manual':
      return 'orchctl restart';
    case 'Autopilot':
      return `Decision ${(annotations[DECISION_ANNOTATION] ?? '').slice(0, 253)}`.trim();
    case 'Recovery':
      return `the pipeline's recovery of run ${run - 1}`;
    case 'Resume':
      return 'orchctl pipeline resume';
    case 'Context':
      return "the context policy's restart";
  }
}

/** Prepared: record the run in status, then start tmux (the actuator does both, in that order). */
function recordAndLaunch(p: Step, r: PreparedRun): PlanOutput {
  const { s, i } = p;
  const e = i.resolved.effective;
  const run = p.snap.context.run;
  Object.assign(s, {
    tmuxSession: r.launch.session,
    workspace: r.workspace,
    workdir: r.workdir,
    startTime: iso(i.now),
    headBefore: r.headBefore,
    deadlineTime: e.maxDurationMs ? iso(i.now + e.maxDurationMs) : undefined,
    lastOutput: '',
    git: r.headBefore ? { head: r.headBefore, commits: 0, insertions: 0, deletions: 0, filesChanged: 0 } : undefined,
  });
  const agent: AgentStatus = { run, position: r.position, counts: {}, hooks: false, turns: 0 };
  if (r.sessionId) agent.sessionId = r.sessionId;
  if (r.transcript) agent.transcript = r.transcript;
  if (r.records) agent.records = r.records;
  s.agent = agent;
  const ended = ['completionTime', 'exitCode', 'result', 'stopRequestTime', 'nextRestartTime', 'promptDelivery'];
  const ledger = s.usage?.hourly;
  for (const f of [...ended, 'usage', 'report', 'pause']) delete (s as Record<string, unknown>)[f];
  // The run's sums start again; the budget's ledger of the runs before goes on (usage.ts).
  if (ledger?.length) s.usage = { ...newUsage(run), hourly: ledger };
  for (const f of ['deadlineTime', 'git', 'headBefore'] as const) if (!s[f]) delete s[f];
  s.phase = 'Starting';
  const record = { ...structuredClone(s), observedGeneration: i.obj.metadata.generation };
  p.fx.push({ type: 'Launch', record, launch: r.launch, outputLog: r.outputLog, clearFirst: p.observed.hasPanes });
  return p.out({ continuation: { kind: 'launch', prepared: r } });
}

/** tmux started the run: its state file, the prompt's delivery, and watches on its sources. */
function launched(p: Step, r: PreparedRun): void {
  const { s, i } = p;
  const run = s.run ?? 0;
  const agent = i.resolved.agent!;
  const mode = agent.promptDelivery ?? 'paste';
  p.fx.push({
    type: 'WriteState',
    run,
    state: {
      session: i.key,
      uid: i.obj.metadata.uid,
      run,
      agent: i.obj.spec?.agentRef ?? '(inline)',
      status: 'RUNNING',
      tmuxSession: r.launch.session,
      workdir: r.workdir,
      headBefore: r.headBefore ?? null,
      startTime: s.startTime,
      promptFile: r.promptFile,
      resultFile: `${r.workspace}/result.json`,
    },
  });
  p.wsLog('INFO', `run ${run} started in tmux session ${r.launch.session} (workdir ${r.workdir}, delivery ${mode})`);
  p.observed = { ...p.observed, pane: { kind: 'alive' }, paneInfo: undefined, hasPanes: true };
  if (mode === 'paste') {
    p.cond('PromptDelivered', 'Unknown', 'Delivering', 'waiting for the agent to be ready before pasting');
    p.fx.push({ type: 'Deliver', run, target: `=${r.launch.session}:`, agent, promptFile: r.promptFile });
  } else {
    const reason = mode === 'none' ? 'NoPrompt' : mode === 'stdin' ? 'DeliveredByStdin' : 'DeliveredByArgument';
    p.cond('PromptDelivered', 'True', reason, `prompt delivery: ${mode}`);
    s.promptDelivery = { run, delivered: true, reason, retries: 0, at: iso(i.now) };
  }
}

/** A run launched by a controller that died before recording it: take it over as it is. */
function adoptRun(p: Step, adopt: NonNullable<Observed['adopt']>): void {
  const { s, i } = p;
  const { pane, state } = adopt;
  const run = Number(pane.key.split('#')[1]);
  p.snap = sessionMachine.resolveState({
    value: 'Starting',
    context: { run, restarts: p.snap.context.restarts },
  }) as Snap;
  Object.assign(s, {
    run,
    tmuxSession: pane.session,
    workspace: adopt.workspace,
    workdir: (state.workdir as string) ?? i.resolved.workdir,
    startTime: (state.startTime as string) ?? iso(pane.created * 1000),
    ...(state.headBefore ? { headBefore: state.headBefore as string } : {}),
  });
  // Its launcher died before recording it: the reason is read off the same state as it was then.
  s.lastStart = startOf(p, s.startTime!);
  if (i.resolved.effective.maxDurationMs)
    s.deadlineTime = iso(Date.parse(s.startTime!) + i.resolved.effective.maxDurationMs);
  p.observed = { ...p.observed, pane: { kind: 'alive' }, paneInfo: pane, adopt: undefined };
  const msg = 'run adopted after a controller restart; delivery was not confirmed';
  p.cond('PromptDelivered', 'Unknown', 'Adopted', msg);
  p.wsLog('INFO', `run ${run} adopted from tmux session ${pane.session}`, run);
}

// ---- entering a phase -------------------------------------------------------------------------

/** Status, events, audit and logs for entering a phase (an ended run goes through endRun first). */
function entered(p: Step, from: Phase, to: Phase, ev: LifecycleEvent): void {
  const { s } = p;
  const timedOut = p.snap.context.stopReason === 'TimedOut';
  switch (to) {
    case 'Starting':
      s.reason = 'Starting';
      s.message = `starting run ${s.run}`;
      break;
    case 'Running':
      s.reason = 'Running';
      s.message = `running in tmux session ${s.tmuxSession}`;
      p.cond('Ready', 'True', 'Running', s.message);
      p.event('Normal', SessionReason.Started, `Started run ${s.run} in tmux session ${s.tmuxSession}`);
      break;
    case 'Stopping': {
      const restart = p.restartAsked;
      const budget = p.snap.context.stopReason === 'BudgetExceeded';
      s.reason = timedOut ? 'TimedOut' : budget ? 'BudgetExceeded' : 'Stopping';
      s.message = timedOut
        ? `time box of ${formatDuration(p.i.resolved.effective.maxDurationMs ?? 0)} reached; stopping`
        : budget
          ? budgetStopMessage(p.i.resolved.policy)
          : restart
            ? `restart requested (${RESTARTED_AT_ANNOTATION}=${restart}); stopping run ${s.run} first`
            : 'desiredState is Stopped; stopping';
      p.cond('Ready', 'False', 'Stopping', s.message);
      p.event(
        timedOut || budget ? 'Warning' : 'Normal',
        timedOut ? SessionReason.TimeBoxExceeded : budget ? SessionReason.BudgetExceeded : SessionReason.Stopping,
        s.message,
      );
      break;
    }
    case 'Backoff':
      p.cond('Ready', 'False', 'BackOff', s.message ?? '');
      break;
    case 'Pending':
      if (ev.type === 'NEW_RUN') {
        const restart = p.restartAsked;
        p.cond('Escalated', 'False', 'NewRun', 'spec changed or run requested again');
        s.reason = 'NewRun';
        s.message = restart ? `restart requested (${RESTARTED_AT_ANNOTATION}=${restart})` : 'a new run was requested';
        // A restart is told once, by its Restarting Event when the run starts.
        if (!restart) p.event('Normal', SessionReason.NewRun, 'Spec changed: starting a new run');
      } else {
        s.reason = 'Restarting';
        s.message = `restart ${s.restarts} due`;
      }
      delete s.nextRestartTime;
      break;
  }
  finishEntering(p, from, to);
}

function finishEntering(p: Step, from: Phase, to: Phase): void {
  const { s } = p;
  // A later run that succeeded settles an earlier escalation: one story, not two.
  if (to === 'Succeeded' && s.conditions?.some((c) => c.type === 'Escalated' && c.status === 'True'))
    p.cond('Escalated', 'False', 'Succeeded', `run ${s.run} succeeded after the escalation`);
  p.audit(from, to, s.reason, s.message);
  const ended = to === 'Failed' || to === 'Killed' || to === 'TimedOut';
  p.wsLog(ended ? 'WARN' : 'INFO', `phase ${from} → ${to}${s.message ? `: ${s.message}` : ''}`);
  const msg = `agentsession ${p.i.key}: ${from} → ${to}${s.message ? ` (${s.message})` : ''}`;
  p.fx.push({ type: 'Log', level: 'INFO', message: msg });
}

/** The run ended: ask the actuator for its last facts, then finish with them (runEnded). */
function endRun(p: Step, from: Phase, to: Phase, ev: LifecycleEvent): PlanOutput {
  const { s } = p;
  p.s.phase = to;
  const pane = p.observed.paneInfo;
  p.fx.push({
    type: 'SettleRun',
    run: s.run ?? 0,
    workspace: s.workspace,
    // The pane still exists when it died under remain-on-exit: its screen is the best tail.
    paneId: pane?.paneId,
    readTail: !pane && !s.lastOutput,
    from: s.agent?.position ?? LOG_START,
    transcript: s.agent?.transcript,
    agent: p.i.resolved.agent,
    workdir: s.workdir,
    headBefore: s.headBefore,
  });
  return p.out({ continuation: { kind: 'ended', from, to, ev } });
}

function runEnded(p: Step, to: Phase, ev: LifecycleEvent, settled: SettledRun): void {
  const { s, i } = p;
  const run = s.run ?? 0;
  if (s.workspace && s.agent) {
    const prev = s.agent;
    s.usage = foldRunUsage(prev, s.usage, run, settled.events ?? [], i.resolved.agent);
    const next = settled.next ?? prev.position ?? LOG_START;
    s.agent = settleObservation(prev, run, settled.events ?? [], next, i.resolved.agent);
    for (const type of ['AgentBusy', 'WaitingForInput', 'Stalled']) p.cond(type, 'False', 'Exited');
  }
  p.fx.push({ type: 'ForgetRun', run, workspace: s.workspace });
  const endedAt = endTime(s, ev, i.now);
  s.completionTime = iso(endedAt);
  if (ev.type === 'EXITED') s.exitCode = ev.exitCode;
  if (settled.lastOutput) s.lastOutput = settled.lastOutput;
  const pane = p.observed.paneInfo;
  if (pane) {
    p.fx.push({ type: 'Kill', tmuxSession: pane.session });
    p.observed = { ...p.observed, paneInfo: undefined };
  }
  if (settled.result) s.result = settled.result;
  if (settled.git) applyGit(s, settled.git);
  // A run that never started (START_FAILED) has no duration worth a histogram bucket.
  const started = Date.parse(s.startTime ?? '');
  if (ev.type !== 'START_FAILED' && !Number.isNaN(started))
    p.fx.push({ type: 'RunEnded', run, phase: to, seconds: Math.max(0, (endedAt - started) / 1000) });
  const eventType = endReason(p, to, ev);
  p.cond('Ready', 'False', s.reason!, s.message);
  p.cond('Succeeded', to === 'Succeeded' ? 'True' : 'False', s.reason!, s.message);
  // A budget's Stop is told apart from its pause (both status.reason BudgetExceeded): nothing restarts the run.
  const told =
    to === 'Succeeded'
      ? SessionReason.Completed
      : s.reason === SessionReason.BudgetExceeded
        ? SessionReason.BudgetStopped
        : s.reason!;
  p.event(eventType, told, `Run ${run} ${to}: ${s.message}`);
  if (s.workspace) {
    const state = {
      session: i.key,
      uid: i.obj.metadata.uid,
      run,
      status: to.toUpperCase(),
      tmuxSession: s.tmuxSession,
      workdir: s.workdir,
      headBefore: s.headBefore ?? null,
      startTime: s.startTime,
      completedTime: s.completionTime,
      exitCode: s.exitCode ?? null,
      reason: s.reason,
      git: s.git ?? null,
    };
    p.fx.push({ type: 'WriteState', run, state });
  }
}

/**
 * When the run ended: when its process exited if that is known (the exit-code file, tmux's
 * pane_dead_time) — a run that ended while no controller watched ended then, not when it was
 * noticed — else now. Never before the run started (pane_dead_time is in whole seconds) nor after now.
 */
function endTime(s: AgentSessionStatus, ev: LifecycleEvent, now: number): number {
  if (ev.type !== 'EXITED' || ev.at === undefined || !Number.isFinite(ev.at)) return now;
  const started = Date.parse(s.startTime ?? '');
  return Math.min(now, Number.isNaN(started) ? ev.at : Math.max(started, ev.at));
}

/** status.reason and .message of an ended run; returns the Event's type. */
function endReason(p: Step, to: Phase, ev: LifecycleEvent): EventType {
  const { s, i } = p;
  const commits = s.git?.commits ? `, ${s.git.commits} commit${s.git.commits === 1 ? '' : 's'}` : '';
  const set = (reason: string, message: string, type: EventType = 'Warning') => {
    s.reason = reason;
    s.message = message;
    return type;
  };
  if (ev.type === 'START_FAILED') return set(ev.reason, ev.message);
  if (to === 'Failed' && ev.type === 'EXITED' && ev.fenced)
    return set(
      FENCED_REASON,
      `the node's fuse hung up the agent (exit code ${s.exitCode}): the node lease went unrenewed; ` +
        'restarted without counting a restart',
    );
  if (to === 'Succeeded') return set('Completed', `agent exited with code 0${commits}`, 'Normal');
  if (to === 'Failed' && s.exitCode === -1)
    return set('ExitStatusUnknown', `the agent's process ended but tmux recorded no exit status${commits}`);
  if (to === 'Failed' && s.exitCode === 127) {
    // The shell's "command not found": restarting cannot help, so it is not retried.
    const cnf = commandNotFound(i.resolved.agent?.command?.[0] ?? 'the agent command');
    return set(cnf.reason, `${cnf.message} (exit code 127)${commits}`);
  }
  if (to === 'Failed') {
    // A text the Agent's detection data knows (failures: e.g. Claude Code's "Unable to connect to
    // Anthropic services") says more than an exit code.
    const profile = profileFor(i.resolved.agent);
    const known = profile && s.lastOutput ? classifyFailure(s.lastOutput, profile) : undefined;
    if (known) return set(known.reason, `${known.message} (exit code ${s.exitCode})${commits}`);
    return set('Error', `agent exited with code ${s.exitCode}${commits}`);
  }
  if (to === 'TimedOut') {
    const box = formatDuration(i.resolved.effective.maxDurationMs ?? 0);
    return set('TimedOut', `stopped after the time box of ${box}${commits}`);
  }
  if (p.snap.context.stopReason === 'BudgetExceeded')
    return set('BudgetExceeded', `${budgetStopMessage(i.resolved.policy)}${commits}`);
  if (p.snap.context.stopReason === 'Stopped') {
    const exit = s.exitCode !== undefined ? ` (exit code ${s.exitCode})` : '';
    return set('Stopped', `stopped on request${exit}${commits}`, 'Normal');
  }
  const lost = 'the tmux session disappeared without an exit status (killed outside orchctl, or the tmux server died)';
  return set('TmuxSessionLost', `${lost}${commits}`);
}

/** The problem of an agent command that is not installed. */
export function commandNotFound(command: string): Problem {
  const base = command.split('/').pop() || command;
  return {
    reason: 'CommandNotFound',
    message: `${base}: command not found — install it or run orchctl doctor`,
    fatal: false,
  };
}

function applyGit(s: AgentSessionStatus, g: GitProgress): void {
  if (!g.isGitRepo) {
    delete s.git;
    return;
  }
  s.git = {
    head: g.head,
    branch: g.branch,
    commits: g.commits,
    insertions: g.insertions,
    deletions: g.deletions,
    filesChanged: g.filesChanged,
    ...(g.lastCommit ? { lastCommit: g.lastCommit } : {}),
  };
}

/** Which repository and starting point git facts are for. */
export const gitKey = (s: AgentSessionStatus) => `${s.workdir}\n${s.headBefore ?? ''}`;

// ---- the end of a pass ------------------------------------------------------------------------

function finish(p: Step): PlanOutput {
  const { s, i } = p;
  if (p.needsAdmission) return p.out({ needs: { admission: true } });
  const phase = p.phase;
  const active = ACTIVE_PHASES.has(phase);
  const agentStatus = s.agent;
  if (active && s.workspace) {
    const needs = {
      agent: p.observed.agent?.run !== s.run,
      git: !!s.workdir && p.observed.gitKey !== gitKey(s),
    };
    if (needs.agent || needs.git) return p.out({ needs });
  }
  timeBoxWarning(p);
  s.phase = phase;
  summarise(p);
  let agentDue: number | undefined;
  if (active && s.workspace) {
    if (p.observed.outputTail) s.lastOutput = p.observed.outputTail;
    agentDue = observeAgentInto(p, agentStatus);
    if (p.observed.git) applyGit(s, p.observed.git);
  }
  reportInto(p);
  const h = p.observed.handoff;
  if (h && h.run === s.run) s.handoff = applyHandoff(s.handoff, h.run, h, iso(i.now));
  p.observed = { ...p.observed, handoff: undefined }; // once per reading, not once per step
  const pauseDue = pauseInto(p);
  const live = !!p.observed.paneInfo && !p.observed.paneInfo.dead;
  const m = planMessage({
    annotations: i.obj.metadata.annotations,
    status: s,
    live,
    inFlight: p.observed.message,
    now: i.now,
  });
  if (m.delivery) s.messageDelivery = m.delivery;
  p.fx.push(...m.effects);
  const d = p.observed.delivery;
  if (d) {
    p.cond('PromptDelivered', d.delivered ? 'True' : 'False', d.reason, d.message);
    const again = s.promptDelivery?.run === s.run ? s.promptDelivery?.redeliveries : undefined;
    s.promptDelivery = {
      run: s.run,
      delivered: d.delivered,
      reason: d.reason,
      retries: d.retries ?? 0,
      ...(d.confirmedBy ? { confirmedBy: d.confirmedBy } : {}),
      ...(again ? { redeliveries: again } : {}),
      at: iso(i.now),
    };
    // A prompt that did not get in needs a person as much as a question does: an Event, routed
    // like the others (a crash before the status write records the same one again, counted).
    if (!d.delivered) {
      const retry = (again ?? 0) < MAX_REDELIVERIES ? '; delivered again once the screen shows an input box' : '';
      p.event('Warning', SessionReason.PromptNotConfirmed, `Run ${s.run}: ${d.reason}: ${d.message}${retry}`);
    }
    p.fx.push({ type: 'DeliveryRecorded', run: s.run ?? 0 });
  }
  redeliverInto(p);
  const contextDue = contextInto(p);
  const next = nextLookMs(phase, { ...i.obj, status: s }, i.now, i.resolved.effective);
  const requeueAfterMs = next === undefined || pauseDue === undefined ? (next ?? pauseDue) : Math.min(next, pauseDue);
  const due = sooner(sooner(requeueAfterMs, contextDue), m.dueMs);
  return p.out({ done: true, requeueAfterMs: sooner(due, agentDue) });
}

/** How often one run's prompt is delivered again after it was not confirmed. */
export const MAX_REDELIVERIES = 2;

/**
 * A prompt that was not confirmed (PromptDelivered False) goes in again once the screen has
 * changed since and shows an empty input box with the agent idle — a dialog answered by a person,
 * say — and the agent has not taken a prompt meanwhile. At most MAX_REDELIVERIES times a run.
 */
function redeliverInto(p: Step): void {
  const { s, i } = p;
  const pd = s.promptDelivery;
  const agent = i.resolved.agent;
  const facts = p.observed.agent;
  const screen = facts?.screen;
  const pane = p.observed.paneInfo;
  if (!ACTIVE_PHASES.has(p.phase) || !s.workspace || !s.tmuxSession || !agent || !pane || pane.dead) return;
  if (!pd || pd.run !== s.run || pd.delivered || (pd.redeliveries ?? 0) >= MAX_REDELIVERIES) return;
  if (s.conditions?.find((c) => c.type === 'PromptDelivered')?.status !== 'False') return;
  if (!facts || facts.run !== s.run || screen?.state !== 'idle' || !screen.inputReady) return;
  if ((facts.screenChangedAt ?? 0) <= Date.parse(pd.at)) return; // the screen it failed on
  if (s.agent?.counts?.user_message || s.agent?.turns) return; // it took a prompt after all
  const n = (pd.redeliveries ?? 0) + 1;
  s.promptDelivery = { ...pd, redeliveries: n };
  const msg =
    'the screen changed to an empty input box after the prompt was not confirmed: ' +
    `delivering it again (${n} of ${MAX_REDELIVERIES})`;
  p.cond('PromptDelivered', 'Unknown', 'Delivering', msg);
  p.wsLog('INFO', `run ${s.run}: ${msg}`);
  p.fx.push({
    type: 'Deliver',
    run: s.run ?? 0,
    target: `=${s.tmuxSession}:`,
    agent,
    promptFile: `${s.workspace}/prompt.md`,
  });
}

const sooner = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? (a ?? b) : Math.min(a, b);

/** status.context (context.ts): the statusline's figure; the policy's handoff → compact → clear → rehydrate. */
function contextInto(p: Step): number | undefined {
  const { s, i } = p;
  const c = p.observed.context;
  p.observed = { ...p.observed, context: undefined }; // once per reading, not once per step
  if (p.phase !== 'Running' || !s.workspace) return undefined;
  const run = s.run ?? 0;
  const pane = p.observed.paneInfo;
  const live = !!pane && !pane.dead;
  const delivered = s.conditions?.some((x) => x.type === 'PromptDelivered' && x.reason !== 'Delivering');
  const paused = !!currentPause(s);
  const facts = p.observed.agent?.run === run ? p.observed.agent : undefined;
  const r = planContext({
    status: s,
    policy: i.resolved.policy?.spec?.context,
    commands: driverFor(i.resolved.agent).context,
    statusline: c?.statusline,
    events: facts?.events ?? [],
    handoff: c?.handoff,
    checkpointSummary: c?.checkpointSummary,
    lastEvaluation: s.lastEvaluation,
    ready: live && s.agent?.state === 'idle' && !!delivered && !paused,
    now: i.now,
  });
  for (const e of r.effects) {
    if (e.kind === 'event') {
      p.event(e.warning ? 'Warning' : 'Normal', e.reason, e.message);
      if (e.reason !== 'ContextWindow') p.wsLog(e.warning ? 'WARN' : 'INFO', `context: ${e.reason}: ${e.message}`);
    } else if (e.kind === 'deliver') p.fx.push({ type: 'DeliverText', run, text: e.text });
    else if (e.kind === 'command' && live)
      p.fx.push({ type: 'SendKeys', paneId: pane.paneId, keys: ['Enter'], literal: e.text });
    else if (e.kind === 'restart') p.fx.push({ type: 'RequestRestart', note: e.note });
  }
  return r.wakeAt === undefined ? undefined : Math.max(0, r.wakeAt - i.now);
}

/** status.pause (pause.ts): held for a rate limit or a budget, resumed with the continue message. */
function pauseInto(p: Step): number | undefined {
  const { s, i } = p;
  const r = planPause({
    status: s,
    uid: i.obj.metadata.uid ?? '',
    policy: i.resolved.policy,
    screen: p.observed.agent?.screen,
    resumed: p.observed.resumed,
    now: i.now,
  });
  if (r.pause) s.pause = r.pause;
  else delete s.pause;
  if (r.reason) {
    s.reason = r.reason.reason;
    s.message = r.reason.message;
    if (r.pause) {
      p.cond('Paused', 'True', r.pause.reason, r.pause.message);
      p.fx.push({ type: 'Paused', reason: r.pause.reason });
    } else p.cond('Paused', 'False', 'Resumed', r.reason.message);
  } else if (!s.pause && isTrue(s.conditions, 'Paused'))
    p.cond('Paused', 'False', 'NotPaused', `run ${s.run} is not paused`); // its run ended while paused
  for (const e of r.events) p.event(e.type, e.reason, e.message);
  const run = s.run ?? 0;
  const pane = p.observed.paneInfo;
  // A Hard budget interrupts the turn: keys, not text (the pause holds the run, or the Stop follows at idle).
  if (r.interrupt && pane && !pane.dead)
    p.fx.push({ type: 'SendKeys', paneId: pane.paneId, keys: i.resolved.agent?.interruptKeys ?? ['C-c'] });
  if (r.sendContinue) p.fx.push({ type: 'SendContinue', run, text: r.sendContinue });
  if (r.forgetResume) p.fx.push({ type: 'ResumeRecorded', run });
  if (r.sendContinue) p.wsLog('INFO', `pause over: sending the continue message`);
  return r.dueMs;
}

/** The agent's state from its hooks, transcript and screen; a context step's Event; an opted-in answer. */
function observeAgentInto(p: Step, prev: AgentStatus | undefined): number | undefined {
  const { s, i } = p;
  const facts = p.observed.agent;
  if (!facts) return undefined;
  const delivered = s.conditions?.find((c) => c.type === 'PromptDelivered');
  const r = foldAgent({
    status: s,
    prev,
    facts,
    agent: i.resolved.agent,
    policy: i.resolved.policy,
    generation: p.gen,
    now: i.now,
    // A result that arrived in this pass counts: its condition is set after this fold.
    promptPending: !!delivered && delivered.status !== 'True' && !p.observed.delivery?.delivered,
  });
  const files = [
    `${s.workspace}/hooks.jsonl`,
    `${s.workspace}/status.json`,
    `${s.workspace}/statusline.json`,
    `${s.workspace}/handoff.md`,
    ...(r.agent.transcript ? [r.agent.transcript] : []),
  ];
  p.fx.push({ type: 'Watch', files });
  // Written with the pass's one status write, in its transaction (reconciler.ts): a controller killed
  // before it finds the condition still False and tells it then, once.
  for (const e of r.raised) p.event(e.type, e.reason, e.message);
  if (r.contextStep) {
    const c = r.contextStep;
    for (const k of c.steps)
      p.event(
        k >= 80 ? 'Warning' : 'Normal',
        SessionReason.ContextWindow,
        contextStepMessage(k, c.percent, c.used, c.window),
      );
  }
  const pane = p.observed.paneInfo;
  if (r.autoAnswer && pane && !pane.dead && i.resolved.agent) {
    const a = r.autoAnswer;
    r.agent.autoAnswered = {
      dialog: a.dialog,
      at: a.dialog === 'permission' ? (r.agent.permission?.since ?? iso(i.now)) : iso(i.now),
    };
    p.fx.push({ type: 'AutoAnswer', paneId: pane.paneId, agent: i.resolved.agent, dialog: a.dialog, keys: a.keys });
  }
  s.agent = r.agent;
  return r.recheckInMs;
}

/** The agent's progress report, when its file changed (also in the pass that sees the run end). */
function reportInto(p: Step): void {
  const r = p.observed.report;
  if (!r || r.run !== p.s.run) return;
  const { report, event } = applyReport(p.s.report, r.run, r, MAX_REPORT_BYTES, iso(p.i.now));
  p.s.report = report;
  if (event) p.event(event.type, event.reason, event.message);
  p.observed = { ...p.observed, report: undefined }; // once per reading, not once per step
}

function timeBoxWarning(p: Step): void {
  const { s, i } = p;
  const e = i.resolved.effective;
  if (p.phase !== 'Running' || e.timeoutAction !== 'Warn' || !s.deadlineTime) return;
  if (i.now < Date.parse(s.deadlineTime)) return;
  const box = formatDuration(e.maxDurationMs ?? 0);
  if (p.cond('TimeBoxExceeded', 'True', 'MaxDurationReached', `running longer than ${box} (timeoutAction Warn)`))
    p.event(
      'Warning',
      SessionReason.TimeBoxExceeded,
      `Run ${s.run} passed its time box; timeoutAction is Warn, so it keeps running`,
    );
}

/** A Pending session's Ready condition says why it waits (admission, desiredState Stopped...). */
function summarise(p: Step): void {
  const { s, i } = p;
  const escalated = s.conditions?.find((c) => c.type === 'Escalated' && c.status === 'True');
  if (s.phase === 'Backoff' && escalated && restartsHeld(s.conditions)) {
    s.reason = 'RestartHeld';
    s.message = `restart held for a person: ${escalated.message}`;
    delete s.nextRestartTime;
  }
  if (s.phase === 'Pending' && !i.resolved.problem) p.cond('Ready', 'False', s.reason ?? 'Pending', s.message ?? '');
}

// ---- deletion ---------------------------------------------------------------------------------

export interface FinalizeInput {
  key: string;
  obj: AgentSession;
  /** Every tmux session of this object (any run). */
  panes: PaneInfo[];
  stopKeys: string[];
  graceMs: number;
  /** Where the Project's repository is, when the session has a worktree to remove. */
  projectPath?: string;
  now: number;
}

export interface FinalizeOutput {
  /** A status to write first (the agent was asked to stop). */
  status?: AgentSessionStatus;
  effects: Effect[];
  requeueAfterMs?: number;
}

/** Deleting: ask the agent to stop, give it its grace period, then kill, clean up and let go. */
export function planFinalize(i: FinalizeInput): FinalizeOutput {
  const status: AgentSessionStatus = structuredClone(i.obj.status ?? {});
  const live = i.panes.filter((x) => !x.dead);
  const m = i.obj.metadata;
  if (live.length) {
    if (!status.stopRequestTime || status.phase !== 'Stopping') {
      status.phase = 'Stopping';
      status.stopRequestTime = iso(i.now);
      status.reason = 'Deleting';
      status.message = 'object deleted; stopping the agent';
      const effects: Effect[] = live.map((pane) => ({ type: 'SendKeys', paneId: pane.paneId, keys: i.stopKeys }));
      return { status, effects, requeueAfterMs: Math.min(i.graceMs, 500) };
    }
    const due = Date.parse(status.stopRequestTime) + i.graceMs;
    if (i.now < due) return { effects: [], requeueAfterMs: Math.min(500, due - i.now) };
  }
  const last = live[0] ?? i.panes[0];
  let outcome = 'no tmux session was running';
  if (last?.dead)
    outcome =
      last.exitStatus !== undefined ? `exit code ${last.exitStatus}` : 'its process ended (no exit status recorded)';
  else if (live.length) outcome = 'killed after the grace period';
  const effects: Effect[] = i.panes.map((pane) => ({ type: 'Kill', tmuxSession: pane.session }));
  if (i.obj.spec?.worktree?.enabled && status.workdir && i.projectPath)
    effects.push({ type: 'RemoveWorktree', projectPath: i.projectPath, worktree: status.workdir });
  const audit = { kind: 'AgentSession', namespace: m.namespace, name: m.name, uid: m.uid, run: status.run };
  effects.push(
    { type: 'Audit', entry: { ...audit, from: status.phase, to: 'Deleted', reason: 'Deleted', message: outcome } },
    { type: 'Log', level: 'INFO', message: `agentsession ${i.key}: deleted (${outcome})` },
    { type: 'RecordEvent', eventType: 'Normal', reason: SessionReason.Deleted, message: `Session deleted: ${outcome}` },
    { type: 'RemoveFinalizer' },
  );
  return { effects };
}
