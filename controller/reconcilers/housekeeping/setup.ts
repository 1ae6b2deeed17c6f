/** What wakes housekeeping: once a minute (never with --once, which is one pass over the sessions). */
import type { Manager } from '../../runtime/manager.js';
import { AUTOPILOT_SESSIONS, EVALUATIONS, EVENTS, HousekeepingReconciler } from './reconciler.js';
import type { Retention } from '../../api/retention.js';

export const SWEEP_MS = 60_000;

export function setup(
  mgr: Manager,
  d: { eventTtlMs?: number; retention?: Partial<Retention> } = {},
): HousekeepingReconciler {
  const reconciler = new HousekeepingReconciler({
    store: mgr.store,
    eventTtlMs: d.eventTtlMs,
    retention: d.retention,
    sessions: mgr.informer('AgentSession'),
  });
  mgr
    .controller('housekeeping', { workers: 1 })
    .every(SWEEP_MS, () => [EVENTS, EVALUATIONS, AUTOPILOT_SESSIONS])
    .complete(reconciler);
  return reconciler;
}
