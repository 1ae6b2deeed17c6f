/**
 * The notifier is three controllers:
 *  - `notifier` (key: a NotificationPolicy) routes. Woken by its policy, by any Event, Channel or
 *    Silence in its namespace, by any change to one of its Notifications (a send changes the
 *    channel's counts), and when a deferral or a batch falls due (requeueAfter).
 *  - `notification-delivery` (key: a Notification) sends what is Pending. Every Notification
 *    change wakes it; at start the informer lists them all, so what a killed controller left
 *    Pending is sent by the next one.
 *  - `digest` (key: a NotificationPolicy) records the digest when its schedule comes round or
 *    `orchctl digest --now` asks (requeueAfter until the next scheduled time).
 */
import path from 'node:path';
import type { EventObject } from '../../api/event.js';
import type { NotifierMetricsHooks } from '../../api/metrics-hooks.js';
import type { Resource } from '../../api/types.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { DeliveredKeys } from './delivered.js';
import { DeliveryReconciler } from './delivery.js';
import type { LinkConfig } from './action-links.js';
import { DigestReconciler } from './digester.js';
import { RouterReconciler } from './router.js';

export interface NotifierSetupDeps extends Pick<ControllerServices, 'recorder' | 'log'> {
  metrics?: NotifierMetricsHooks;
  /** Where channels read `{env: NAME}` secrets (the controller's environment by default). */
  env?: NodeJS.ProcessEnv;
  /** Send workers: one slow channel (a timeout is up to 5 minutes) must not hold up the others. */
  deliveryWorkers?: number;
  /** The state directory: the channels' delivered-keys records are kept under it (delivered.ts). */
  home?: string;
  /** How long settled Notifications are kept (plan.ts RETENTION_MS by default). */
  retentionMs?: number;
  /** Signed approve/reject links on a pending Decision's message (the controller's --console-url). */
  links?: LinkConfig;
}

/** The kinds whose labels `labels.<key>` matchers can see (the objects Events are about). */
const LABELLED_KINDS = ['AgentSession', 'Project', 'Evaluation'];

export function setup(
  mgr: Manager,
  d: NotifierSetupDeps,
): { router: RouterReconciler; delivery: DeliveryReconciler; digester: DigestReconciler } {
  const policies = mgr.informer('NotificationPolicy');
  const channels = mgr.informer('NotificationChannel');
  const notifications = mgr.informer('Notification');
  const labelled = new Map(LABELLED_KINDS.map((k) => [k, mgr.informer(k)]));
  const labelsOf = (e: EventObject) =>
    labelled.get(e.involvedObject.kind)?.get(e.involvedObject.namespace ?? e.metadata.namespace, e.involvedObject.name)
      ?.metadata.labels;
  const stillTrue = (e: EventObject) => {
    const o = labelled
      .get(e.involvedObject.kind)
      ?.get(e.involvedObject.namespace ?? e.metadata.namespace, e.involvedObject.name) as
      | (Resource & { status?: { conditions?: { type: string; status: string }[] } })
      | undefined;
    const c = o?.status?.conditions?.find((x) => x.type === e.reason);
    return c ? c.status === 'True' : undefined;
  };
  const policiesIn = (o: Resource) => policies.list(o.metadata.namespace ?? '').map(queueKey);

  const router = new RouterReconciler({
    store: mgr.store,
    policies,
    channels,
    notifications,
    events: mgr.informer('Event'),
    silences: mgr.informer('Silence'),
    labelsOf,
    stillTrue,
    recorder: d.recorder,
    log: d.log,
    metrics: d.metrics,
    retentionMs: d.retentionMs,
  });
  mgr
    .controller('notifier', { workers: 1 })
    .for('NotificationPolicy')
    .watches('Event', policiesIn)
    .watches('NotificationChannel', policiesIn)
    .watches('Silence', policiesIn)
    .watches('Notification', (n) => {
      const policy = n.spec?.policy;
      return policy ? [`${n.metadata.namespace ?? ''}/${policy}`] : [];
    })
    .complete(router);

  const delivery = new DeliveryReconciler({
    store: mgr.store,
    notifications,
    channels,
    recorder: d.recorder,
    log: d.log,
    metrics: d.metrics,
    env: d.env,
    links: d.links,
    delivered: d.home ? new DeliveredKeys(path.join(d.home, 'notifications', 'delivered')) : undefined,
  });
  mgr
    .controller('notification-delivery', { workers: d.deliveryWorkers ?? 4 })
    .for('Notification')
    .onStop(() => delivery.stop())
    .complete(delivery);
  const digester = new DigestReconciler({
    store: mgr.store,
    policies,
    channels,
    notifications,
    sessions: mgr.informer('AgentSession'),
    evaluations: mgr.informer('Evaluation'),
    decisions: mgr.informer('Decision'),
    projects: mgr.informer('Project'),
    pipelines: mgr.informer('Pipeline'),
    sessionPolicies: mgr.informer('SessionPolicy'),
    log: d.log,
    env: d.env,
  });
  // Its own controller: a narrative may take a minute, and routing must not wait for it.
  mgr
    .controller('digest', { workers: 1 })
    .for('NotificationPolicy')
    .onStop(() => digester.stop())
    .complete(digester);
  return { router, delivery, digester };
}
