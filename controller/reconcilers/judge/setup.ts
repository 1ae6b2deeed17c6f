/**
 * What wakes the judge (keyed by session, `namespace/name`):
 *  - any change to an AgentSession (a run ended, the policy's sampling now says judge it, ...);
 *  - any change to an Evaluation: its session's key (`spec.sessionRef`), so an `orchctl judge`
 *    Evaluation is picked up at once and a verdict reaches the session's status;
 *  - when the controllers start and every resync period, every session but those the cache shows
 *    with nothing to judge (JudgeReconciler.needsPass: no Evaluation, no judging policy);
 *  - a background judgement finishing (the reconciler enqueues its session).
 * --once waits for judgements in flight; stopping the controller cancels them (the next
 * controller judges those Evaluations again).
 */
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { ControllerServices } from '../services.js';
import { type JudgeMetricsHooks, JudgeReconciler, policyLimiter } from './reconciler.js';

export interface JudgeSetupDeps extends ControllerServices {
  resyncMs: number;
  metrics?: JudgeMetricsHooks;
}

export function setup(mgr: Manager, d: JudgeSetupDeps): JudgeReconciler {
  const sessions = mgr.informer('AgentSession');
  const policies = mgr.informer('SessionPolicy');
  const ctl = mgr.controller('judge', { workers: 2 });
  const judge = new JudgeReconciler({
    store: mgr.store,
    policies,
    evaluations: mgr.informer('Evaluation'),
    sessions,
    recorder: d.recorder,
    home: d.home,
    log: d.log,
    enqueue: ctl.enqueue,
    // Judgements in flight, controller-wide: the smallest judge.maxConcurrent of any policy, else 2.
    limiter: policyLimiter(policies),
    metrics: d.metrics,
  });
  ctl
    .for('AgentSession')
    .owns('Evaluation', (e) => {
      const ref = (e.spec as { sessionRef?: string } | undefined)?.sessionRef;
      return ref ? [`${e.metadata.namespace ?? ''}/${ref}`] : [];
    })
    .every(
      d.resyncMs,
      () =>
        sessions
          .list()
          .map(queueKey)
          .filter((k) => judge.needsPass(k)),
      { atStart: true },
    )
    .inFlight(() => judge.pending)
    .onStop(() => judge.stop())
    .complete(judge);
  return judge;
}
