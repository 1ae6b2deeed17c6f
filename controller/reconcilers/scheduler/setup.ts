/**
 * What wakes the scheduler (keyed by AgentSession, `namespace/name`):
 *  - a session that needs a binding (new, or unbound after its node was lost), or one waiting on a
 *    node that lacks its project's path (plan.ts betterPlace);
 *  - any Node or Project changing: every session still waiting (a node became Ready, freed memory,
 *    reported a repository, got a label; a project's selector changed);
 *  - every 15 s every session still waiting, whatever changed (a SessionPolicy's floor, say).
 * Sessions that are placed are never looked at again here, so a steady state costs nothing.
 */
import type { SchedulerMetricsHooks } from '../../api/metrics-hooks.js';
import type { AgentSession } from '../../api/session.js';
import type { EventRecorder } from '../../client/events.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { TxnOptions } from '../../store/store.js';
import { needsBinding } from './plan.js';
import { SchedulerReconciler } from './reconciler.js';

export const RETRY_MS = 15_000;

export interface SchedulerSetupDeps {
  recorder: EventRecorder;
  metrics?: SchedulerMetricsHooks;
  /** Options of every write (the control plane's lease fence). */
  txnOptions?: () => TxnOptions;
  /** How long after the start "no Node registered" is not yet an answer (tests; reconciler.ts). */
  noNodesGraceMs?: number;
}

/** Waiting for a place: unbound, or bound where its project's path is missing (it may move). */
const waiting = (s: AgentSession) => needsBinding(s) || s.status?.reason === 'ProjectPathNotFound';

export function setup(mgr: Manager, d: SchedulerSetupDeps): SchedulerReconciler {
  const sessions = mgr.informer('AgentSession');
  const reconciler = new SchedulerReconciler({
    store: mgr.store,
    sessions,
    nodes: mgr.informer('Node'),
    projects: mgr.informer('Project'),
    policies: mgr.informer('SessionPolicy'),
    recorder: d.recorder,
    metrics: d.metrics,
    txnOptions: d.txnOptions,
    noNodesGraceMs: d.noNodesGraceMs,
  });
  const allWaiting = () => sessions.list().filter(waiting).map(queueKey);
  mgr
    .controller('scheduler', { workers: 1 })
    .watches('AgentSession', (s, type) => (type !== 'DELETED' && waiting(s) ? [queueKey(s)] : []))
    .watches('Node', allWaiting)
    .watches('Project', allWaiting)
    .every(RETRY_MS, allWaiting, { atStart: true })
    .complete(reconciler);
  return reconciler;
}
