/**
 * Keeps each Project's `Ready` condition true to its path: True when `spec.path` is a directory,
 * False (reason PathNotFound) when it is missing or not a directory — so `orchctl get projects`
 * and `describe` say why its sessions wait, instead of the sessions restarting in a loop.
 * Keyed by Project (`namespace/name`); what wakes it is in setup.ts.
 */
import fs from 'node:fs';
import { setCondition } from '../../api/conditions.js';
import type { Condition, Resource } from '../../api/types.js';
import { writeStatusMerged } from '../../client/status.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';

export class ProjectReconciler implements Reconciler {
  constructor(private readonly d: { store: Store; projects: Pick<Informer, 'get'> }) {}

  async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const project = this.d.projects.get(namespace, name);
    if (project) await this.reconcileProject(project); // gone: nothing to keep current
  }

  private async reconcileProject(project: Resource): Promise<void> {
    const dir = (project.spec as { path?: string } | undefined)?.path;
    let ok = false;
    try {
      ok = !!dir && fs.statSync(dir).isDirectory();
    } catch {
      ok = false;
    }
    const status = structuredClone((project.status ?? {}) as Record<string, unknown> & { conditions?: Condition[] });
    status.conditions ??= [];
    setCondition(status.conditions, {
      type: 'Ready',
      status: ok ? 'True' : 'False',
      reason: ok ? 'PathExists' : 'PathNotFound',
      message: ok ? '' : `${dir ?? '(no path)'} does not exist or is not a directory; its sessions wait until it does`,
      observedGeneration: project.metadata.generation,
    });
    status.observedGeneration = project.metadata.generation;
    await writeStatusMerged(this.d.store, project, status);
  }
}
