/**
 * The judge's metrics as the registry renders them: the reserved names of docs/monitoring.md,
 * closed label sets present from the start (so increase() sees the first event), each event
 * counted once.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { JudgeMetrics } from '../../../controller/metrics/judge.js';
import { parseExposition } from '../../support/prom-text.js';

describe('judge metrics', () => {
  it('counts verdicts, failures, latency, scores, requests and the judgements in flight', async () => {
    const registry = new Registry();
    const m = new JudgeMetrics(registry);
    let x = parseExposition(await registry.metrics());
    expect(x.value('orchctl_judge_evaluations_total', { backend: 'openai', recommendation: 'escalate' })).toBe(0);
    expect(x.value('orchctl_judge_failures_total', { backend: 'anthropic', reason: 'Timeout' })).toBe(0);
    expect(x.value('orchctl_judge_in_flight')).toBe(0);
    expect(x.types.get('orchctl_judge_duration_seconds')).toBe('histogram');
    expect(x.types.get('orchctl_llm_requests_total')).toBe('counter');

    m.onInFlight(2);
    m.onRequest('openai', 'judge', 'timeout', 30);
    m.onRequest('openai', 'judge', 'success', 2.5);
    m.onEvaluated('openai', 'continue', 3, 33);
    m.onEvaluated('heuristic', 'complete', 5, 0.002);
    m.onFailed('command', 'InvalidOutput', 12);
    m.onInFlight(0);
    x = parseExposition(await registry.metrics());
    expect(x.value('orchctl_judge_evaluations_total', { backend: 'openai', recommendation: 'continue' })).toBe(1);
    expect(x.value('orchctl_judge_evaluations_total', { backend: 'heuristic', recommendation: 'complete' })).toBe(1);
    expect(x.value('orchctl_judge_failures_total', { backend: 'command', reason: 'InvalidOutput' })).toBe(1);
    expect(x.value('orchctl_judge_duration_seconds_count', { backend: 'openai' })).toBe(1);
    expect(x.value('orchctl_judge_duration_seconds_sum', { backend: 'openai' })).toBe(33);
    expect(x.value('orchctl_judge_duration_seconds_count', { backend: 'command' })).toBe(1);
    expect(x.value('orchctl_judge_score_bucket', { backend: 'openai', le: '2' })).toBe(0);
    expect(x.value('orchctl_judge_score_bucket', { backend: 'openai', le: '3' })).toBe(1);
    expect(x.value('orchctl_llm_requests_total', { backend: 'openai', purpose: 'judge', result: 'timeout' })).toBe(1);
    expect(x.value('orchctl_llm_request_duration_seconds_count', { backend: 'openai', purpose: 'judge' })).toBe(2);
    expect(x.value('orchctl_judge_in_flight')).toBe(0);
  });
});
