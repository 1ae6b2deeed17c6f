/**
 * What wakes the autopilot (key: an Autopilot, `namespace/name`), besides its own interval
 * (requeueAfter until status.nextThinkTime):
 *  - the Autopilot changing (its spec: think again at once);
 *  - a session of its namespace ending, or escalating, after its last think;
 *  - an Evaluation of its namespace judged after its last think;
 *  - a Decision of its own that a person approved or rejected.
 * The mappers compare times with the Autopilot's status, so the many status writes of running
 * sessions do not each cost a reconcile. One worker: one think at a time (an LLM planner is slow
 * and the seed's rule is never two thinks at once).
 */
import type { AutopilotMetricsHooks } from '../../api/metrics-hooks.js';
import type { Resource } from '../../api/types.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { endSeenAt } from './plan.js';
import { type AutopilotDeps, AutopilotReconciler } from './reconciler.js';

export interface AutopilotSetupDeps extends Pick<ControllerServices, 'log'> {
  metrics?: AutopilotMetricsHooks;
  plannerFor?: AutopilotDeps['plannerFor'];
  now?: () => number;
}

export function setup(mgr: Manager, d: AutopilotSetupDeps): AutopilotReconciler {
  const autopilots = mgr.informer('Autopilot');
  const reconciler = new AutopilotReconciler({
    store: mgr.store,
    autopilots,
    projects: mgr.informer('Project'),
    sessions: mgr.informer('AgentSession'),
    evaluations: mgr.informer('Evaluation'),
    decisions: mgr.informer('Decision'),
    policies: mgr.informer('SessionPolicy'),
    nodes: mgr.informer('Node'),
    log: d.log,
    metrics: d.metrics,
    plannerFor: d.plannerFor,
    now: d.now,
  });
  /** The namespace's autopilots whose last think is older than `time`. */
  const thoughtBefore = (o: Resource, time: string | undefined) => {
    if (!time) return [];
    return autopilots
      .list(o.metadata.namespace ?? '')
      .filter((ap) => !ap.status?.lastThink || Date.parse(time) > Date.parse(ap.status.lastThink.time))
      .map(queueKey);
  };
  mgr
    .controller('autopilot', { workers: 1 })
    .for('Autopilot')
    .watches('AgentSession', (o) => {
      const st = o.status;
      const escalated = st?.conditions?.find((c) => c.type === 'Escalated' && c.status === 'True');
      return [...new Set([...thoughtBefore(o, endSeenAt(o)), ...thoughtBefore(o, escalated?.lastTransitionTime)])];
    })
    .watches('Evaluation', (o) => thoughtBefore(o, o.status?.evaluatedAt))
    .watches('Decision', (dec) => {
      return dec.status?.phase === 'PendingApproval' && dec.spec?.approval
        ? [`${dec.metadata.namespace ?? ''}/${dec.spec.autopilot}`]
        : [];
    })
    .onStop(() => reconciler.stop())
    .complete(reconciler);
  return reconciler;
}
