/**
 * Sampling (seed 001 §7): which ended runs get the heavy assessment (the LLM judge). Pure and
 * deterministic, so a restarted controller decides the same for the same run:
 *  1. burn-in — while the namespace has fewer than `burnIn` Evaluations, every run is judged;
 *  2. breaker-triggered — a run in which the circuit breaker intervened;
 *  3. explicit feedback — a run in which a person praised, complained or corrected;
 *  4. long sessions — more than `longSessionMessages` messages in the run;
 *  5. base rate — otherwise a fraction `baseRate` of runs, chosen by a hash of the session uid
 *     and the run number (not a random draw: the same run always gets the same answer).
 * A policy without a `sampling` section judges every ended run (the judge's own default).
 * In api/ because both the judge (which runs to judge) and the assessment reconciler read it.
 */
import { createHash } from 'node:crypto';
import type { AssessmentStatus, BreakerStatus, DetectorState } from './assessment.js';
import type { AgentSession, SessionPolicy } from './kinds.js';

export interface SamplingConfig {
  burnIn: number;
  baseRate: number;
  longSessionMessages: number;
  onBreaker: boolean;
  onFeedback: boolean;
}

export const SAMPLING_DEFAULTS = { burnIn: 10, baseRate: 0.2, longSessionMessages: 100 };

const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const bool = (v: unknown, d: boolean) => (typeof v === 'boolean' ? v : d);

/** A SessionPolicy's `spec.sampling` with its defaults, each number clamped to its range. */
export function samplingConfig(raw: unknown): SamplingConfig {
  const s = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  return {
    burnIn: Math.max(0, num(s.burnIn, SAMPLING_DEFAULTS.burnIn)),
    baseRate: Math.min(1, Math.max(0, num(s.baseRate, SAMPLING_DEFAULTS.baseRate))),
    longSessionMessages: Math.max(1, num(s.longSessionMessages, SAMPLING_DEFAULTS.longSessionMessages)),
    onBreaker: bool(s.onBreaker, true),
    onFeedback: bool(s.onFeedback, true),
  };
}

export interface SamplingInput {
  uid: string;
  run: number;
  /** Evaluations that exist in the namespace (the burn-in counter). */
  evaluationsSoFar: number;
  breakerTriggered: boolean;
  explicitFeedback: boolean;
  messages: number;
}

export type SamplingReason =
  | 'BurnIn'
  | 'BreakerTriggered'
  | 'ExplicitFeedback'
  | 'LongSession'
  | 'BaseRate'
  | 'NotSampled'
  | 'NoSamplingPolicy';

export interface SamplingDecision {
  judge: boolean;
  reason: SamplingReason;
}

/** A number in [0, 1) fixed by the session uid and run. */
export function sampleValue(uid: string, run: number): number {
  return parseInt(createHash('sha256').update(`${uid}:${run}`).digest('hex').slice(0, 8), 16) / 2 ** 32;
}

export function sample(i: SamplingInput, c: SamplingConfig): SamplingDecision {
  if (i.evaluationsSoFar < c.burnIn) return { judge: true, reason: 'BurnIn' };
  if (c.onBreaker && i.breakerTriggered) return { judge: true, reason: 'BreakerTriggered' };
  if (c.onFeedback && i.explicitFeedback) return { judge: true, reason: 'ExplicitFeedback' };
  if (i.messages > c.longSessionMessages) return { judge: true, reason: 'LongSession' };
  if (sampleValue(i.uid, i.run) < c.baseRate) return { judge: true, reason: 'BaseRate' };
  return { judge: false, reason: 'NotSampled' };
}

/** What status says about one run of the session (the current run, or the one before it). */
export function samplingInputFor(session: AgentSession, run: number, evaluationsSoFar: number): SamplingInput {
  const st = (session.status ?? {}) as Record<string, unknown>;
  const d = st.detector as DetectorState | undefined;
  const prev = (st.assessment as AssessmentStatus | undefined)?.previousRun;
  const b = st.breaker as BreakerStatus | undefined;
  const feedbackOf = (counts: DetectorState['counts'] | undefined) =>
    (counts?.Satisfaction ?? 0) + (counts?.Frustration ?? 0) + (counts?.UserCorrection ?? 0) > 0;
  let messages = 0;
  let explicitFeedback = false;
  if (d?.run === run) {
    messages = d.messages;
    explicitFeedback = feedbackOf(d.counts);
  } else if (prev?.run === run) {
    messages = prev.messages;
    explicitFeedback = feedbackOf(prev.counts);
  }
  const breakerTriggered =
    (b?.history ?? []).some((h) => h.id.startsWith(`${run}-`)) ||
    (d?.run === run && (b?.trips ?? 0) > 0) ||
    (prev?.run === run && prev.trips > 0);
  return {
    uid: session.metadata.uid ?? `${session.metadata.namespace}/${session.metadata.name}`,
    run,
    evaluationsSoFar,
    breakerTriggered,
    explicitFeedback,
    messages,
  };
}

/** The decision for one ended run under `policy`. */
export function sampleRun(
  session: AgentSession,
  run: number,
  policy: SessionPolicy | undefined,
  evaluationsSoFar: number,
): SamplingDecision {
  const spec = policy?.spec as { sampling?: unknown } | undefined;
  if (!spec?.sampling || typeof spec.sampling !== 'object') return { judge: true, reason: 'NoSamplingPolicy' };
  return sample(samplingInputFor(session, run, evaluationsSoFar), samplingConfig(spec.sampling));
}
