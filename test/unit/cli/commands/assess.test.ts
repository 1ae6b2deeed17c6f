/**
 * Pieces of `orchctl assess` and the assessment metrics: --since parsing, the sparkline, and the
 * breaker/detector families rendered by a real prom-client registry from session objects.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/kinds.js';
import { parseSince, sparkline } from '../../../../controller/cli/commands/assess.js';
import { AssessmentMetrics, registerAssessmentSessionMetrics } from '../../../../controller/metrics/assessment.js';

describe('orchctl assess helpers', () => {
  it('--since takes days and Go durations', () => {
    expect(parseSince('7d')).toBe(7 * 86_400_000);
    expect(parseSince('1.5d')).toBe(1.5 * 86_400_000);
    expect(parseSince('12h')).toBe(12 * 3_600_000);
    expect(parseSince('90m')).toBe(90 * 60_000);
    expect(() => parseSince('a week')).toThrow('--since must be a duration like 7d, 12h or 30m, got "a week"');
  });

  it('the sparkline maps 0..1 onto eight levels', () => {
    expect(sparkline([0, 0.1, 0.3, 0.5, 0.7, 0.9, 1])).toBe('▁▁▃▅▆██');
    expect(sparkline([])).toBe('');
  });
});

const session = (name: string, status: Record<string, unknown>): AgentSession =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', uid: `u-${name}` },
    spec: {},
    status,
  }) as AgentSession;

describe('assessment metrics', () => {
  it('breaker state as a StateSet and the EMAs, from status; nothing for a session not yet assessed', async () => {
    const reg = new Registry();
    const sessions = [
      session('open', { breaker: { state: 'Open' }, detector: { frustrationEma: 0.76, successEma: 0.2 } }),
      session('new', { phase: 'Pending' }),
    ];
    registerAssessmentSessionMetrics(reg, () => sessions);
    const text = await reg.metrics();
    expect(text).toContain(
      'orchctl_agentsession_breaker_state{namespace="default",agentsession="open",state="Closed"} 0',
    );
    expect(text).toContain(
      'orchctl_agentsession_breaker_state{namespace="default",agentsession="open",state="Open"} 1',
    );
    expect(text).toContain(
      'orchctl_agentsession_breaker_state{namespace="default",agentsession="open",state="HalfOpen"} 0',
    );
    expect(text).toContain('orchctl_agentsession_frustration_ema{namespace="default",agentsession="open"} 0.76');
    expect(text).toContain('orchctl_agentsession_success_ema{namespace="default",agentsession="open"} 0.2');
    expect(text).not.toContain('agentsession="new"');
  });

  it('signals by kind and delivered interventions by type, every series present from the start', async () => {
    const reg = new Registry();
    const m = new AssessmentMetrics(reg);
    expect(await reg.metrics()).toContain('orchctl_breaker_interventions_total{type="ExplicitCheckIn"} 0');
    m.onSignals(['TestFailure', 'TestFailure', 'Commit']);
    m.onIntervention('ApproachPivot', true);
    m.onIntervention('ApproachPivot', false);
    const text = await reg.metrics();
    expect(text).toContain('orchctl_detector_signals_total{kind="TestFailure"} 2');
    expect(text).toContain('orchctl_detector_signals_total{kind="Commit"} 1');
    expect(text).toContain('orchctl_detector_signals_total{kind="UserCorrection"} 0');
    expect(text).toContain('orchctl_breaker_interventions_total{type="ApproachPivot"} 1');
  });
});
