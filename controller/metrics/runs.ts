/**
 * orchctl_agentsession_run_duration_seconds: how long runs lasted, by the phase they ended in.
 *
 * Unlike the object metrics this is an event metric, so it must be observed exactly once per
 * ended run. It is fed by the session reconciler at the moment *this process* moves a run into
 * an ended phase (SessionMetricsHooks.onRunEnded) — never derived from status, so a restarted
 * controller that reads runs already recorded as ended does not observe them again. A reconcile
 * whose status write failed repeats the transition on its retry; remembering the last run
 * observed per session uid keeps that from counting twice.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { AgentSession, DeliveryResult } from '../api/kinds.js';
import type { SessionMetricsHooks } from '../api/metrics-hooks.js';

/** Runs last from seconds (a quick script) to many hours (an agent on a long task). */
export const RUN_DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400];

export class RunMetrics implements SessionMetricsHooks {
  private readonly histogram: Histogram<'namespace' | 'phase'>;
  private readonly deliveries: Counter<'namespace' | 'result'>;
  private readonly retries: Counter<'namespace'>;
  /** uid → highest run number observed; forget() drops deleted sessions so it stays bounded. */
  private readonly observed = new Map<string, number>();

  constructor(registry: Registry) {
    this.histogram = new Histogram({
      name: 'orchctl_agentsession_run_duration_seconds',
      help:
        'Duration of AgentSession runs that ended while this controller was running, ' +
        'by the phase they ended in (Succeeded, Failed, Killed, TimedOut).',
      labelNames: ['namespace', 'phase'],
      buckets: RUN_DURATION_BUCKETS,
      registers: [registry],
    });
    this.deliveries = new Counter({
      name: 'orchctl_prompt_deliveries_total',
      help:
        'Verified prompt deliveries into agent panes by this controller, ' +
        'by result (Confirmed, Unconfirmed, PasteFailed, ...).',
      labelNames: ['namespace', 'result'],
      registers: [registry],
    });
    this.retries = new Counter({
      name: 'orchctl_prompt_delivery_retries_total',
      help:
        'Extra presses of the submit keys prompt deliveries needed before the agent confirmed the prompt ' +
        '(a swallowed Enter costs one).',
      labelNames: ['namespace'],
      registers: [registry],
    });
  }

  onDelivery(session: AgentSession, r: DeliveryResult): void {
    const namespace = session.metadata.namespace ?? '';
    this.deliveries.inc({ namespace, result: r.reason });
    if (r.retries) this.retries.inc({ namespace }, r.retries);
  }

  /** Pauses begun (metrics/pauses.ts makes the counter: it is registered with the pause gauges). */
  pauses?: Counter<'namespace' | 'reason'>;

  onPaused(session: AgentSession, reason: string): void {
    this.pauses?.inc({ namespace: session.metadata.namespace ?? '', reason });
  }

  onRunEnded(session: AgentSession, run: number, phase: string, durationSeconds: number): void {
    const uid = session.metadata.uid ?? `${session.metadata.namespace}/${session.metadata.name}`;
    if ((this.observed.get(uid) ?? 0) >= run) return;
    this.observed.set(uid, run);
    this.histogram.observe({ namespace: session.metadata.namespace ?? '', phase }, durationSeconds);
  }

  forget(uid: string | undefined): void {
    if (uid) this.observed.delete(uid);
  }
}
