/**
 * The assessment reconciler's decisions, pure: what a batch of events makes of the session's
 * status (detector, breaker, assessment, the BreakerOpen condition, the Events of the breaker's
 * transitions, when to look again) and what becomes of a pending intervention. Observed status,
 * events and times in; status and effects as data out — no store, no files, no send, no clock.
 */
import { setCondition } from '../../api/conditions.js';
import { AssessmentReason } from '../../api/event-reasons.js';
import type { AgentSession, AgentSessionStatus } from '../../api/kinds.js';
import { currentPause } from '../../api/pause.js';
import type { Condition } from '../../api/types.js';
import type { EventNote } from '../../client/events.js';
import type { AgentEvent, LogPosition } from '../../store/eventlog.js';
import { type AssessmentState, assessStep, type BreakerChange, type InterventionDue, STOP_GRACE_MS } from './assess.js';
import type { BreakerStateName } from './breaker.js';
import type { CheckpointDue } from './checkpoints.js';
import { type AssessmentConfig, thresholdsOf } from './config.js';
import type { Signal } from './detector.js';
import {
  type AssessmentStatus,
  type BreakerStatus,
  breakerToStatus,
  gitBaseFingerprint,
  gitFingerprint,
  HISTORY,
  type InterventionRecord,
  type PendingIntervention,
} from './status.js';

const iso = (t: number) => new Date(t).toISOString();

/** A pending intervention of a frozen session is looked at again after this (the thaw also wakes it). */
export const FROZEN_WAIT_MS = 30_000;

/** One batch as read from the session's event log. */
export interface ConsumeObserved {
  status: AgentSessionStatus;
  generation?: number;
  /** The position read from, and the state there (a fresh state when the log was replaced). */
  from: LogPosition;
  prev: AssessmentState;
  events: AgentEvent[];
  next: LogPosition;
  /** Events taken per pass: a full batch means more are waiting. */
  batch: number;
  now: number;
}

/** The fields the assessment owns in the session's status, written at once. */
export interface AssessmentWrite {
  detector: AgentSessionStatus['detector'];
  breaker: BreakerStatus;
  assessment: AssessmentStatus;
  conditions: Condition[];
}

export interface ConsumePlan {
  /**
   * Checkpoints to summarise and append to the history before the write (idempotent by seq). The
   * last summary's title goes in status.assessment.checkpoints.lastSummary: the one value of the
   * write the plan cannot know, as a model may write it.
   */
  checkpoints: CheckpointDue[];
  status: AssessmentWrite;
  /** The breaker's transitions, told in the transaction that records them. */
  events: EventNote[];
  signals: Signal[];
  transitions: BreakerChange[];
  /** A trip decided in this batch, pending in `status`: delivered after the write. */
  deliver?: PendingIntervention;
  requeueAfterMs?: number;
}

/** The batch assessed; undefined when there is nothing to write (nothing logged yet). */
export function planConsume(o: ConsumeObserved, cfg: AssessmentConfig): ConsumePlan | undefined {
  const a = o.status.assessment;
  if (!o.events.length && !a) return undefined;
  const { now, status } = o;
  const git = gitFingerprint(status.git);
  const gitBase = gitBaseFingerprint(status.headBefore);
  const r = assessStep(o.prev, { events: o.events, from: o.from, cfg, git, gitBase, now });
  const state = r.state;
  const breaker = breakerToStatus(state.breaker.state, state.breaker.context, status.breaker);
  breaker.thresholds = thresholdsOf(cfg.breaker);
  const pending = settleTrips(r.interventions, breaker, a?.pendingIntervention, cfg, o.from, now);
  const assessment: AssessmentStatus = {
    run: state.detector.run,
    position: o.next,
    ...(cfg.policy ? { policy: cfg.policy } : {}),
    turn: state.turn,
    ...(state.gitMark !== undefined ? { gitMark: state.gitMark } : {}),
    checkpoints: state.checkpoints,
    ...(pending ? { pendingIntervention: pending } : {}),
    ...(state.previousRun ? { previousRun: state.previousRun } : {}),
    lastUpdateTime: o.events.length || !a?.lastUpdateTime ? iso(now) : a.lastUpdateTime,
  };
  const conditions = breakerCondition(
    structuredClone(status.conditions ?? []),
    breaker,
    state.breaker.state,
    o.generation,
    iso(now),
  );
  return {
    checkpoints: r.checkpoints,
    status: { detector: state.detector, breaker, assessment, conditions },
    events: r.transitions.flatMap((t) => transitionEvent(t, state)),
    signals: r.signals.map((s) => s.signal),
    transitions: r.transitions,
    ...(pending && !a?.pendingIntervention ? { deliver: pending } : {}),
    requeueAfterMs: nextLook(o, state, cfg),
  };
}

