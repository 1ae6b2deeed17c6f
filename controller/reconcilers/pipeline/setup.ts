/**
 * What wakes the pipeline reconciler (key: a Pipeline, `namespace/name`):
 *  - the Pipeline changing (its spec, or `orchctl pipeline resume`'s annotation);
 *  - an AgentSession it owns changing (ownerReference with controller: true): its owner's key;
 *  - every 30 s every Pipeline, as a safety net: every decision is read off the objects, none waits on a timer.
 * Two workers: one pipeline's store round trips (a resume posts to several sessions) do not hold up the others.
 */
import { owningPipeline } from '../../api/pipeline.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { PipelineReconciler } from './reconciler.js';

export const RESYNC_MS = 30_000;

export function setup(
  mgr: Manager,
  d: Pick<ControllerServices, 'recorder'> & { now?: () => number },
): PipelineReconciler {
  const pipelines = mgr.informer('Pipeline');
  const reconciler = new PipelineReconciler({
    store: mgr.store,
    sessions: mgr.informer('AgentSession'),
    recorder: d.recorder,
    now: d.now,
  });
  mgr
    .controller('pipeline', { workers: 2 })
    .for('Pipeline')
    .owns('AgentSession', (s) => {
      const owner = owningPipeline(s);
      return owner ? [`${s.metadata.namespace ?? ''}/${owner}`] : [];
    })
    .every(RESYNC_MS, () => pipelines.list().map(queueKey))
    .complete(reconciler);
  return reconciler;
}
