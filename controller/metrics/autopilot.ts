/**
 * The autopilot's metrics (issue 13), both patterns of docs/monitoring.md "Adding metrics":
 *  - what happens, through AutopilotMetricsHooks (controller/api/metrics-hooks.ts), counted once by
 *    the process where it happens:
 *    orchctl_autopilot_decisions_total{autopilot, action, result} — Decisions written, by the phase
 *    they were written in (a pending one that a person answers is counted again in its new phase);
 *    orchctl_autopilot_think_duration_seconds{autopilot, planner} — every think, failed ones included;
 *    orchctl_autopilot_think_errors_total{autopilot, planner} — thinks whose planner gave nothing usable;
 *  - what the Autopilots and their Decisions say, read from the informer caches at scrape time, so the
 *    figures survive a restart, follow a person's approve/reject at once, and go with a deleted object:
 *    orchctl_autopilot_pending_approvals, orchctl_autopilot_level, orchctl_autopilot_think_failing.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import {
  AUTONOMY_LEVELS,
  AUTOPILOT_ACTIONS,
  type Autopilot,
  type AutopilotAction,
  DECISION_PHASES,
  type Decision,
  type DecisionPhase,
} from '../api/autopilot.js';
import type { AutopilotMetricsHooks } from '../api/metrics-hooks.js';
import { ScrapeFamily } from './family.js';

/** The heuristic planner thinks in milliseconds (goal <= 100 ms over 100 projects), an LLM in seconds to a minute. */
export const AUTOPILOT_THINK_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const LEVEL_LABELS = AUTONOMY_LEVELS.map((l) => [l] as const);

export class AutopilotMetrics implements AutopilotMetricsHooks {
  private readonly decisions: Counter<'autopilot' | 'action' | 'result'>;
  private readonly thinkDuration: Histogram<'autopilot' | 'planner'>;
  private readonly thinkErrors: Counter<'autopilot' | 'planner'>;
  /** Autopilots (and autopilot/planner pairs) whose series exist, so increase() sees the first of each. */
  private readonly seen = new Set<string>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.decisions = new Counter({
      name: 'orchctl_autopilot_decisions_total',
      help:
        'Decisions the autopilot wrote, by autopilot, action (start, stop, restart, notify, skip) and the phase ' +
        'they were written in (Executed, PendingApproval, Logged, Rejected, Superseded, Failed); an approved or ' +
        'rejected pending Decision is counted again in its new phase.',
      labelNames: ['autopilot', 'action', 'result'],
      registers,
    });
    this.thinkDuration = new Histogram({
      name: 'orchctl_autopilot_think_duration_seconds',
      help: "Time the autopilot's planner took for one think (failed thinks included), by autopilot and planner.",
      labelNames: ['autopilot', 'planner'],
      buckets: AUTOPILOT_THINK_BUCKETS,
      registers,
    });
    this.thinkErrors = new Counter({
      name: 'orchctl_autopilot_think_errors_total',
      help:
        'Thinks whose planner produced nothing usable (garbage, a timeout, a configuration error), ' +
        'by autopilot and planner; such a think takes no action.',
      labelNames: ['autopilot', 'planner'],
      registers,
    });
  }

  private firstSight(autopilot: string): void {
    if (this.seen.has(autopilot)) return;
    this.seen.add(autopilot);
    // 5 actions x 6 phases: a first Rejected or PendingApproval is an increase from 0.
    for (const action of AUTOPILOT_ACTIONS)
      for (const result of DECISION_PHASES) this.decisions.inc({ autopilot, action, result }, 0);
  }

  onThink(autopilot: string, planner: string, seconds: number, result: 'ok' | 'error'): void {
    this.firstSight(autopilot);
    const key = `${autopilot}\0${planner}`;
    if (!this.seen.has(key)) {
      this.seen.add(key);
      this.thinkErrors.inc({ autopilot, planner }, 0);
    }
    this.thinkDuration.observe({ autopilot, planner }, seconds);
    if (result === 'error') this.thinkErrors.inc({ autopilot, planner });
  }

  onDecision(autopilot: string, action: AutopilotAction, result: DecisionPhase): void {
    this.firstSight(autopilot);
    this.decisions.inc({ autopilot, action, result });
  }
}

interface Backlog {
  namespace: string;
  autopilot: string;
  pending: number;
}

/** PendingApproval Decisions per autopilot: 0 for every Autopilot that exists, plus any a Decision names. */
function backlogs(autopilots: Iterable<Autopilot>, decisions: Iterable<Decision>): Iterable<Backlog> {
  const out = new Map<string, Backlog>();
  const at = (namespace: string, autopilot: string) => {
    const key = `${namespace}\0${autopilot}`;
    const b = out.get(key) ?? { namespace, autopilot, pending: 0 };
    out.set(key, b);
    return b;
  };
  for (const ap of autopilots) at(ap.metadata.namespace ?? '', ap.metadata.name);
  for (const d of decisions)
    if (d.status?.phase === 'PendingApproval' && d.spec?.autopilot)
      at(d.metadata.namespace ?? '', d.spec.autopilot).pending++;
  return out.values();
}

/**
 * The per-Autopilot gauges from the informer caches. Without a Decision cache there is no pending
 * count (0 would claim there is no backlog).
 */
export function registerAutopilotObjectMetrics(
  registry: Registry,
  autopilots: () => Iterable<Autopilot>,
  decisions?: () => Iterable<Decision>,
): void {
  const id = (ap: Autopilot) => [ap.metadata.namespace ?? '', ap.metadata.name];
  // Like kube_*_status_phase: every level emitted, 1 for the one in force. The spec's (default
  // observe) rather than status.level: that is what the gate applies from the next think on.
  new ScrapeFamily(registry, {
    name: 'orchctl_autopilot_level',
    help: "The Autopilot's autonomy level (StateSet over observe, cautious, moderate, full: 1 for spec.autonomyLevel).",
    type: 'gauge',
    labelNames: ['namespace', 'autopilot', 'level'],
    objects: autopilots,
    id,
    series: (ap, emit) => {
      const current = ap.spec?.autonomyLevel ?? 'observe';
      for (const lv of LEVEL_LABELS) emit(lv, lv[0] === current ? 1 : 0);
    },
  });
  // From status.lastThink (the store), like orchctl_notification_channel_failing: it survives a
  // restart and holds between thinks however long the interval, so an alert can ask "for 15m".
  new ScrapeFamily(registry, {
    name: 'orchctl_autopilot_think_failing',
    help:
      "Whether the Autopilot's last think failed (1: its planner produced nothing usable) or not (0); " +
      '0 while it is suspended (it does not think).',
    type: 'gauge',
    labelNames: ['namespace', 'autopilot'],
    objects: autopilots,
    id,
    series: (ap, emit) => {
      if (ap.status?.lastThink) emit([], ap.status.lastThink.error && !ap.spec?.suspend ? 1 : 0);
    },
  });
  if (!decisions) return;
  new ScrapeFamily(registry, {
    name: 'orchctl_autopilot_pending_approvals',
    help: 'Decisions of the Autopilot waiting for a person (phase PendingApproval): `orchctl approve|reject decision`.',
    type: 'gauge',
    labelNames: ['namespace', 'autopilot'],
    objects: () => backlogs(autopilots(), decisions()),
    id: (b) => [b.namespace, b.autopilot],
    series: (b, emit) => emit([], b.pending),
  });
}
