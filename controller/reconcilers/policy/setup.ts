/**
 * What wakes the SessionPolicy reconciler (keyed by SessionPolicy, `namespace/name`):
 *  - a SessionPolicy changing (a budget set, raised or removed): its own key;
 *  - an AgentSession changing (its ledger grew, it was deleted, its labels moved it): the policy
 *    with a budget it resolves to — and, since a label change moves it between policies, every
 *    policy with a budget in its namespace (few, and the plan is a sum over the cache);
 *  - the oldest counted hour leaving the window (the reconciler's requeue), and once a minute every
 *    policy with a budget, so a budget recovers without any write.
 */
import type { Resource } from '../../api/types.js';
import type { EventRecorder } from '../../client/events.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import { PolicyReconciler } from './reconciler.js';

export const RECHECK_MS = 60_000;

export function setup(mgr: Manager, d: { recorder: EventRecorder }): PolicyReconciler {
  const policies = mgr.informer('SessionPolicy');
  const sessions = mgr.informer('AgentSession');
  const reconciler = new PolicyReconciler({ store: mgr.store, policies, sessions, recorder: d.recorder });
  const budgeted = (ns?: string) =>
    policies
      .list(ns)
      .filter((p) => p.spec?.budget || p.status?.budget)
      .map(queueKey);
  mgr
    .controller('sessionpolicy', { workers: 1 })
    .for('SessionPolicy')
    .watches('AgentSession', (s: Resource) => budgeted(s.metadata.namespace ?? ''))
    .every(RECHECK_MS, () => budgeted())
    .complete(reconciler);
  return reconciler;
}
