/**
 * The pipeline reconciler's pure plan: the Pipeline, its phases' sessions (as the cache has them)
 * and the clock in; the Pipeline's status and the effects to perform out. No I/O: the reconciler
 * performs the effects (create a session, stop one, stamp a recovery restart, deliver a resume)
 * and records the Events.
 *
 * A phase's state is read off its session every time (level-triggered), so a controller killed at
 * any point finds the same answer: the session name is deterministic, the create AlreadyExists-safe,
 * and a recovery is recorded on the session itself (RECOVERED_RUN_ANNOTATION, in the same write as
 * the restart annotation). Only what a session cannot say is carried in status: a completed phase
 * stays completed (its session may be deleted later) and when a resume was delivered to a phase.
 */
import { RESTARTED_AT_ANNOTATION } from '../../api/autopilot.js';
import { isTrue, setCondition } from '../../api/conditions.js';
import type { EventType } from '../../api/event.js';
import { PipelineReason } from '../../api/event-reasons.js';
import {
  dependencies,
  MAX_RECOVERIES,
  type PhaseState,
  type PhaseStatus,
  type Pipeline,
  type PipelinePhase,
  type PipelineStatus,
  pipelineSpecErrors,
  phaseSessionName,
  RECOVERED_RUN_ANNOTATION,
  RESUME_MESSAGE_ANNOTATION,
  RESUME_REQUESTED_ANNOTATION,
  DEFAULT_RESUME_MESSAGE,
  HANDOFF_LIMITS,
  type ResumeOutcome,
  type ResumeStatus,
} from '../../api/pipeline.js';
import { MESSAGE_FINAL_STATES } from '../../api/message.js';
import type { AgentSession } from '../../api/session.js';
import { formatPath } from '../../api/validate.js';

export interface PipelineObserved {
  pipeline: Pipeline;
  /** The sessions named `<pipeline>-<phase>` in the pipeline's namespace, by phase name. */
  sessions: Map<string, AgentSession>;
  now: number;
  /**
   * Phases whose session, as rendered now, its schema or admission refuses (why, by phase name): the
   * validating client would not write it, so the phase fails instead of starting.
   */
  refused?: ReadonlyMap<string, string>;
}

/** A phase whose rendered session was refused: it stays failed (its session does not exist to say so). */
export const SESSION_INVALID = 'SessionInvalid';

/** One blocked phase a resume goes to: typed into its live pane, or a new run when its run ended. */
export type ResumeTarget = { phase: string; session: string; live: boolean };

export type PipelineEffect =
  | { type: 'Create'; phase: string; dependsOn: string[] }
  | { type: 'Stop'; phase: string; session: string }
  | { type: 'Recover'; phase: string; session: string; run: number; note: string }
  | { type: 'Resume'; requested: string; message: string; targets: ResumeTarget[] }
  | { type: 'Event'; eventType: EventType; reason: string; message: string };

