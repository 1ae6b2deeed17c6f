/** What wakes housekeeping: once a minute (never with --once, which is one pass over the sessions). */
import type { Manager } from '../../runtime/manager.js';
import { EVENTS, HousekeepingReconciler } from './reconciler.js';

export const SWEEP_MS = 60_000;

export function setup(mgr: Manager, d: { eventTtlMs?: number } = {}): HousekeepingReconciler {
  const reconciler = new HousekeepingReconciler({ store: mgr.store, eventTtlMs: d.eventTtlMs });
  mgr
    .controller('housekeeping', { workers: 1 })
    .every(SWEEP_MS, () => [EVENTS])
    .complete(reconciler);
  return reconciler;
}
