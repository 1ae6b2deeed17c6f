/**
 * The SessionPolicy reconciler: status.budget from the ledgers of the sessions a policy governs
 * (plan.ts, pure), one status write when it changed, and the BudgetExceeded / BudgetAvailable Event
 * on the policy when the budget is crossed, in the transaction of the write that records the
 * crossing (a controller killed before it tells it then, once). A crossing is planned on the stored
 * policy and the write is a compare-and-swap on it: never told twice from a stale read.
 * The session reconciler reads status.budget from its informer: it pauses or stops the sessions
 * at their next idle point and its admission refuses new ones (reconcilers/session/pause.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import type { SessionPolicy } from '../../api/kinds.js';
import type { EventRecorder } from '../../client/events.js';
import { isApiError } from '../../api/errors.js';
import { isEventRace } from '../../client/events.js';
import { retryOnConflict } from '../../store/retry.js';
import { isFenced, type WriteOp } from '../../store/store.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { planBudget } from './plan.js';

export interface PolicyDeps {
  store: Store;
  policies: Pick<Informer<'SessionPolicy'>, 'get' | 'list'>;
  sessions: Pick<Informer<'AgentSession'>, 'list'>;
  recorder: EventRecorder;
  now?: () => number;
}

/** The figures of a budget that was not crossed are written at most this often. */
export const THROTTLE_MS = 10_000;
/** Writes tried (each after a fresh read and plan) before the pass fails and is retried by the queue. */
const WRITE_ATTEMPTS = 8;

export class PolicyReconciler implements Reconciler {
  /** When this process last wrote each policy's status.budget. */
  private readonly written = new Map<string, number>();

  constructor(private readonly d: PolicyDeps) {}

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    const cached = this.d.policies.get(namespace, name);
    if (!cached || cached.metadata.deletionTimestamp) return;
    const now = (this.d.now ?? Date.now)();
    const planFor = (policy: SessionPolicy) =>
      planBudget({
        policy,
        sessions: this.d.sessions.list(namespace),
        policies: this.d.policies.list(),
        now,
      });
    let policy = cached;
    let out = planFor(policy);
    if (!out.budget && !policy.status?.budget) return;
    const requeueAfterMs = out.requeueAfterMs;
    if (isDeepStrictEqual(out.budget, policy.status?.budget))
      return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
    // A write wakes every session of the namespace (they read the budget): the figures alone are
    // written at most every THROTTLE_MS; crossing the budget, either way, at once.
    const crossed = !!out.budget?.exceeded !== !!policy.status?.budget?.exceeded || !out.budget;
    const wait = (this.written.get(key) ?? 0) + THROTTLE_MS - now;
    if (!crossed && wait > 0) return { requeueAfterMs: Math.min(wait, requeueAfterMs ?? wait) };
    // Someone wrote the policy meanwhile (a person's edit, or this reconciler's own earlier write read
    // stale): read it again and plan again, so a crossing is told once.
    const gone = await retryOnConflict(
      async (attempt) => {
        // A crossing is decided on the stored policy, not the cache: a pass woken before the watch
        // brought this reconciler's own last write would tell the same crossing again (issue 25).
        if (out.events.length || attempt > 0) {
          const fresh = await this.d.store.get({ kind: 'SessionPolicy', namespace, name });
          if (!fresh || fresh.metadata.deletionTimestamp) return true;
          policy = fresh;
          out = planFor(policy);
          if (isDeepStrictEqual(out.budget, policy.status?.budget)) return false;
        }
        const status = { ...(policy.status ?? {}), budget: out.budget };
        if (!out.budget) delete status.budget;
        const ops: WriteOp[] = [
          { op: 'updateStatus', object: { ...policy, status } },
          ...(out.events.length ? await this.d.recorder.ops(policy, out.events) : []),
        ];
        await this.d.store.txn(ops);
        return false;
      },
      { attempts: WRITE_ATTEMPTS, retryOn: (e) => !isFenced(e) && (isApiError(e, 'Conflict') || isEventRace(e)) },
    );
    if (gone) return;
    this.written.set(key, now);
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  }
}