/**
 * The interventions the batch decided: several trips in one batch happen only when catching up on a
 * backlog, so the last one stands (pending, unless older than the cooldown); the others go to the
 * history as not sent. Returns the pending intervention after the batch.
 */
function settleTrips(
  trips: InterventionDue[],
  breaker: BreakerStatus,
  pending: PendingIntervention | undefined,
  cfg: AssessmentConfig,
  from: LogPosition,
  now: number,
): PendingIntervention | undefined {
  const history = [...(breaker.history ?? [])];
  trips.forEach((iv, i) => {
    const last = i === trips.length - 1;
    const stale = now - Date.parse(iv.at) > Math.max(cfg.breaker.cooldownMs, 60_000);
    if (last && !stale) pending = pendingFor(iv, cfg, from);
    else {
      const why = last ? 'the trip is older than the cooldown; not sent' : 'a later trip in the same batch replaced it';
      history.push(record(iv, false, last ? 'Stale' : 'Superseded', why));
      breaker.interventions++;
    }
  });
  breaker.history = history.slice(-HISTORY);
  return pending;
}

function pendingFor(iv: InterventionDue, cfg: AssessmentConfig, from: LogPosition): PendingIntervention {
  return {
    id: iv.id,
    type: iv.type,
    why: iv.why,
    text: cfg.breaker.texts[iv.type],
    seq: iv.seq,
    decidedTime: iv.at,
    from,
  };
}

function transitionEvent(t: BreakerChange, state: AssessmentState): EventNote[] {
  if (t.to === 'Open')
    return [
      {
        type: 'Warning',
        reason: AssessmentReason.BreakerOpen,
        message: `Circuit breaker opened (${state.breaker.context.reason}): ${t.why ?? ''}`,
      },
    ];
  if (t.to === 'HalfOpen')
    return [
      {
        type: 'Normal',
        reason: AssessmentReason.BreakerHalfOpen,
        message: 'Cooldown over: the circuit breaker is half-open until a healthy turn',
      },
    ];
  if (t.to === 'Closed')
    return [
      {
        type: 'Normal',
        reason: AssessmentReason.BreakerClosed,
        message: 'A healthy turn after the cooldown: the circuit breaker closed',
      },
    ];
  return [];
}

/** At once after a full batch; else when a Stop's grace or the breaker's cooldown ends. */
function nextLook(o: ConsumeObserved, state: AssessmentState, cfg: AssessmentConfig): number | undefined {
  if (o.events.length >= o.batch) return 0;
  const waits: number[] = [];
  // A Stop waiting for its turn's transcript lines ends the turn alone after the grace.
  const stop = state.turn.stops?.length ? Date.parse(state.turn.stops[0].ts) : Number.NaN;
  if (!Number.isNaN(stop)) waits.push(stop + STOP_GRACE_MS - o.now + 50);
  if (state.breaker.state === 'Open' && state.breaker.context.openedAt !== undefined)
    waits.push(state.breaker.context.openedAt + cfg.breaker.cooldownMs - o.now + 50);
  return waits.length ? Math.max(1000, Math.min(...waits)) : undefined;
}

export function record(iv: InterventionDue, delivered: boolean, result: string, message: string): InterventionRecord {
  return { id: iv.id, type: iv.type, why: iv.why, seq: iv.seq, decidedTime: iv.at, delivered, result, message };
}

/** BreakerOpen: True while Open or HalfOpen (the session has not had its healthy turn yet). */
export function breakerCondition(
  list: Condition[],
  b: BreakerStatus,
  state: BreakerStateName,
  generation: number | undefined,
  now: string,
): Condition[] {
  if (state === 'Closed') {
    if (list.some((c) => c.type === 'BreakerOpen'))
      setCondition(
        list,
        {
          type: 'BreakerOpen',
          status: 'False',
          reason: 'Closed',
          message: 'the circuit breaker is closed',
          observedGeneration: generation,
        },
        now,
      );
  } else
    setCondition(
      list,
      {
        type: 'BreakerOpen',
        status: 'True',
        reason: b.reason ?? 'Open',
        message:
          state === 'Open'
            ? (b.message ?? '')
            : `half-open after the cooldown, waiting for a healthy turn (opened for: ${b.message ?? ''})`,
        observedGeneration: generation,
      },
      now,
    );
  return list;
}

// ---- a pending intervention ---------------------------------------------------------------------

/** How an intervention went, as the history records it. */
export interface DeliveryOutcome {
  delivered: boolean;
  result: string;
  message: string;
  retries?: number;
  at: number;
}

