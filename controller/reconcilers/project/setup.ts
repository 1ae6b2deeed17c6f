/**
 * What wakes the project reconciler: a Project changing, and every 10 s every Project (its
 * directory can appear or vanish at any time without any object changing).
 */
import { queueKey, type Manager } from '../../runtime/manager.js';
import { ProjectReconciler } from './reconciler.js';

export const RECHECK_MS = 10_000;

export function setup(mgr: Manager): ProjectReconciler {
  const projects = mgr.informer('Project');
  const reconciler = new ProjectReconciler({ store: mgr.store, projects });
  mgr
    .controller('project', { workers: 1 })
    .for('Project')
    .every(RECHECK_MS, () => projects.list().map(queueKey))
    .complete(reconciler);
  return reconciler;
}
