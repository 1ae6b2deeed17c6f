/**
 * The reconcile-loop metrics under controller-runtime's exact names, label sets and buckets
 * (pkg/internal/controller/metrics, pkg/metrics/workqueue.go, pkg/metrics/leaderelection.go), so
 * dashboards and alerts written for Kubernetes controllers work on orchctl unchanged. They are
 * fed through the hook interfaces the runtime already declares (QueueMetricsHooks,
 * ControllerMetricsHooks): the runtime knows nothing of prom-client.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ControllerMetricsHooks } from '../runtime/controller.js';
import type { QueueMetricsHooks } from '../runtime/workqueue.js';

/** controller-runtime's reconcile_time_seconds buckets (reconciles take ms to a minute). */
export const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** workqueue's ExponentialBuckets(1e-8, 10, 12): 10 ns … 1000 s. */
export const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;

export class RuntimeMetrics {
  readonly queueHooks: QueueMetricsHooks;
  readonly controllerHooks: ControllerMetricsHooks;
  private readonly leader: Gauge<'name'>;
  private readonly maxConcurrent: Gauge<'controller'>;
  /** Keys being worked on and since when (performance.now()), for the unfinished-work gauges. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    registry: Registry,
    readonly controller: string,
    readonly leaseName: string,
  ) {
    const registers = [registry];
    const c = { controller };
    const q = { name: controller, controller };

    const reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    // controller-runtime pre-initialises every result so rate() has a series from the first scrape.
    for (const result of RECONCILE_RESULTS) reconcileTotal.inc({ controller, result }, 0);
    const reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    reconcileErrors.inc(c, 0);
    const reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    reconcileTime.zero(c);
    const activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    activeWorkers.set(c, 0);
    this.maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });

    const depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name', 'controller', 'priority'],
      registers,
    });
    depth.set({ ...q, priority: '' }, 0);
    const adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    });
    adds.inc(q, 0);
    const retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name', 'controller'],
      registers,
    });
    retries.inc(q, 0);
    const queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name', 'controller'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    queueDuration.zero(q);
    const workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name', 'controller'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    workDuration.zero(q);
    // Computed at scrape time from the keys in flight: a stuck reconcile shows up while it is stuck.
    const inFlight = this.inFlight;
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate ' +
        'at which this increases.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        const now = performance.now();
        let total = 0;
        for (const t of inFlight.values()) total += now - t;
        this.set(q, total / 1000);
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name', 'controller'],
      registers,
      collect() {
        const now = performance.now();
        let longest = 0;
        for (const t of inFlight.values()) longest = Math.max(longest, now - t);
        this.set(q, longest / 1000);
      },
    });
    this.leader = new Gauge({
      name: 'leader_election_master_status',
      help:
        'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
        "'name' is the string used to identify the lease.",
      labelNames: ['name'],
      registers,
    });
    this.leader.set({ name: leaseName }, 0);

    this.queueHooks = {
      onAdd: () => adds.inc(q),
      onDepth: (n) => depth.set({ ...q, priority: '' }, n),
      onRetry: () => retries.inc(q),
      onGet: (key, secs) => {
        queueDuration.observe(q, secs);
        inFlight.set(key, performance.now());
      },
      onDone: (key, secs) => {
        workDuration.observe(q, secs);
        inFlight.delete(key);
      },
    };
    this.controllerHooks = {
      onReconcile: (result, secs) => {
        reconcileTotal.inc({ controller, result });
        if (result === 'error') reconcileErrors.inc(c);
        reconcileTime.observe(c, secs);
      },
      onActiveWorkers: (n) => activeWorkers.set(c, n),
    };
  }

  setMaxConcurrentReconciles(n: number): void {
    this.maxConcurrent.set({ controller: this.controller }, n);
  }

  /** 1 while this process holds the controller lease, 0 while it stands by (or has stopped). */
  setLeader(leading: boolean): void {
    this.leader.set({ name: this.leaseName }, leading ? 1 : 0);
  }
}
