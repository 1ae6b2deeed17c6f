/**
 * Keeps each Project's status true to its directory, its repository and its sessions: `Ready`
 * (spec.path is a directory, else PathNotFound — so `get projects` says why its sessions wait),
 * and what a planner reads (plan.ts): lastActivity, activeSessions, `Stale`, recentOutcomes.
 * Observe (informer caches, one stat, the git observer's cached tip), plan, one status write —
 * skipped when nothing changed. Keyed by Project (`namespace/name`); what wakes it is in setup.ts.
 */
import fs from 'node:fs';
import type { Project } from '../../api/project.js';
import { writeStatusMerged } from '../../client/status.js';
import type { GitObserver } from '../../observers/git.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { planProject } from './plan.js';

export interface ProjectDeps {
  store: Store;
  projects: Pick<Informer<'Project'>, 'get'>;
  sessions: Pick<Informer<'AgentSession'>, 'list'>;
  evaluations: Pick<Informer<'Evaluation'>, 'list'>;
  /** Spawns git only when the repository changed since its last look (a stat-based stamp). */
  git: Pick<GitObserver, 'tip'>;
  now?: () => number;
}

export class ProjectReconciler implements Reconciler {
  constructor(private readonly d: ProjectDeps) {}

  async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const project = this.d.projects.get(namespace, name);
    if (project) await this.reconcileProject(project); // gone: nothing to keep current
  }

  private async reconcileProject(project: Project): Promise<void> {
    const namespace = project.metadata.namespace ?? 'default';
    const name = project.metadata.name;
    const dir = project.spec?.path;
    let exists = false;
    try {
      exists = !!dir && fs.statSync(dir).isDirectory();
    } catch {
      exists = false;
    }
    const sessions = this.d.sessions.list(namespace).filter((s) => s.spec?.projectRef === name);
    const ours = new Set(sessions.map((s) => s.metadata.name));
    const evaluations = this.d.evaluations
      .list(namespace)
      .filter((e) => e.spec?.projectRef === name || ours.has(e.spec?.sessionRef ?? ''));
    const git = exists && dir ? await this.d.git.tip(dir) : { isGitRepo: false };
    const status = planProject({ project, sessions, evaluations, exists, git, now: (this.d.now ?? Date.now)() });
    await writeStatusMerged(this.d.store, project, status);
  }
}
