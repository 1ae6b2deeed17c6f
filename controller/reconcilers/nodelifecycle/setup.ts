/**
 * What wakes node lifecycle (keyed by Node, `/name`): a Node changing (its heartbeat, a condition),
 * and every 2 s every Node — a lease runs out without any object changing, and a lease renewal is
 * no object change either (leases are read, not watched). Each reconcile also asks to come back
 * exactly when the node's lease would run out or its grace ends (plan.ts). The pass over a live,
 * Ready node looks only at its sessions marked NodeLost (an index of the session cache): it does not
 * go over every session every 2 s.
 */
import type { EventRecorder } from '../../client/events.js';
import type { Manager } from '../../runtime/manager.js';
import type { TxnOptions } from '../../store/store.js';
import { nodeKeys, NodeLifecycleReconciler } from './reconciler.js';

/** How often leases are read: the lag between a renewal and this process seeing it. */
export const MONITOR_MS = 2000;

export interface NodeLifecycleSetupDeps {
  recorder: EventRecorder;
  /** From a node's last renewal seen to unbinding its sessions (default 40 s; plan.ts checkGrace). */
  graceMs?: number;
  /** Options of every session write (the control plane's lease fence). */
  txnOptions?: () => TxnOptions;
}

export function setup(mgr: Manager, d: NodeLifecycleSetupDeps): NodeLifecycleReconciler {
  const nodes = mgr.informer('Node');
  const reconciler = new NodeLifecycleReconciler({
    store: mgr.store,
    nodes,
    sessions: mgr.informer('AgentSession'),
    recorder: d.recorder,
    graceMs: d.graceMs,
    txnOptions: d.txnOptions,
    storeReturnedAt: () => mgr.storeReturnedAt(),
  });
  mgr
    .controller('nodelifecycle', { workers: 1 })
    .for('Node')
    .every(MONITOR_MS, () => nodeKeys(nodes), { atStart: true })
    .complete(reconciler);
  return reconciler;
}
