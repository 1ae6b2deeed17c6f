/**
 * What wakes the node reconciler: the caches being filled (admission reads spec.unschedulable
 * from that first pass, so it runs before any session is reconciled), a 10 s heartbeat, and with
 * --once the end of the pass (the final session count).
 */
import type { Manager } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { type NodeDeps, NodeReconciler } from './reconciler.js';

export const HEARTBEAT_MS = 10_000;

export interface NodeSetupDeps extends ControllerServices {
  versions: NodeDeps['versions'];
  /** This process as the Node reports it (the lease holder). */
  controller: NodeDeps['controller'];
  /** Kill tmux sessions on the socket that this store cannot account for (orphans). */
  gcOrphans: boolean;
}

export function setup(mgr: Manager, d: NodeSetupDeps): NodeReconciler {
  const node = new NodeReconciler({
    store: mgr.store,
    sessions: mgr.informer('AgentSession'),
    panes: d.panes,
    tmux: d.tmux,
    host: d.host,
    versions: d.versions,
    controller: d.controller,
    recorder: d.recorder,
    log: d.log,
    storeUid: d.storeUid,
    gcOrphans: d.gcOrphans,
  });
  mgr.onSynced('node status', () => node.reconcile());
  mgr
    .controller('node', { workers: 1 })
    .every(HEARTBEAT_MS, () => [node.name])
    .complete(node);
  mgr.onDrained('node status', () => node.reconcile());
  return node;
}
