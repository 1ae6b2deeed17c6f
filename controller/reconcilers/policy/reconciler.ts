/**
 * The SessionPolicy reconciler: status.budget from the ledgers of the sessions a policy governs
 * (plan.ts, pure), one merged status write when it changed, and the BudgetExceeded /
 * BudgetAvailable Event on the policy when the budget is crossed, in the transaction of the write
 * that records the crossing (a controller killed before it tells it then, once).
 * The session reconciler reads status.budget from its informer: it pauses or stops the sessions
 * at their next idle point and its admission refuses new ones (reconcilers/session/pause.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import type { EventRecorder } from '../../client/events.js';
import { writeStatusMerged } from '../../client/status.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { planBudget } from './plan.js';

export interface PolicyDeps {
  store: Store;
  policies: Pick<Informer, 'get' | 'list'>;
  sessions: Pick<Informer, 'list'>;
  recorder: EventRecorder;
  now?: () => number;
}

/** The figures of a budget that was not crossed are written at most this often. */
export const THROTTLE_MS = 10_000;

export class PolicyReconciler implements Reconciler {
  /** When this process last wrote each policy's status.budget. */
  private readonly written = new Map<string, number>();

  constructor(private readonly d: PolicyDeps) {}

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const policy = this.d.policies.get(namespace, name) as SessionPolicy | undefined;
    if (!policy || policy.metadata.deletionTimestamp) return;
    const now = (this.d.now ?? Date.now)();
    const out = planBudget({
      policy,
      sessions: this.d.sessions.list(namespace) as AgentSession[],
      policies: this.d.policies.list() as SessionPolicy[],
      now,
    });
    if (!out.budget && !policy.status?.budget) return;
    const requeueAfterMs = out.requeueAfterMs;
    if (!isDeepStrictEqual(out.budget, policy.status?.budget)) {
      // A write wakes every session of the namespace (they read the budget): the figures alone are
      // written at most every THROTTLE_MS; crossing the budget, either way, at once.
      const crossed = !!out.budget?.exceeded !== !!policy.status?.budget?.exceeded || !out.budget;
      const wait = (this.written.get(key) ?? 0) + THROTTLE_MS - now;
      if (!crossed && wait > 0) return { requeueAfterMs: Math.min(wait, requeueAfterMs ?? wait) };
      const status = { ...(policy.status ?? {}), budget: out.budget };
      if (!out.budget) delete status.budget;
      await writeStatusMerged(this.d.store, policy, status, 8, undefined, {
        recorder: this.d.recorder,
        events: out.events,
      });
      this.written.set(key, now);
    }
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  }
}
