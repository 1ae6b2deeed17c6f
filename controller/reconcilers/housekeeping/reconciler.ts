/**
 * Housekeeping: deletes Events whose last occurrence is older than their time to live (1 h by
 * default, as in Kubernetes), so the store does not keep every Event ever recorded. One key,
 * `EVENTS`: there is one thing to keep tidy, and the work queue keeps two passes from overlapping.
 */
import { isApiError } from '../../api/errors.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { Store } from '../../store/store.js';

export const EVENTS = 'Event';
export const DEFAULT_EVENT_TTL_MS = 3_600_000;

export class HousekeepingReconciler implements Reconciler {
  constructor(private readonly d: { store: Store; eventTtlMs?: number; now?: () => number }) {}

  async reconcile(key: string): Promise<void> {
    if (key !== EVENTS) return;
    const { items } = await this.d.store.list('Event');
    const cutoff = (this.d.now ?? Date.now)() - (this.d.eventTtlMs ?? DEFAULT_EVENT_TTL_MS);
    for (const e of items) {
      if (Date.parse(String(e.lastTimestamp ?? e.metadata.creationTimestamp)) < cutoff)
        await this.d.store
          .delete({ kind: 'Event', namespace: e.metadata.namespace ?? '', name: e.metadata.name })
          .catch((err: unknown) => {
            if (!isApiError(err, 'NotFound')) throw err; // deleted meanwhile (another pass, a person)
          });
    }
  }
}
