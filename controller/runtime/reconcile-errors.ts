/**
 * A reconcile that keeps failing must show on its object, not only in the controller's log:
 * a `Reconciled=False` condition (reason ReconcileError, the error as message) and a Warning
 * Event. Rate-limited per object — again only when the message changes or after `repeatMs` — so
 * a failure that repeats every backoff step writes nothing new. The first success afterwards
 * sets the condition back to True.
 */
import { OneOffReason } from '../api/event-reasons.js';
import { setCondition } from '../api/conditions.js';
import { redact } from '../api/redact.js';
import type { Condition, Resource } from '../api/types.js';
import type { EventRecorder } from '../client/events.js';
import { writeStatusMerged } from '../client/status.js';
import type { Store } from '../store/store.js';

export class ReconcileErrorReporter {
  private readonly reported = new Map<string, { message: string; at: number }>();

  constructor(
    private readonly d: {
      store: Store;
      recorder: EventRecorder;
      kind: string;
      /** The object as cached (informer), to see a Reconciled=False left by an earlier process. */
      cached: (key: string) => Resource | undefined;
      repeatMs?: number;
    },
  ) {}

  async failed(key: string, e: unknown): Promise<void> {
    const message = redact((e as Error)?.message ?? String(e)).slice(0, 1024);
    const last = this.reported.get(key);
    if (last && last.message === message && Date.now() - last.at < (this.d.repeatMs ?? 5 * 60_000)) return;
    this.reported.set(key, { message, at: Date.now() });
    const obj = await this.get(key);
    if (!obj) return;
    await this.setReconciled(obj, 'False', 'ReconcileError', message);
    await this.d.recorder.record(obj, 'Warning', OneOffReason.ReconcileError, `reconcile failed: ${message}`);
  }

  async succeeded(key: string): Promise<void> {
    const known = this.reported.delete(key);
    const cached = this.d.cached(key);
    const conditions = (cached?.status as { conditions?: Condition[] } | undefined)?.conditions;
    const cond = conditions?.find((c) => c.type === 'Reconciled');
    if (!known && cond?.status !== 'False') return;
    const obj = await this.get(key);
    if (obj) await this.setReconciled(obj, 'True', 'Reconciled', '');
  }

  private async get(key: string): Promise<Resource | undefined> {
    const [namespace, name] = key.split('/');
    return this.d.store.get({ kind: this.d.kind, namespace, name });
  }

  private async setReconciled(obj: Resource, status: 'True' | 'False', reason: string, message: string): Promise<void> {
    const s = structuredClone((obj.status ?? {}) as Record<string, unknown> & { conditions?: Condition[] });
    s.conditions ??= [];
    const observedGeneration = obj.metadata.generation;
    setCondition(s.conditions, { type: 'Reconciled', status, reason, message, observedGeneration });
    await writeStatusMerged(this.d.store, obj, s);
  }
}
