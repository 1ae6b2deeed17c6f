/**
 * The LLM judge's event metrics under the names docs/monitoring.md reserved for it (the alert
 * OrchctlJudgeFailing and the dashboard's judge row already use them). Fed through
 * JudgeMetricsHooks (controller/api/metrics-hooks.ts), each event once, by the
 * process where it happens:
 *  - orchctl_judge_evaluations_total{backend, recommendation}: verdicts recorded;
 *  - orchctl_judge_failures_total{backend, reason}: Evaluations that ended in JudgeFailed;
 *  - orchctl_judge_duration_seconds{backend}: one judgement, retries and repair included;
 *  - orchctl_judge_score{backend}: the scores (buckets 1…5);
 *  - orchctl_judge_in_flight: judgements holding a slot of the concurrency limit;
 *  - orchctl_llm_requests_total{backend, purpose, result} and
 *    orchctl_llm_request_duration_seconds{backend, purpose}: every request to a backend.
 * The closed label sets are pre-initialised so increase() sees the first event.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RECOMMENDATIONS } from '../api/evaluation.js';
import type { JudgeMetricsHooks, LlmRequestResult } from '../api/metrics-hooks.js';
import { JUDGE_BACKENDS } from '../api/session-policy.js';

export { JUDGE_BACKENDS };
export const JUDGE_RECOMMENDATIONS = RECOMMENDATIONS;
export const JUDGE_FAILURE_REASONS = [
  'Timeout',
  'RateLimited',
  'BackendError',
  'NetworkError',
  'InvalidOutput',
  'ConfigError',
  'RequestRejected',
  'TooManyAttempts',
] as const;
export const LLM_RESULTS: readonly LlmRequestResult[] = ['success', 'error', 'timeout', 'invalid'];
/** A heuristic verdict takes milliseconds, a model call seconds to minutes. */
export const JUDGE_DURATION_BUCKETS = [0.005, 0.05, 0.25, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

export class JudgeMetrics implements JudgeMetricsHooks {
  private readonly evaluations: Counter<'backend' | 'recommendation'>;
  private readonly failures: Counter<'backend' | 'reason'>;
  private readonly duration: Histogram<'backend'>;
  private readonly score: Histogram<'backend'>;
  private readonly inFlight: Gauge;
  private readonly requests: Counter<'backend' | 'purpose' | 'result'>;
  private readonly requestDuration: Histogram<'backend' | 'purpose'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.evaluations = new Counter({
      name: 'orchctl_judge_evaluations_total',
      help: 'Verdicts the LLM judge recorded, by backend and recommendation.',
      labelNames: ['backend', 'recommendation'],
      registers,
    });
    this.failures = new Counter({
      name: 'orchctl_judge_failures_total',
      help:
        'Evaluations that ended in JudgeFailed (no verdict after retries and the repair attempt), ' +
        'by backend and reason.',
      labelNames: ['backend', 'reason'],
      registers,
    });
    this.duration = new Histogram({
      name: 'orchctl_judge_duration_seconds',
      help: 'Time to judge one Evaluation (waiting for a slot excluded; retries and repair included), by backend.',
      labelNames: ['backend'],
      buckets: JUDGE_DURATION_BUCKETS,
      registers,
    });
    this.score = new Histogram({
      name: 'orchctl_judge_score',
      help: 'Scores (1-5) of the verdicts the judge recorded, by backend.',
      labelNames: ['backend'],
      buckets: [1, 2, 3, 4, 5],
      registers,
    });
    this.inFlight = new Gauge({
      name: 'orchctl_judge_in_flight',
      help: 'Judgements holding a slot of the controller-wide concurrency limit.',
      registers,
    });
    this.requests = new Counter({
      name: 'orchctl_llm_requests_total',
      help: 'Requests to LLM backends, by backend, purpose and result (success, error, timeout, invalid answer).',
      labelNames: ['backend', 'purpose', 'result'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'orchctl_llm_request_duration_seconds',
      help: 'Duration of one request to an LLM backend, by backend and purpose.',
      labelNames: ['backend', 'purpose'],
      buckets: JUDGE_DURATION_BUCKETS,
      registers,
    });
    this.inFlight.set(0);
    for (const backend of JUDGE_BACKENDS) {
      for (const recommendation of JUDGE_RECOMMENDATIONS) this.evaluations.inc({ backend, recommendation }, 0);
      for (const reason of JUDGE_FAILURE_REASONS) this.failures.inc({ backend, reason }, 0);
      for (const result of LLM_RESULTS) this.requests.inc({ backend, purpose: 'judge', result }, 0);
    }
  }

  onEvaluated(backend: string, recommendation: string, score: number, seconds: number): void {
    this.evaluations.inc({ backend, recommendation });
    this.duration.observe({ backend }, seconds);
    this.score.observe({ backend }, score);
  }

  onFailed(backend: string, reason: string, seconds: number): void {
    this.failures.inc({ backend, reason });
    this.duration.observe({ backend }, seconds);
  }

  onInFlight(n: number): void {
    this.inFlight.set(n);
  }

  onRequest(backend: string, purpose: string, result: LlmRequestResult, seconds: number): void {
    this.requests.inc({ backend, purpose, result });
    this.requestDuration.observe({ backend, purpose }, seconds);
  }
}