/** The send's answer as SendFn gives it. */
export interface SendAnswer {
  delivered: boolean;
  reason: string;
  message: string;
  retries?: number;
}

export interface DeliveryObserved {
  session: AgentSession;
  pending: PendingIntervention;
  /** What this process's own send answered, if it sent it (its outcome may not be in status yet). */
  sent?: SendAnswer & { at: number };
  /** Whether an earlier attempt's text is in the event log after the trip (looked for only after an attempt). */
  arrived: boolean;
  graceMs: number;
  now: number;
}

export type DeliveryStep =
  /** Come back later: frozen, or an earlier attempt may still show up in the log. */
  | { kind: 'wait'; ms: number }
  /** Mark the attempt in status, send, then record the outcome. */
  | { kind: 'send' }
  /** Record this outcome (nothing is sent). */
  | { kind: 'record'; outcome: DeliveryOutcome };

/** What to do with a pending intervention: send it once, or record why it was not (or already was) sent. */
export function planDelivery(o: DeliveryObserved, cfg: AssessmentConfig): DeliveryStep {
  const { pending: p, now } = o;
  const st = o.session.status;
  const phase = st?.phase;
  const paused = currentPause(st);
  const not = (result: string, message: string): DeliveryStep => ({
    kind: 'record',
    outcome: { delivered: false, result, message, at: now },
  });
  if (o.sent) return { kind: 'record', outcome: outcomeOf(o.sent, o.sent.at) };
  if (!cfg.breaker.deliver)
    return not('Observe', `policy autonomy is not "act": the intervention is recorded, not sent`);
  if (phase !== 'Running')
    return not('NotRunning', `the session is ${phase ?? 'Pending'}, not Running: nothing to send to`);
  // Frozen (orchctl freeze): kept for after the thaw, not sent to a stopped process.
  if (st?.frozen) return { kind: 'wait', ms: FROZEN_WAIT_MS };
  // A paused run is sent nothing but its continue message (reconcilers/session/pause.ts).
  if (paused) return not('Paused', `the session is paused (${paused.reason}): the intervention is recorded, not sent`);
  if (p.attemptTime && o.arrived)
    return {
      kind: 'record',
      outcome: {
        delivered: true,
        result: 'DeliveredBeforeRestart',
        message: 'an attempt before a controller restart reached the agent',
        at: now,
      },
    };
  if (p.attemptTime) {
    const left = Date.parse(p.attemptTime) + o.graceMs - now;
    if (left > 0) return { kind: 'wait', ms: left };
  }
  return { kind: 'send' };
}

/** The outcome of a send that was made. */
export function outcomeOf(r: SendAnswer, at: number): DeliveryOutcome {
  return {
    delivered: r.delivered,
    result: r.delivered ? 'Delivered' : r.reason,
    message: r.message,
    ...(r.retries !== undefined ? { retries: r.retries } : {}),
    at,
  };
}

/** status.assessment with the attempt marked: written before the send (a crash after it may or may not have sent). */
export function attemptMarked(status: AgentSessionStatus, p: PendingIntervention, now: number): AssessmentStatus {
  return { ...status.assessment!, pendingIntervention: { ...p, attemptTime: iso(now) } };
}

/** The intervention moved from pending to the breaker's history, and the Event telling how it went. */
export function deliveredStatus(
  status: AgentSessionStatus,
  p: PendingIntervention,
  outcome: DeliveryOutcome,
): { assessment: AssessmentStatus; breaker: BreakerStatus; event: EventNote } {
  const a = { ...status.assessment! };
  delete a.pendingIntervention;
  // A pending intervention is only decided in the write that also sets status.breaker.
  const b = { ...status.breaker! };
  const rec = record(
    { id: p.id, type: p.type, why: p.why, seq: p.seq, at: p.decidedTime, run: 0 },
    outcome.delivered,
    outcome.result,
    outcome.message,
  );
  if (outcome.delivered) rec.deliveredTime = iso(outcome.at);
  if (outcome.retries !== undefined) rec.retries = outcome.retries;
  b.history = [...(b.history ?? []), rec].slice(-HISTORY);
  b.interventions = (b.interventions ?? 0) + 1;
  b.lastInterventionTime = iso(outcome.at);
  const event: EventNote = {
    type: outcome.delivered ? 'Normal' : 'Warning',
    reason: outcome.delivered ? AssessmentReason.InterventionDelivered : AssessmentReason.InterventionNotDelivered,
    message:
      `${p.type} intervention ` +
      `${outcome.delivered ? 'sent into the session' : `not sent (${outcome.result}): ${outcome.message}`}`,
  };
  return { assessment: a, breaker: b, event };
}
