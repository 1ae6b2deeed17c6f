/**
 * One assessment step, pure: the persisted assessment state and a batch of events in, the next
 * state and what to do out (interventions to deliver, checkpoints to summarise, signals and
 * breaker transitions to report). The reconciler persists the state together with the log
 * position after the batch, in one status write.
 *
 * Turns: a turn ends at the first of the Stop hook or an assistant message with stop reason
 * end_turn after some activity (a message, a tool call); the other marker of the same turn finds
 * no activity since and is ignored, so agents that have both (Claude Code with hooks) and agents
 * with only one count each turn once. The hook file and the transcript are separate sources, so
 * a Stop can reach the log before its turn's last transcript lines: when the run's transcript is
 * read, a Stop ends its turn only once the transcript has passed it (its end_turn message, or a
 * transcript event later than the Stop), or after STOP_GRACE_MS without either; a Stop older than
 * the open turn's first activity belongs to a turn already ended. Hook events do not move the
 * breaker's clock then (event times of one source are in order, of two are not), so any
 * interleaving of the same hook and transcript records gives the same turns and breaker state.
 * A turn made progress when it wrote a file (a successful Write/Edit-style tool call), committed,
 * or the session's git state (status.git) changed since the last turn ended — for the first turn
 * of a run, since the run began (`gitBase`, from headBefore).
 *
 * A new run (an event whose `run` is higher) starts the detector, breaker and turn afresh; the
 * previous run's open segment becomes a `run-end` checkpoint.
 */
import type { RunSummary, TurnState } from '../../api/assessment.js';
import type { AgentEvent, LogPosition } from '../../store/eventlog.js';
import {
  initialBreakerContext,
  stepBreaker,
  type BreakerContext,
  type BreakerEvent,
  type BreakerSnapshot,
  type BreakerStateName,
  type BreakerThresholds,
} from './breaker.js';
import {
  checkpointTrigger,
  newCheckpointState,
  nextSegment,
  type CheckpointDue,
  type CheckpointState,
} from './checkpoints.js';
import type { AssessmentConfig, InterventionType } from './config.js';
import { detect, newDetectorState, type DetectorState, type Signal } from './detector.js';

export interface AssessmentState {
  detector: DetectorState;
  breaker: { state: BreakerStateName; context: BreakerContext };
  checkpoints: CheckpointState;
  turn: TurnState;
  /** status.git as it stood when the last turn ended. */
  gitMark?: string;
  /** What the previous run came to (sampling decides about it after the next run began). */
  previousRun?: RunSummary;
}

export type { RunSummary };

export interface InterventionDue {
  /** `<run>-<seq>`: unique per trip, stable across replays. */
  id: string;
  type: InterventionType;
  why: string;
  seq: number;
  at: string;
  run: number;
}

export interface BreakerChange {
  from: BreakerStateName;
  to: BreakerStateName;
  at: string;
  seq?: number;
  why?: string;
}

export interface StepResult {
  state: AssessmentState;
  signals: { signal: Signal; seq: number }[];
  interventions: InterventionDue[];
  transitions: BreakerChange[];
  checkpoints: CheckpointDue[];
}

export function newAssessmentState(run = 0): AssessmentState {
  return {
    detector: newDetectorState(run),
    breaker: { state: 'Closed', context: initialBreakerContext() },
    checkpoints: newCheckpointState({ seq: 0, offset: 0 }, 1),
    turn: { activity: false, progress: false, count: 0 },
  };
}

/** Tools whose success means a file was written. */
const FILE_TOOLS = new Set([
  'Write',
  'Edit',
  'MultiEdit',
  'NotebookEdit',
  'apply_patch',
  'write_file',
  'replace',
  'edit_file',
  'str_replace_based_edit_tool',
]);

