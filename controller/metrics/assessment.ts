/**
 * Metrics of the detector and the circuit breaker (the names reserved in docs/monitoring.md):
 *  - orchctl_agentsession_breaker_state{namespace,agentsession,state}: StateSet over Closed, Open,
 *    HalfOpen, read from status.breaker at scrape time (right after restarts and deletions);
 *  - orchctl_agentsession_frustration_ema / _success_ema: the detector's EMAs, from status.detector;
 *  - orchctl_detector_signals_total{kind}: signals the detector derived, counted once, when the
 *    status write that commits them succeeded (AssessmentMetricsHooks.onSignals, api/metrics-hooks.ts);
 *  - orchctl_breaker_interventions_total{type}: interventions delivered into sessions.
 * Signal kinds and intervention types are closed sets, so the label values are bounded.
 */
import { Counter, type Registry } from 'prom-client';
import { BREAKER_STATES, INTERVENTION_TYPES, SIGNALS, type InterventionType, type Signal } from '../api/assessment.js';
import type { AgentSession } from '../api/kinds.js';
import type { AssessmentMetricsHooks } from '../api/metrics-hooks.js';
import { ScrapeFamily } from './family.js';

const id = (s: AgentSession) => [s.metadata.namespace ?? '', s.metadata.name];
const STATE_LABELS = BREAKER_STATES.map((s): readonly [string] => [s]);

export function registerAssessmentSessionMetrics(registry: Registry, sessions: () => AgentSession[]): void {
  new ScrapeFamily(registry, {
    name: 'orchctl_agentsession_breaker_state',
    help:
      "The AgentSession's circuit-breaker state (StateSet: 1 for the current state of Closed, Open, HalfOpen; " +
      'absent before the detector has seen an event).',
    type: 'gauge',
    labelNames: ['namespace', 'agentsession', 'state'],
    objects: sessions,
    id,
    series: (s, emit) => {
      const current = s.status?.breaker?.state;
      if (!current) return;
      for (const lv of STATE_LABELS) emit(lv, lv[0] === current ? 1 : 0);
    },
  });
  for (const [name, help, field] of [
    [
      'orchctl_agentsession_frustration_ema',
      "Exponential moving average of frustration in the current run's user messages " +
        '(0..1, status.detector.frustrationEma).',
      'frustrationEma',
    ],
    [
      'orchctl_agentsession_success_ema',
      'Exponential moving average of outcomes in the current run — passing builds/tests/lint and praise count 1, ' +
        'failures and complaints 0 (status.detector.successEma).',
      'successEma',
    ],
  ] as const)
    new ScrapeFamily(registry, {
      name,
      help,
      type: 'gauge',
      labelNames: ['namespace', 'agentsession'],
      objects: sessions,
      id,
      series: (s, emit) => {
        const v = s.status?.detector?.[field];
        if (typeof v === 'number' && Number.isFinite(v)) emit([], v);
      },
    });
}

export class AssessmentMetrics implements AssessmentMetricsHooks {
  private readonly signals: Counter<'kind'>;
  private readonly interventions: Counter<'type'>;

  constructor(registry: Registry) {
    this.signals = new Counter({
      name: 'orchctl_detector_signals_total',
      help:
        'Signals the lightweight detector derived from session event logs, ' +
        'by kind (TestFailure, UserCorrection, ...).',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.interventions = new Counter({
      name: 'orchctl_breaker_interventions_total',
      help:
        'Circuit-breaker interventions delivered into sessions, ' +
        'by type (ClarificationPause, ApproachPivot, ExplicitCheckIn).',
      labelNames: ['type'],
      registers: [registry],
    });
    // Every series from the start, so rate() sees the first increment.
    for (const k of SIGNALS) this.signals.inc({ kind: k }, 0);
    for (const t of INTERVENTION_TYPES) this.interventions.inc({ type: t }, 0);
  }

  onSignals(signals: Signal[]): void {
    for (const s of signals) this.signals.inc({ kind: s });
  }

  onIntervention(type: InterventionType, delivered: boolean): void {
    if (delivered) this.interventions.inc({ type });
  }
}
