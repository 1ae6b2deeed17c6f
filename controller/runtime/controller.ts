/**
 * A controller in the controller-runtime mould: a reconciler, a work queue and N workers.
 * Reconcile results map to the queue as in controller-runtime's reconcileHandler: an error →
 * rate-limited requeue; `requeueAfter` → forget the backoff and schedule; otherwise forget.
 */
import type { WorkQueue } from './workqueue.js';

export interface Result {
  requeueAfterMs?: number;
}

export interface Reconciler {
  // biome-ignore lint/suspicious/noConfusingVoidType: a reconcile that asks for nothing returns nothing.
  reconcile(key: string): Promise<Result | void>;
}

export interface ControllerMetricsHooks {
  onReconcile?(result: 'success' | 'error' | 'requeue_after', seconds: number): void;
  onActiveWorkers?(n: number): void;
}

export class Controller {
  private active = 0;
  private workers: Promise<void>[] = [];

  constructor(
    readonly name: string,
    readonly queue: WorkQueue,
    private readonly reconciler: Reconciler,
    private readonly opts: {
      workers: number;
      log: (msg: string, err?: unknown) => void;
      metrics?: ControllerMetricsHooks;
      /** Told of every failed and successful reconcile (e.g. to put a failure on the object). */
      errors?: { failed(key: string, e: unknown): Promise<void>; succeeded(key: string): Promise<void> };
    },
  ) {}

  start(): void {
    for (let i = 0; i < this.opts.workers; i++) this.workers.push(this.worker());
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.opts.metrics?.onActiveWorkers?.(++this.active);
      const t0 = performance.now();
      try {
        const r = await this.reconciler.reconcile(key);
        const secs = (performance.now() - t0) / 1000;
        this.queue.forget(key);
        if (r?.requeueAfterMs !== undefined && r.requeueAfterMs >= 0) {
          this.queue.addAfter(key, Math.max(1, r.requeueAfterMs));
          this.opts.metrics?.onReconcile?.('requeue_after', secs);
        } else this.opts.metrics?.onReconcile?.('success', secs);
        await this.opts.errors
          ?.succeeded(key)
          .catch((e2: unknown) => this.opts.log(`${this.name}: ${key}: recording success failed`, e2));
      } catch (e) {
        this.opts.metrics?.onReconcile?.('error', (performance.now() - t0) / 1000);
        this.opts.log(`${this.name}: reconcile ${key} failed (retry ${this.queue.numRequeues(key) + 1})`, e);
        this.queue.addRateLimited(key);
        await this.opts.errors
          ?.failed(key, e)
          .catch((e2: unknown) => this.opts.log(`${this.name}: ${key}: recording the failure failed`, e2));
      } finally {
        this.queue.done(key);
        this.opts.metrics?.onActiveWorkers?.(--this.active);
      }
    }
  }

  /** Stops taking work and waits for the reconciles in flight. */
  async stop(): Promise<void> {
    this.queue.shutdown();
    await Promise.all(this.workers);
  }
}