export interface StepInput {
  /** Events after the committed position, in order. */
  events: AgentEvent[];
  /** The committed position (where `events` were read from). */
  from: LogPosition;
  cfg: AssessmentConfig;
  /** Fingerprint of status.git now (head, commits, files changed), if any. */
  git?: string;
  /** Fingerprint of status.git as the current run began (at headBefore, nothing changed). */
  gitBase?: string;
  /** The reconciler's clock, ms: moves an Open breaker to HalfOpen when the log is quiet. */
  now: number;
}

/** How long a Stop hook waits for its turn's last transcript lines before it ends the turn alone. */
export const STOP_GRACE_MS = 10_000;
/** Stop hooks kept waiting at most (a bound; more means the transcript is not being read). */
const MAX_STOPS = 16;

export function thresholds(cfg: AssessmentConfig): BreakerThresholds {
  const b = cfg.breaker;
  return {
    failureThreshold: b.failureThreshold,
    correctionThreshold: b.correctionThreshold,
    correctionWindowMs: b.correctionWindowMs,
    frustrationThreshold: b.frustrationThreshold,
    noProgressTurns: b.noProgressTurns,
    cooldownMs: b.cooldownMs,
  };
}

export function assessStep(prev: AssessmentState, input: StepInput): StepResult {
  const state: AssessmentState = structuredClone(prev);
  const out: StepResult = { state, signals: [], interventions: [], transitions: [], checkpoints: [] };
  const { cfg } = input;
  const th = thresholds(cfg);
  let snap: BreakerSnapshot = { value: state.breaker.state, context: state.breaker.context };

  const send = (ev: BreakerEvent, e?: { seq: number; ts: string }) => {
    if (!cfg.breaker.enabled) return;
    const { next, actions } = stepBreaker(snap, ev);
    const from = snap.value;
    const to = next.value;
    snap = next;
    if (from !== to)
      out.transitions.push({
        from,
        to,
        at: e?.ts ?? new Date(ev.at).toISOString(),
        seq: e?.seq,
        why: to === 'Open' ? next.context.why : undefined,
      });
    if (actions.includes('intervene') && e) {
      const run = state.detector.run;
      out.interventions.push({
        id: `${run}-${e.seq}`,
        type: next.context.reason!,
        why: next.context.why ?? '',
        seq: e.seq,
        at: e.ts,
        run,
      });
    }
  };

  /** Ends the open turn, if anything happened in it (the other marker of the same turn then finds nothing). */
  const endTurn = (marker: { ts: string; seq: number }) => {
    const turn = state.turn;
    if (turn.stops?.length === 0) delete turn.stops;
    if (!turn.activity) return;
    const mark = state.gitMark ?? input.gitBase;
    const gitChanged = input.git !== undefined && mark !== undefined && input.git !== mark;
    if (input.git !== undefined) state.gitMark = input.git;
    turn.count++;
    const at = Date.parse(marker.ts);
    send(
      { type: 'TURN_END', at: Number.isNaN(at) ? input.now : at, progress: turn.progress || gitChanged, cfg: th },
      marker,
    );
    turn.activity = false;
    turn.progress = false;
    delete turn.startedAt;
  };

  for (const e of input.events) {
    const run = e.run ?? state.detector.run;
    if (run > state.detector.run) {
      const cp = state.checkpoints;
      if (cp.segmentMessages > 0 && cfg.checkpoints.enabled) {
        const due: CheckpointDue = {
          run: state.detector.run,
          trigger: 'run-end',
          seq: e.seq - 1,
          at: state.detector.lastEventTime ?? e.ts,
          from: cp.segmentFrom,
          fromSeq: cp.segmentStartSeq,
          firstMsg: cp.segmentFirstMsg,
          lastMsg: state.detector.messages,
        };
        out.checkpoints.push(due);
        cp.count++;
        cp.lastSeq = due.seq;
        cp.lastTime = due.at;
      }
      const old = state.detector;
      state.previousRun = {
        run: old.run,
        messages: old.messages,
        counts: old.counts,
        frustrationEma: old.frustrationEma,
        trips: snap.context.trips,
      };
      state.detector = newDetectorState(run);
      snap = { value: 'Closed', context: initialBreakerContext() };
      state.checkpoints = newCheckpointState(input.from, e.seq, 1, cp.count);
      Object.assign(state.checkpoints, { lastSeq: cp.lastSeq, lastTime: cp.lastTime, lastSummary: cp.lastSummary });
      state.turn = { activity: false, progress: false, count: 0 };
      delete state.gitMark; // the new run's first turn compares with its own start
    }
    const at = Date.parse(e.ts);
    const t = Number.isNaN(at) ? input.now : at;
    const turn = state.turn;
    const fromTranscript = e.source === 'transcript';
    if (fromTranscript) turn.transcript = true;
    // The transcript has passed a waiting Stop: that turn's lines are all in.
    while (fromTranscript && turn.stops?.length && t > Date.parse(turn.stops[0].ts)) endTurn(turn.stops.shift()!);
    // With a transcript, only its events move the breaker's clock: they are in order, the sources together are not.
    if (snap.value === 'Open' && (fromTranscript || !turn.transcript)) send({ type: 'TICK', at: t, cfg: th }, e);

    const d = detect(state.detector, e, cfg.detector);
    for (const signal of d.signals) out.signals.push({ signal, seq: e.seq });
    if (d.signals.length || d.scoredUserMessage)
      send({ type: 'SIGNALS', at: t, signals: d.signals, frustrationEma: state.detector.frustrationEma, cfg: th }, e);

    // Turns.
    if (e.type === 'tool_result' && !e.isError && e.tool && FILE_TOOLS.has(e.tool)) turn.progress = true;
    if (d.signals.includes('Commit')) turn.progress = true;
    if (e.type === 'hook' && e.hook === 'Stop') {
      const early = turn.activity && turn.startedAt !== undefined && t < Date.parse(turn.startedAt);
      if (early) {
        // The Stop of a turn that already ended at its end_turn message, arriving after the next prompt.
      } else if (turn.transcript) {
        turn.stops ??= [];
        const stops = turn.stops;
        if (stops.length < MAX_STOPS) stops.push({ ts: e.ts, seq: e.seq });
        stops.sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
      } else endTurn({ ts: e.ts, seq: e.seq });
    } else if (e.type === 'assistant_message' && e.stopReason === 'end_turn') {
      endTurn({ ts: e.ts, seq: e.seq });
      turn.stops?.shift(); // this turn's Stop, if it came first (later ones were ended above)
    } else if (
      e.type === 'user_message' ||
      e.type === 'assistant_message' ||
      e.type === 'tool_use' ||
      e.type === 'tool_result'
    ) {
      if (!turn.activity) turn.startedAt = e.ts;
      turn.activity = true;
    }

    // Checkpoints.
    const trig = checkpointTrigger(state.checkpoints, e, d, cfg.checkpoints);
    if (trig) {
      const cp = state.checkpoints;
      const due: CheckpointDue = {
        run: state.detector.run,
        trigger: trig,
        seq: e.seq,
        at: e.ts,
        from: cp.segmentFrom,
        fromSeq: cp.segmentStartSeq,
        firstMsg: cp.segmentFirstMsg,
        lastMsg: state.detector.messages,
      };
      out.checkpoints.push(due);
      nextSegment(cp, due, input.from);
    }
  }
  // No transcript line came for a waiting Stop: it ends its turn on its own.
  const stops = state.turn.stops;
  while (stops?.length && input.now - Date.parse(stops[0].ts) >= STOP_GRACE_MS) endTurn(stops.shift()!);
  if (stops?.length === 0) delete state.turn.stops;
  if (snap.value === 'Open') send({ type: 'TICK', at: input.now, cfg: th });
  state.breaker = { state: snap.value, context: snap.context };
  return out;
}
