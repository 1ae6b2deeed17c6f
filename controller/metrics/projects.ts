/**
 * Project object metrics (kube-state-metrics style), labelled {namespace, project}, from the Project
 * objects in the informer cache at scrape time.
 *
 * orchctl_project_stale is per project rather than a count from Autopilot status.staleProjects: it
 * names which projects are stale, it exists without any Autopilot (staleness is the Project's own
 * condition, set by the project reconciler), it follows a session starting or ending at once rather
 * than at the next think, and two Autopilots selecting one project do not count it twice.
 */
import type { Registry } from 'prom-client';
import type { Project } from '../api/project.js';
import { ScrapeFamily } from './family.js';

export function registerProjectMetrics(registry: Registry, projects: () => Iterable<Project>): void {
  new ScrapeFamily(registry, {
    name: 'orchctl_project_stale',
    help:
      'Whether the Project is Stale (1: its Stale condition is True — active, not blocked, nothing running, idle ' +
      'past staleAfter) or not (0); none before the project reconciler has set the condition.',
    type: 'gauge',
    labelNames: ['namespace', 'project'],
    objects: projects,
    id: (p) => [p.metadata.namespace ?? '', p.metadata.name],
    series: (p, emit) => {
      const c = p.status?.conditions?.find((x) => x.type === 'Stale');
      if (c) emit([], c.status === 'True' ? 1 : 0);
    },
  });
}
