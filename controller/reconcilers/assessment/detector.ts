/**
 * The lightweight detector (seed 001 §1): a pure, synchronous pass over one event of the session
 * event log that yields signals and keeps two exponential moving averages.
 *
 *  - User messages: frustration, satisfaction and correction patterns (regular expressions,
 *    defaults from seed 001, replaceable per SessionPolicy). The first user message of a run is
 *    the task prompt, and texts the breaker itself sent are interventions: neither is scored.
 *  - Tool results: build/test/lint success and failure, commits, rejected and failed tool calls
 *    (tools.ts: exit status first, text second).
 *  - frustrationEma: updated on every scored user message with 1 (frustration or correction) or 0.
 *    successEma: updated on outcomes — 1 for satisfaction or a passing build/test/lint, 0 for
 *    frustration, correction or a failing one; its first observation sets it.
 *
 * State is plain JSON (it is persisted in status.detector) and is updated in place for speed.
 */
import { SIGNALS, trajectoryPoints, type DetectorState, type Signal, type SignalRecord } from '../../api/assessment.js';
import type { AgentEvent } from '../../store/eventlog.js';
import { classifyToolResult, type ToolKind, type ToolOutcome } from './tools.js';

// The signals and the detector's status are API vocabulary (status.detector; metrics and the CLI read them).
export { SIGNALS, trajectoryPoints, type DetectorState, type Signal, type SignalRecord };

/** Signals that count as a failed attempt (consecutive failures) and those that reset the count. */
export const FAILURE_SIGNALS: ReadonlySet<Signal> = new Set([
  'TestFailure',
  'BuildFailure',
  'LintError',
  'UserCorrection',
  'ToolRejected',
]);
export const SUCCESS_SIGNALS: ReadonlySet<Signal> = new Set(['TestSuccess', 'BuildSuccess', 'LintSuccess']);
/** Signals of a person correcting the agent (correction storm). */
export const CORRECTION_SIGNALS: ReadonlySet<Signal> = new Set(['UserCorrection', 'ToolRejected']);

export interface DetectorConfig {
  frustration: RegExp[];
  satisfaction: RegExp[];
  correction: RegExp[];
  /** EMA smoothing factor, 0 < alpha ≤ 1. */
  alpha: number;
  /** Normalised texts of the breaker's interventions (not scored as user messages). */
  interventionTexts: ReadonlySet<string>;
  /** How much of a user message the patterns see. */
  maxText: number;
}

export const LAST_SIGNALS = 20;
export const TRAJECTORY = 64;

export function newDetectorState(run: number): DetectorState {
  return {
    run,
    events: 0,
    messages: 0,
    userMessages: 0,
    frustrationEma: 0,
    counts: {},
    lastSignals: [],
    trajectory: { stride: 1, points: [] },
  };
}