export interface PipelinePlan {
  status: PipelineStatus;
  effects: PipelineEffect[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A phase's state read off its session (or its absence). */
type PhaseView = Omit<PhaseStatus, 'name'> & { stop?: boolean; recoverRun?: number; endedAt?: string };

const ACTIVE = new Set(['Pending', 'Starting', 'Running', 'Stopping']);
const ENDED = new Set(['Succeeded', 'Failed', 'Killed', 'TimedOut']);

/** The earlier of two ISO times (either may be missing or unreadable). */
function earlier(a: string | undefined, b: string | undefined): string | undefined {
  const ta = Date.parse(a ?? '');
  const tb = Date.parse(b ?? '');
  if (Number.isNaN(ta)) return Number.isNaN(tb) ? undefined : b;
  return Number.isNaN(tb) || ta <= tb ? a : b;
}

/** A phase's finishedAt: when its run ended, if known (never later than now), else now. */
function finishedAt(endedAt: string | undefined, now: number): string {
  const t = Date.parse(endedAt ?? '');
  return iso(Number.isNaN(t) ? now : Math.min(t, now));
}

/** The restart annotation asks for a run the session has not started yet. */
const restartPending = (s: AgentSession) => {
  const asked = s.metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  return !!asked && asked !== s.status?.lifecycle?.restartedAt && (s.spec?.desiredState ?? 'Running') === 'Running';
};

function recoveredRun(s: AgentSession): number | undefined {
  const v = Number(s.metadata.annotations?.[RECOVERED_RUN_ANNOTATION]);
  return Number.isInteger(v) && v > 0 ? v : undefined;
}

/** A blocked report not yet answered by a resume delivered after it. */
function unansweredBlock(updatedAt: string | undefined, prev: PhaseStatus | undefined): boolean {
  if (!prev?.resumedAt) return true;
  return !!updatedAt && Date.parse(updatedAt) > Date.parse(prev.resumedAt);
}

export function viewPhase(s: AgentSession, prev: PhaseStatus | undefined, pipelineUid: string | undefined): PhaseView {
  const name = s.metadata.name;
  const owner = s.metadata.ownerReferences?.find((r) => r.kind === 'Pipeline' && r.controller);
  if (s.metadata.deletionTimestamp)
    return { state: 'Pending', reason: 'SessionTerminating', message: `session ${name} is being deleted` };
  if (!owner || owner.uid !== pipelineUid)
    return {
      state: 'Failed',
      reason: 'SessionNameTaken',
      message: `agentsession ${name} exists and is not this pipeline's; delete or rename it`,
    };
  const st = s.status ?? {};
  const run = st.run ?? 0;
  const recovered = recoveredRun(s);
  const base: PhaseView = {
    state: 'Running',
    session: name,
    ...(run ? { run } : {}),
    ...(recovered ? { attempts: 1 } : {}),
    ...(prev?.resumedAt ? { resumedAt: prev.resumedAt } : {}),
  };
  const report = st.report && st.report.run === run ? st.report : undefined;
  // When the run ended, for a phase that ends with it (a run that ended while no controller ran
  // ended then, not when it was noticed); a report of complete counts from when it was read.
  const runEnd = ENDED.has(st.phase ?? '') ? st.completionTime : undefined;
  const endedAt = report?.status === 'complete' ? earlier(report.updatedAt, runEnd) : runEnd;
  if (endedAt) base.endedAt = endedAt;
  if (report?.problem) base.reportProblem = report.problem;
  const tasks = report?.progress ? ` (${report.progress} tasks)` : '';
  const phase = st.phase ?? 'Pending';
  if (restartPending(s)) {
    const recovering = recovered !== undefined && recovered === run;
    return {
      ...base,
      reason: recovering ? 'Recovering' : 'Restarting',
      message: `a new run after run ${run} was asked for`,
    };
  }
  if (report?.status === 'complete')
    return {
      ...base,
      state: 'Succeeded',
      reason: 'ReportedComplete',
      message: `the agent reported complete${tasks}`,
      stop: ACTIVE.has(phase) && phase !== 'Stopping' && (s.spec?.desiredState ?? 'Running') === 'Running',
    };
  if (report?.status === 'blocked' && unansweredBlock(report.updatedAt, prev))
    return { ...base, state: 'Blocked', reason: 'AgentBlocked', message: report.blocker || 'no reason given' };
  const ended = `run ${run} ${phase}`;
  const detail = st.message ? `: ${st.message}` : '';
  switch (phase) {
    case 'Succeeded':
      if (!report?.status)
        return { ...base, state: 'Succeeded', reason: 'RunSucceeded', message: `${ended} (no report)` };
      return {
        ...base,
        state: 'Failed',
        reason: 'IncompleteReport',
        message: `${ended} while its report says ${report.status}${tasks}`,
      };
    case 'Backoff':
      return { ...base, reason: 'Restarting', message: `the session restarts itself${detail}` };
    case 'Failed':
    case 'Killed':
    case 'TimedOut': {
      const selfRestarts =
        s.spec?.restartPolicy === 'OnFailure' &&
        !isTrue(st.conditions, 'Escalated') &&
        st.reason !== 'CommandNotFound' &&
        st.reason !== 'Stopped';
      if (selfRestarts) return { ...base, reason: 'Restarting', message: `the session restarts itself${detail}` };
      if (phase === 'Killed' && st.reason === 'TmuxSessionLost') {
        if (recovered === undefined && MAX_RECOVERIES > 0)
          return { ...base, reason: 'Recovering', message: `${ended}${detail}`, recoverRun: run };
        if (recovered === run)
          return { ...base, reason: 'Recovering', message: `recovery of run ${run} asked for${detail}` };
        return {
          ...base,
          state: 'Failed',
          reason: 'SessionDied',
          message: `the tmux session died again in run ${run}, after the recovery of run ${recovered}`,
        };
      }
      return { ...base, state: 'Failed', reason: st.reason ?? phase, message: `${ended}${detail}` };
    }
    default: {
      const current = report?.currentTask ? `; current: ${report.currentTask}` : '';
      return {
        ...base,
        reason: phase === 'Pending' ? 'SessionPending' : 'SessionRunning',
        message: `session ${phase}${tasks}${current}`,
      };
    }
  }
}

/** A phase as its session shows it, or as it was when it has none. */
function phaseView(s: AgentSession | undefined, prev: PhaseStatus | undefined, p: Pipeline): PhaseView {
  if (s) return viewPhase(s, prev, p.metadata.uid);
  // Completed stays completed: its session may have been deleted since (and its run must not repeat);
  // a phase whose session was refused stays failed (rendered again, it would be refused again).
  if (prev?.state === 'Succeeded' || (prev?.state === 'Failed' && prev.reason === SESSION_INVALID)) return { ...prev };
  return { state: 'Pending', reason: 'WaitingForDependencies', message: '' };
}

/** The recovery note for the new run's prompt (the session reconciler puts it under "Why this run was restarted"). */
export function recoveryNote(pipeline: string, phase: string, run: number): string {
  return (
    `Run ${run} of phase "${phase}" of pipeline ${pipeline} ended without an exit of its own: its tmux session ` +
    `disappeared. This is recovery attempt 1 of ${MAX_RECOVERIES}. Pick up from the handoff (handoff.md) and the ` +
    'progress report (status.json) of the previous run, and go on from there.'
  );
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function planPipeline(o: PipelineObserved): PipelinePlan {
  const p = o.pipeline;
  const name = p.metadata.name;
  const spec = p.spec ?? { phases: [] };
  const prevStatus = p.status ?? {};
  const status: PipelineStatus = structuredClone(prevStatus);
  const effects: PipelineEffect[] = [];
  const event = (eventType: EventType, reason: string, message: string) =>
    effects.push({ type: 'Event', eventType, reason, message });
  const now = iso(o.now);
  status.conditions ??= [];
  const gen = p.metadata.generation;

  // A spec that admission would refuse (applied before a check existed, or written around apply) starts nothing.
  const invalid = pipelineSpecErrors(name, spec);
  if (invalid.length) {
    const message = invalid.map((e) => `${formatPath(e.path)}: ${e.message}`).join('; ');
    status.phase = 'Failed';
    status.reason = 'InvalidSpec';
    status.message = message;
    setCondition(
      status.conditions,
      { type: 'Failed', status: 'True', reason: 'InvalidSpec', message, observedGeneration: gen },
      now,
    );
    status.observedGeneration = gen;
    if (prevStatus.reason !== 'InvalidSpec' || prevStatus.message !== message)
      event('Warning', PipelineReason.InvalidSpec, message);
    return { status, effects };
  }

  const prevByName = new Map((prevStatus.phases ?? []).map((x) => [x.name, x]));
  const deps = dependencies(spec);
  const views = new Map<string, PhaseStatus & { stop?: boolean; recoverRun?: number; endedAt?: string }>();
  for (const ph of spec.phases)
    views.set(ph.name, { name: ph.name, ...phaseView(o.sessions.get(ph.name), prevByName.get(ph.name), p) });

  const anyFailed = () => [...views.values()].some((v) => v.state === 'Failed');
  for (const ph of spec.phases) {
    const v = views.get(ph.name)!;
    if (v.state !== 'Pending' || v.reason === 'SessionTerminating') continue;
    const waiting = (deps.get(ph.name) ?? []).filter((d) => views.get(d)?.state !== 'Succeeded');
    if (waiting.length) {
      v.message = `waiting for ${waiting.join(', ')}`;
      continue;
    }
    if (spec.suspend) {
      Object.assign(v, { reason: 'Suspended', message: 'the pipeline is suspended (spec.suspend)' });
      continue;
    }
    if (anyFailed()) {
      Object.assign(v, { reason: 'PipelineFailed', message: 'not started: a phase failed' });
      continue;
    }
    const refused = o.refused?.get(ph.name);
    if (refused !== undefined) {
      Object.assign(v, { state: 'Failed', reason: SESSION_INVALID, message: refused });
      continue;
    }
    effects.push({ type: 'Create', phase: ph.name, dependsOn: deps.get(ph.name) ?? [] });
    Object.assign(v, {
      state: 'Running',
      session: phaseSessionName(name, ph.name),
      reason: 'Created',
      message: `session ${phaseSessionName(name, ph.name)} created`,
    });
  }

  // Effects and Events of each phase's change; the starts told after the ends that led to them.
  const starts: PipelineEffect[] = [];
  for (const ph of spec.phases) {
    const v = views.get(ph.name)!;
    const prev = prevByName.get(ph.name);
    const was: PhaseState = prev?.state ?? 'Pending';
    if (v.state === 'Running' && !prev?.startedAt && v.session) v.startedAt = now;
    else if (prev?.startedAt) v.startedAt = prev.startedAt;
    if ((v.state === 'Succeeded' || v.state === 'Failed') && v.state === was && prev?.finishedAt)
      v.finishedAt = prev.finishedAt;
    else if (v.state === 'Succeeded' || v.state === 'Failed') v.finishedAt = finishedAt(v.endedAt, o.now);
    else delete v.finishedAt;
    if (v.stop && v.session) effects.push({ type: 'Stop', phase: ph.name, session: v.session });
    if (v.recoverRun !== undefined && v.session) {
      effects.push({
        type: 'Recover',
        phase: ph.name,
        session: v.session,
        run: v.recoverRun,
        note: recoveryNote(name, ph.name, v.recoverRun),
      });
      event(
        'Warning',
        PipelineReason.PhaseRecovering,
        `phase ${ph.name}: the tmux session of run ${v.recoverRun} disappeared; ` +
          `recovery ${1} of ${MAX_RECOVERIES}: a new run with the handoff`,
      );
      v.attempts = 1;
    }
    if (v.reportProblem && v.reportProblem !== prev?.reportProblem)
      event('Warning', PipelineReason.InvalidReport, `phase ${ph.name}: ${v.reportProblem}`);
    if (v.state !== was) {
      if (v.state === 'Running' && was === 'Pending')
        starts.push({
          type: 'Event',
          eventType: 'Normal',
          reason: PipelineReason.PhaseStarted,
          message: `phase ${ph.name} started: session ${v.session}`,
        });
      if (v.state === 'Running' && was === 'Blocked')
        event('Normal', PipelineReason.PhaseResumed, `phase ${ph.name} goes on: ${v.message}`);
      if (v.state === 'Succeeded')
        event('Normal', PipelineReason.PhaseSucceeded, `phase ${ph.name} completed: ${v.message}`);
      if (v.state === 'Failed')
        event('Warning', PipelineReason.PhaseFailed, `phase ${ph.name} failed: ${v.reason}: ${v.message}`);
      if (v.state === 'Blocked')
        event(
          'Warning',
          PipelineReason.PhaseBlocked,
          `phase ${ph.name} is blocked: ${v.message}; answer with orchctl pipeline resume ${name} --message …`,
        );
    }
  }

  effects.push(...starts);

  const list: PhaseStatus[] = spec.phases.map((ph) => {
    const { stop: _s, recoverRun: _r, endedAt: _e, ...rest } = views.get(ph.name)!;
    return Object.fromEntries(Object.entries(rest).filter(([, x]) => x !== undefined && x !== '')) as PhaseStatus;
  });
  status.phases = list;

  resume(o, status, list, effects, now);
  overall(p, status, list, now, event);
  return { status, effects };
}

/**
 * A new `orchctl pipeline resume` (its annotation value not yet answered) goes to the blocked phases;
 * one being delivered is first brought up to date with what the phases' nodes answered.
 */
function resume(o: PipelineObserved, status: PipelineStatus, list: PhaseStatus[], fx: PipelineEffect[], now: string) {
  const ann = o.pipeline.metadata.annotations ?? {};
  const requested = ann[RESUME_REQUESTED_ANNOTATION];
  const last = status.resume;
  if (last?.state === 'Delivering' && last.waiting) fx.push(...foldResume(o.sessions, status, list, now));
  // Still Delivering with nothing posted when a pass starts: the controller stopped mid-delivery. Never sent twice.
  else if (last?.state === 'Delivering') {
    status.resume = { ...last, state: 'Unconfirmed', at: now };
    fx.push({
      type: 'Event',
      eventType: 'Warning',
      reason: PipelineReason.ResumeUnconfirmed,
      message:
        'the controller stopped while delivering a resume; it is not sent again — ' +
        'if a phase is still blocked, run orchctl pipeline resume again',
    });
  }
  // A new request waits until the nodes answered the one before (one message per session at a time).
  if (!requested || requested === last?.requested || status.resume?.state === 'Delivering') return;
  const message = clip((ann[RESUME_MESSAGE_ANNOTATION] ?? '').trim() || DEFAULT_RESUME_MESSAGE, HANDOFF_LIMITS.message);
  const blocked = list.filter((x) => x.state === 'Blocked' && x.session);
  if (!blocked.length) {
    status.resume = { requested, state: 'Ignored', at: now, message: 'no phase was blocked' } satisfies ResumeStatus;
    fx.push({
      type: 'Event',
      eventType: 'Normal',
      reason: PipelineReason.ResumeIgnored,
      message: 'resume asked, but no phase is blocked',
    });
    return;
  }
  const targets = blocked.map((x) => {
    const s = o.sessions.get(x.name);
    const live = s?.status?.phase === 'Running' || s?.status?.phase === 'Starting';
    return { phase: x.name, session: x.session!, live };
  });
  status.resume = { requested, state: 'Delivering', at: now, phases: targets.map((t) => t.phase) };
  fx.push({ type: 'Resume', requested, message, targets });
}

/** What the nodes answered to a resume's messages (status.messageDelivery of each phase's session). */
export function foldResume(
  sessions: Map<string, AgentSession>,
  status: PipelineStatus,
  list: PhaseStatus[],
  now: string,
): PipelineEffect[] {
  const r = status.resume!;
  const outcomes: ResumeOutcome[] = [];
  const waiting: NonNullable<ResumeStatus['waiting']> = [];
  const notes: string[] = [];
  for (const w of r.waiting ?? []) {
    const s = sessions.get(w.phase);
    const d = s?.status?.messageDelivery?.id === w.id ? s.status.messageDelivery : undefined;
    if (!s || s.metadata.name !== w.session)
      outcomes.push({ phase: w.phase, delivered: false, how: `agentsession ${w.session} is gone` });
    else if (d && MESSAGE_FINAL_STATES.has(d.state))
      outcomes.push({ phase: w.phase, delivered: d.state === 'Delivered', how: `${d.reason}: ${d.message}`, at: d.at });
    else {
      waiting.push(w);
      notes.push(`${w.phase}: ${d?.state === 'Waiting' ? `waiting: ${d.message}` : 'posted to its node'}`);
    }
  }
  if (!outcomes.length) {
    const message = notes.join('; ');
    if (message !== r.message) status.resume = { ...r, message };
    return [];
  }
  return settleResume(status, list, outcomes, waiting, now);
}

/**
 * Records outcomes of a resume: each phase it reached is answered (resumedAt) and runs on; the
 * resume is Delivered or Failed once nothing waits. Returns the Events (Resumed, ResumeFailed).
 */
export function settleResume(
  status: PipelineStatus,
  list: PhaseStatus[],
  outcomes: ResumeOutcome[],
  waiting: NonNullable<ResumeStatus['waiting']>,
  now: string,
): PipelineEffect[] {
  for (const o of outcomes) {
    const x = list.find((p) => p.name === o.phase);
    if (o.delivered && x)
      Object.assign(x, { state: 'Running', resumedAt: o.at ?? now, reason: 'Resumed', message: 'resume delivered' });
  }
  const all = [...(status.resume?.outcomes ?? []), ...outcomes];
  const r = { ...status.resume!, at: now };
  if (waiting.length) status.resume = { ...r, waiting, outcomes: all };
  else {
    const { waiting: _w, outcomes: _o, ...rest } = r;
    status.resume = {
      ...rest,
      state: all.some((o) => !o.delivered) ? 'Failed' : 'Delivered',
      message: all.map((o) => `${o.phase}: ${o.how}`).join('; '),
    };
  }
  status.phases = list;
  return outcomes.map(
    (o): PipelineEffect =>
      o.delivered
        ? { type: 'Event', eventType: 'Normal', reason: PipelineReason.Resumed, message: `phase ${o.phase}: ${o.how}` }
        : {
            type: 'Event',
            eventType: 'Warning',
            reason: PipelineReason.ResumeFailed,
            message: `phase ${o.phase}: ${o.how}`,
          },
  );
}

function overall(
  p: Pipeline,
  status: PipelineStatus,
  list: PhaseStatus[],
  now: string,
  event: (t: EventType, reason: string, message: string) => void,
): void {
  const prev = p.status ?? {};
  const gen = p.metadata.generation;
  const total = list.length;
  const completed = list.filter((x) => x.state === 'Succeeded').length;
  const failed = list.find((x) => x.state === 'Failed');
  const blocked = list.find((x) => x.state === 'Blocked');
  let phase: PipelinePhase;
  let reason: string;
  let message: string;
  if (failed) {
    phase = 'Failed';
    reason = 'PhaseFailed';
    message = `phase ${failed.name}: ${failed.reason}: ${failed.message ?? ''}`;
  } else if (blocked) {
    phase = 'Blocked';
    reason = 'PhaseBlocked';
    message = `phase ${blocked.name}: ${blocked.message ?? ''}`;
  } else if (completed === total) {
    phase = 'Succeeded';
    reason = 'AllPhasesCompleted';
    message = `all ${total} phases completed`;
  } else if (list.some((x) => x.state === 'Running')) {
    phase = 'Running';
    reason = 'PhasesRunning';
    message = '';
  } else {
    phase = 'Pending';
    reason = p.spec?.suspend ? 'Suspended' : 'Pending';
    message = p.spec?.suspend ? 'the pipeline is suspended (spec.suspend)' : '';
  }
  Object.assign(status, {
    phase,
    reason,
    message,
    total,
    completed,
    current: `${Math.min(total, completed + (phase === 'Succeeded' ? 0 : 1))}/${total}`,
    active: list.filter((x) => x.state === 'Running' || x.state === 'Blocked').map((x) => x.name),
    observedGeneration: gen,
  });
  if (!status.message) delete status.message;
  if (!status.active?.length) delete status.active;
  if (!status.startTime && list.some((x) => x.startedAt)) status.startTime = now;
  const done = phase === 'Succeeded' || phase === 'Failed';
  // When it ended: the failed phase's end, or the last phase's (phases may end while no controller ran).
  if (done && (prev.phase !== phase || !status.completionTime)) {
    const ends = phase === 'Failed' ? [failed?.finishedAt] : list.map((x) => x.finishedAt);
    const last = Math.max(...ends.map((t) => Date.parse(t ?? '')).filter((t) => !Number.isNaN(t)));
    status.completionTime = Number.isFinite(last) && last <= Date.parse(now) ? iso(last) : now;
  }
  if (!done) delete status.completionTime;
  const cond = (type: string, on: boolean, why: string, msg: string) =>
    setCondition(
      status.conditions!,
      { type, status: on ? 'True' : 'False', reason: why, message: on ? msg : '', observedGeneration: gen },
      now,
    );
  cond('Complete', phase === 'Succeeded', phase === 'Succeeded' ? reason : 'NotComplete', message);
  cond('Blocked', phase === 'Blocked', phase === 'Blocked' ? reason : 'NotBlocked', message);
  cond('Failed', phase === 'Failed', phase === 'Failed' ? reason : 'NotFailed', message);
  if (prev.phase !== phase) {
    if (phase === 'Succeeded') event('Normal', PipelineReason.Succeeded, message);
    if (phase === 'Failed') event('Warning', PipelineReason.Failed, message);
  }
}
