/**
 * What wakes the node reconciler: the caches being filled (admission reads spec.unschedulable
 * from that first pass, so it runs before any session is reconciled), a 10 s heartbeat, a Project
 * added, removed or moved to another path (status.projects is where the scheduler places its
 * sessions: a new Project must not wait for the heartbeat), and with --once the end of the pass.
 */
import { HEARTBEAT_MS } from '../../api/node.js';
import type { Manager } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { type NodeDeps, NodeReconciler } from './reconciler.js';

export interface NodeSetupDeps extends ControllerServices {
  versions: NodeDeps['versions'];
  /** This process as the Node reports it (the lease holder). */
  controller: NodeDeps['controller'];
  /** Kill tmux sessions on the socket that this store cannot account for (orphans). */
  gcOrphans: boolean;
  /** The node's name, labels and maxSessions (`orchctl node --name --label --max-sessions`). */
  nodeName?: string;
  labels?: Record<string, string>;
  maxSessions?: number;
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
    nodeName: d.nodeName,
    labels: d.labels,
    maxSessions: d.maxSessions,
    projects: mgr.informer('Project'),
  });
  mgr.onSynced('node status', () => node.reconcile());
  // Only a change of a Project's path matters here, not its status (written on every session change).
  const paths = new Map<string, string | undefined>();
  mgr
    .controller('node', { workers: 1 })
    .watches('Project', (o, type) => {
      const k = `${o.metadata.namespace}/${o.metadata.name}`;
      const path = type === 'DELETED' ? undefined : o.spec?.path;
      const known = paths.has(k);
      if (type === 'DELETED' ? !known : known && paths.get(k) === path) return [];
      if (type === 'DELETED') paths.delete(k);
      else paths.set(k, path);
      return [node.name];
    })
    .every(HEARTBEAT_MS, () => [node.name])
    .complete(node);
  mgr.onDrained('node status', () => node.reconcile());
  return node;
}