/** Whitespace-collapsed, trimmed, lower-case: how interventions are recognised when they come back as user messages. */
export function normaliseText(s: string): string {
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The signal of a passing and of a failing run of each kind. */
const RUN_SIGNALS: Record<ToolKind, [Signal, Signal]> = {
  test: ['TestSuccess', 'TestFailure'],
  build: ['BuildSuccess', 'BuildFailure'],
  lint: ['LintSuccess', 'LintError'],
};

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export interface Detection {
  signals: Signal[];
  /** The tool outcome, for tool results (the breaker and checkpoints use it). */
  tool?: ToolOutcome;
  /** A user message that was scored (not the task prompt, not an intervention). */
  scoredUserMessage: boolean;
  /** A user message that is one of our interventions coming back. */
  intervention: boolean;
}

/** Detects the signals in one event and updates `s` (in place). */
export function detect(s: DetectorState, e: AgentEvent, cfg: DetectorConfig): Detection {
  s.events++;
  s.lastEventTime = e.ts;
  const out: Detection = { signals: [], scoredUserMessage: false, intervention: false };
  const details: (string | undefined)[] = [];
  switch (e.type) {
    case 'user_message': {
      s.messages++;
      s.userMessages++;
      const origin = (e as { origin?: string }).origin;
      const text = e.text ?? '';
      if (origin === 'intervention' || cfg.interventionTexts.has(normaliseText(text))) {
        out.intervention = true;
        break;
      }
      // The task prompt and the agent's own interruption notes are not reactions.
      if (s.userMessages === 1 || e.interrupt || text.startsWith('[Request interrupted')) break;
      const t = text.length > cfg.maxText ? text.slice(0, cfg.maxText) : text;
      out.scoredUserMessage = true;
      const frustrated = cfg.frustration.some((r) => r.test(t));
      const satisfied = cfg.satisfaction.some((r) => r.test(t));
      const corrected = cfg.correction.some((r) => r.test(t));
      if (frustrated) out.signals.push('Frustration');
      if (satisfied) out.signals.push('Satisfaction');
      if (corrected) out.signals.push('UserCorrection');
      const x = frustrated || corrected ? 1 : 0;
      s.frustrationEma = round3(cfg.alpha * x + (1 - cfg.alpha) * s.frustrationEma);
      if (satisfied && !frustrated && !corrected) observeSuccess(s, cfg, 1);
      else if (frustrated || corrected) observeSuccess(s, cfg, 0);
      sampleTrajectory(s);
      break;
    }
    case 'assistant_message':
    case 'tool_use': // a tool call is an assistant message of its own in the transcript
      s.messages++;
      break;
    case 'tool_result': {
      const o = classifyToolResult(e);
      out.tool = o;
      if (o.rejected) out.signals.push('ToolRejected');
      else {
        // Each test/build/lint run of a compound command is a signal of its own (`tsc && vitest`).
        for (const r of o.runs) {
          const sig = RUN_SIGNALS[r.kind][r.ok ? 0 : 1];
          out.signals.push(sig);
          details.push(
            o.exitCode !== undefined && !r.ok === (o.exitCode !== 0) ? `${r.tool} (exit ${o.exitCode})` : r.tool,
          );
          observeSuccess(s, cfg, r.ok ? 1 : 0);
        }
        if (o.ok === false && !o.runs.some((r) => !r.ok)) {
          out.signals.push('ToolFailure');
          details.push(o.exitCode !== undefined ? `exit ${o.exitCode}` : undefined);
        }
      }
      if (o.commit) {
        out.signals.push('Commit');
        details.push(undefined);
      }
      break;
    }
    default:
      break;
  }
  for (const [i, sig] of out.signals.entries()) record(s, sig, e, details[i]);
  return out;
}

function observeSuccess(s: DetectorState, cfg: DetectorConfig, x: number): void {
  s.successEma = round3(s.successEma === undefined ? x : cfg.alpha * x + (1 - cfg.alpha) * s.successEma);
}

function record(s: DetectorState, signal: Signal, e: AgentEvent, detail: string | undefined): void {
  s.counts[signal] = (s.counts[signal] ?? 0) + 1;
  const r: SignalRecord = { signal, seq: e.seq, msg: s.messages, at: e.ts };
  if (detail) r.detail = detail;
  s.lastSignals.push(r);
  if (s.lastSignals.length > LAST_SIGNALS) s.lastSignals.splice(0, s.lastSignals.length - LAST_SIGNALS);
}

/** One point per `stride` scored messages (their max); halves the resolution when full. */
function sampleTrajectory(s: DetectorState): void {
  const t = s.trajectory;
  t.acc = Math.max(t.acc ?? 0, s.frustrationEma);
  t.n = (t.n ?? 0) + 1;
  if (t.n < t.stride) return;
  t.points.push(t.acc);
  delete t.acc;
  delete t.n;
  if (t.points.length >= TRAJECTORY) {
    const halved: number[] = [];
    for (let i = 0; i < t.points.length; i += 2) halved.push(Math.max(t.points[i], t.points[i + 1] ?? 0));
    t.points = halved;
    t.stride *= 2;
  }
}
