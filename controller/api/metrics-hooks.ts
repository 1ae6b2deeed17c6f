/**
 * What the reconcilers report to metrics, as interfaces the reconcilers call and controller/metrics
 * implements: declared here so that metrics depends on the API, not on the reconcilers.
 */
import type { InterventionType, Signal } from './assessment.js';
import type { AutopilotAction, DecisionPhase } from './autopilot.js';
import type { NotificationTier } from './notification-channel.js';
import type { Phase } from './phases.js';
import type { AgentSession, DeliveryResult } from './session.js';

/** What the session reconciler reports (implemented in controller/metrics/runs.ts). */
export interface SessionMetricsHooks {
  /** A run this process saw end (not one that was already over when it was read). */
  onRunEnded?(session: AgentSession, run: number, phase: Phase, durationSeconds: number): void;
  /** A verified delivery finished (prompt, `orchctl send` through the controller, intervention). */
  onDelivery?(session: AgentSession, result: DeliveryResult): void;
  /** A run was paused (status.pause): for a rate limit or a budget. */
  onPaused?(session: AgentSession, reason: string): void;
}

export type LlmRequestResult = 'success' | 'error' | 'timeout' | 'invalid';

/** What the judge reports (implemented in controller/metrics/judge.ts). */
export interface JudgeMetricsHooks {
  /** A verdict was recorded. */
  onEvaluated?(backend: string, recommendation: string, score: number, seconds: number): void;
  /** An Evaluation ended in JudgeFailed. */
  onFailed?(backend: string, reason: string, seconds: number): void;
  /** Judgements holding a slot of the concurrency limit. */
  onInFlight?(n: number): void;
  /** One request to a backend (a judgement may make several: retries, the repair). */
  onRequest?(backend: string, purpose: string, result: LlmRequestResult, seconds: number): void;
}

/** What the assessment reconciler reports (implemented in controller/metrics/assessment.ts). */
export interface AssessmentMetricsHooks {
  onSignals?(signals: Signal[]): void;
  onIntervention?(type: InterventionType, delivered: boolean): void;
}

/**
 * What becomes of a notification on a channel: `sent`; `failed` (refused, or retries used up);
 * `retry` (an attempt failed and it will be tried again); `deferred`, `batched`, `digest`, `suppressed`.
 */
export type NotificationResult = 'sent' | 'failed' | 'retry' | 'deferred' | 'batched' | 'digest' | 'suppressed';

/** What the notifier reports (implemented in controller/metrics/notifications.ts). */
export interface NotifierMetricsHooks {
  onNotification?(channel: string, tier: NotificationTier, result: NotificationResult): void;
  /** Seconds from the Event's last occurrence to the channel taking the message. */
  onDelivered?(channel: string, tier: NotificationTier, seconds: number): void;
}

/** What the scheduler reports (implemented in controller/metrics/nodes.ts). */
export interface SchedulerMetricsHooks {
  /** One attempt to place a session; `reasons` are why Nodes were filtered out when none fit. */
  onScheduleAttempt?(result: 'scheduled' | 'unschedulable' | 'error', reasons?: readonly string[]): void;
}

/** What the autopilot reports (implemented in controller/metrics/autopilot.ts). */
export interface AutopilotMetricsHooks {
  /** One think: the planner ran (or failed to produce a usable plan) in `seconds`. */
  onThink?(autopilot: string, planner: string, seconds: number, result: 'ok' | 'error'): void;
  /** A Decision was written in `result` (a pending one that is answered later is reported again). */
  onDecision?(autopilot: string, action: AutopilotAction, result: DecisionPhase): void;
}
