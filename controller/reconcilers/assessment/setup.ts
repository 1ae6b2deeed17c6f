/**
 * What wakes the assessment reconciler (keyed by session, `namespace/name`):
 *  - an append to a session's event log (the agent did something: assess it now);
 *  - when the controllers start and every resync period, every session (nothing else: a status
 *    change alone brings no new events to assess). A session whose last pass left nothing to do
 *    and that has not changed since (its log, its object, its policy) costs the resync no read
 *    (AssessmentReconciler.stillSettled), nor a queue entry: the resync leaves it out; the first pass
 *    after a start reads every session.
 * Its interventions go into the session through verified delivery, as `orchctl send` does.
 */
import type { SessionPolicy } from '../../api/kinds.js';
import { sendToSession } from '../../agents/send.js';
import { createBackend, judgeConfigOf, resolveJudgeConfig } from '../../llm/index.js';
import { type Manager, queueKey } from '../../runtime/manager.js';
import type { EventLogs } from '../../store/eventlog.js';
import type { ControllerServices } from '../services.js';
import { type AssessmentMetricsHooks, AssessmentReconciler, type SendFn } from './reconciler.js';

export interface AssessmentSetupDeps extends ControllerServices {
  resyncMs: number;
  /** The per-session event logs the session reconciler fills. */
  logs: EventLogs;
  metrics?: AssessmentMetricsHooks;
}

export function setup(mgr: Manager, d: AssessmentSetupDeps): AssessmentReconciler {
  const sessions = mgr.informer('AgentSession');
  const send: SendFn = async (key, text, origin) => {
    const [namespace, name] = key.split('/');
    const r = await sendToSession(mgr.store, d.tmux, namespace, name, { text, force: origin === 'intervention' });
    d.log.info(`agentsession ${key}: ${origin} ${r.delivered ? 'delivered' : 'not confirmed'} (${r.message})`);
    return r;
  };
  const assess = new AssessmentReconciler({
    store: mgr.store,
    policies: mgr.informer('SessionPolicy'),
    sessions,
    home: d.home,
    send,
    recorder: d.recorder,
    log: d.log,
    metrics: d.metrics,
    changes: { sessions, onAppend: (fn) => d.logs.onAppend(fn) },
    summaryBackend: (policy: SessionPolicy | undefined) => {
      try {
        return createBackend(resolveJudgeConfig(judgeConfigOf(policy)));
      } catch {
        return undefined; // the offline summary stands in
      }
    },
  });
  mgr
    .controller('assessment', { workers: 2 })
    .watches({ subscribe: (h: (key: string) => void) => d.logs.onAppend(h) }, (key) => [key])
    .every(
      d.resyncMs,
      () =>
        sessions
          .list()
          .map(queueKey)
          .filter((k) => assess.needsPass(k)),
      { atStart: true },
    )
    .complete(assess);
  return assess;
}
