/**
 * What wakes the project reconciler (keyed by Project, `namespace/name`):
 *  - a Project changing;
 *  - an AgentSession changing: its project's key (spec.projectRef), for activeSessions and lastActivity;
 *  - an Evaluation changing: its project's key (spec.projectRef, else its session's), for recentOutcomes;
 *  - every 10 s every Project: its directory can appear or vanish, its repository get commits and
 *    its idle time pass the staleness limit without any object changing. The git observer runs git
 *    only for a repository whose stamp changed, so an idle project costs stats, not a process.
 */
import type { Resource } from '../../api/types.js';
import type { GitObserver } from '../../observers/git.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import { ProjectReconciler } from './reconciler.js';

export const RECHECK_MS = 10_000;

export function setup(mgr: Manager, d: { git: Pick<GitObserver, 'tip'> }): ProjectReconciler {
  const projects = mgr.informer('Project');
  const sessions = mgr.informer('AgentSession');
  const evaluations = mgr.informer('Evaluation');
  const reconciler = new ProjectReconciler({ store: mgr.store, projects, sessions, evaluations, git: d.git });
  const key = (o: Resource, project: string | undefined) =>
    project ? [`${o.metadata.namespace ?? ''}/${project}`] : [];
  const projectOfSession = (o: Resource, name: string | undefined) =>
    name
      ? (sessions.get(o.metadata.namespace, name)?.spec as { projectRef?: string } | undefined)?.projectRef
      : undefined;
  mgr
    .controller('project', { workers: 1 })
    .for('Project')
    .watches('AgentSession', (s) => key(s, (s.spec as { projectRef?: string } | undefined)?.projectRef))
    .watches('Evaluation', (e) => {
      const spec = e.spec as { projectRef?: string; sessionRef?: string } | undefined;
      return key(e, spec?.projectRef ?? projectOfSession(e, spec?.sessionRef));
    })
    .every(RECHECK_MS, () => projects.list().map(queueKey))
    .complete(reconciler);
  return reconciler;
}
