/**
 * The controller's metrics: one prom-client Registry of its own (not the global one, so nothing
 * a library registers globally leaks into /metrics and tests/benchmarks can build many), holding
 *  - controller-runtime's reconcile-loop and work-queue metrics (runtime.ts),
 *  - Node.js process metrics (prom-client's default collectors),
 *  - kube-state-metrics-style object metrics computed at scrape time from the informer caches
 *    (sessions.ts, nodes.ts, projects.ts, the Autopilot gauges of autopilot.ts),
 *  - event metrics fed by reconciler hooks (runs.ts, judge.ts, assessment.ts, notifications.ts, autopilot.ts).
 *
 * Later parts plug in the same two ways (docs/monitoring.md, "Adding metrics"): state that lives
 * in an object's status (breaker state, detector EMAs, last evaluation) gets a collector here
 * reading the cache; things that happen (a judge call, an intervention, a delivery retry) get a
 * hooks interface declared in api/metrics-hooks.ts, implemented by a class here.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Informer } from '../runtime/informer.js';
import { AssessmentMetrics, registerAssessmentSessionMetrics } from './assessment.js';
import { AutopilotMetrics, registerAutopilotObjectMetrics } from './autopilot.js';
import { registerNodeMetrics, SchedulerMetrics } from './nodes.js';
import { registerProjectMetrics } from './projects.js';
import { registerPipelineMetrics } from './pipelines.js';
import { JudgeMetrics } from './judge.js';
import { type NotificationChannelObject, NotifierMetrics, registerChannelMetrics } from './notifications.js';
import { RunMetrics } from './runs.js';
import { RuntimeMetrics } from './runtime.js';
import { registerPauseMetrics } from './pauses.js';
import { registerSessionMetrics } from './sessions.js';

/**
 * How often nodejs_eventloop_lag_* samples the loop, in ms. prom-client's default (10 ms) wakes the
 * loop 100 times a second for ever: a third of the controller's idle CPU at 1000 sessions (1.68 % of
 * a core against 1.15 % at 100 ms; issue 29). 100 ms still gives ~150 samples between two 15 s
 * scrapes, and a stall longer than that shows in full.
 */
export const EVENT_LOOP_LAG_RESOLUTION_MS = 100;

export interface MetricsOptions {
  /** Controller name: the `controller` and workqueue `name` labels. */
  controller: string;
  /** Lease name: the `name` label of leader_election_master_status. */
  leaseName: string;
  sessions: Pick<Informer<'AgentSession'>, 'list' | 'onChange'>;
  nodes: Pick<Informer<'Node'>, 'list'>;
  /** NotificationChannels, for the budget, waiting and failing gauges from their status (none without). */
  notificationChannels?: Pick<Informer<'NotificationChannel'>, 'list'>;
  /** Autopilots, for the level and think-failing gauges (and with `decisions`, pending approvals). */
  autopilots?: Pick<Informer<'Autopilot'>, 'list'>;
  /** Decisions, for orchctl_autopilot_pending_approvals. */
  decisions?: Pick<Informer<'Decision'>, 'list'>;
  /** Projects, for orchctl_project_stale. */
  projects?: Pick<Informer<'Project'>, 'list'>;
  /** Pipelines, for orchctl_pipeline_status_phase and orchctl_pipeline_phases. */
  pipelines?: Pick<Informer<'Pipeline'>, 'list'>;
  /** SessionPolicies, for the budget gauges (orchctl_sessionpolicy_*). */
  policies?: Pick<Informer<'SessionPolicy'>, 'list'>;
  /** Node.js process metrics (default true). */
  processMetrics?: boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly runtime: RuntimeMetrics;
  readonly runs: RunMetrics;
  /** The LLM judge's evaluations, failures, latency and backend requests (judge.ts). */
  readonly judge: JudgeMetrics;
  /** Detector signals and breaker interventions (assessment.ts). */
  readonly assessment: AssessmentMetrics;
  /** The notifier's messages by result and their delivery latency (notifications.ts). */
  readonly notifications: NotifierMetrics;
  /** The autopilot's decisions by action and result, think latency and failures (autopilot.ts). */
  readonly autopilot: AutopilotMetrics;
  /** The scheduler's attempts and why nodes were filtered out (nodes.ts). */
  readonly scheduler: SchedulerMetrics;

  constructor(opts: MetricsOptions) {
    if (opts.processMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_LAG_RESOLUTION_MS });
      // Gauges named like counters, which promtool (rightly) flags; the per-type gauges
      // nodejs_active_{handles,requests,resources} beside them carry the same numbers (sum them).
      for (const name of [
        'nodejs_active_handles_total',
        'nodejs_active_requests_total',
        'nodejs_active_resources_total',
      ])
        this.registry.removeSingleMetric(name);
    }
    this.runtime = new RuntimeMetrics(this.registry, opts.controller, opts.leaseName);
    this.runs = new RunMetrics(this.registry);
    this.judge = new JudgeMetrics(this.registry);
    // The informer holds what the store admitted (validated against the CRD): AgentSessions.
    const sessions = () => opts.sessions.list();
    registerSessionMetrics(this.registry, sessions);
    const policies = opts.policies;
    this.runs.pauses = registerPauseMetrics(this.registry, sessions, () => policies?.list() ?? []);
    this.assessment = new AssessmentMetrics(this.registry);
    registerAssessmentSessionMetrics(this.registry, sessions);
    registerNodeMetrics(this.registry, () => opts.nodes.list(), sessions);
    this.scheduler = new SchedulerMetrics(this.registry);
    this.notifications = new NotifierMetrics(this.registry);
    const channels = opts.notificationChannels;
    if (channels) registerChannelMetrics(this.registry, () => channels.list() as NotificationChannelObject[]);
    this.autopilot = new AutopilotMetrics(this.registry);
    const { autopilots, decisions, projects } = opts;
    if (autopilots)
      registerAutopilotObjectMetrics(this.registry, () => autopilots.list(), decisions && (() => decisions.list()));
    if (projects) registerProjectMetrics(this.registry, () => projects.list());
    const pipelines = opts.pipelines;
    if (pipelines) registerPipelineMetrics(this.registry, () => pipelines.list());
    opts.sessions.onChange((type, o) => type === 'DELETED' && this.runs.forget(o.metadata.uid));
  }
}

export {
  DEFAULT_METRICS_ADDR,
  exposureWarning,
  formatAddr,
  parseMetricsAddr,
  renderMetrics,
  startMetricsServer,
  type ListenAddr,
  type MetricsServer,
  type Readiness,
} from './server.js';
