/**
 * An informer: list a kind once, then keep an in-memory cache current from the store's watch,
 * calling handlers on every change. On a compacted watch (Gone) it lists again, like client-go.
 */
import { isApiError } from '../api/errors.js';
import type { ObjectOf } from '../api/kinds.js';
import type { Resource } from '../api/types.js';
import type { Store, WatchEventType, WatchHandle } from '../store/store.js';

export type ChangeHandler<T extends Resource = Resource> = (type: WatchEventType, obj: T) => void;

const cacheKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

/** The informer of kind `K`: its cache and handlers hold that kind's type (api/kinds.ts KindMap). */
export class Informer<K extends string = string> {
  private readonly items = new Map<string, ObjectOf<K>>();
  /** Told only of objects of kind K; kept as any object's handlers so that Informer<K> is an Informer. */
  private readonly handlers: ChangeHandler[] = [];
  private handle?: WatchHandle;
  private stopped = false;

  constructor(
    private readonly store: Store,
    readonly kind: K,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  onChange(h: ChangeHandler<ObjectOf<K>>): void {
    this.handlers.push(h as ChangeHandler);
  }

  async start(): Promise<void> {
    const { items, revision } = await this.store.list(this.kind);
    const seen = new Set<string>();
    for (const o of items) {
      const k = cacheKey(o.metadata.namespace, o.metadata.name);
      seen.add(k);
      const old = this.items.get(k);
      this.items.set(k, o);
      if (old?.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit(old ? 'MODIFIED' : 'ADDED', o);
    }
    for (const [k, o] of this.items) {
      if (seen.has(k)) continue;
      this.items.delete(k);
      this.emit('DELETED', o);
    }
    this.handle = this.store.watch(
      { kind: this.kind, fromRevision: revision },
      (ev) => {
        const k = cacheKey(ev.object.metadata.namespace, ev.object.metadata.name);
        if (ev.type === 'DELETED') this.items.delete(k);
        else this.items.set(k, ev.object);
        this.emit(ev.type, ev.object);
      },
      (err) => {
        if (this.stopped) return;
        this.log(`${this.kind} watch ended (${err.message}); listing again`);
        this.relist(isApiError(err, 'Gone') ? 0 : 1000);
      },
    );
  }

  /** Lists and watches again; a list that fails (the store unreadable for now) is tried again a second later. */
  private relist(afterMs: number): void {
    setTimeout(() => {
      if (this.stopped) return;
      this.start().catch((e: Error) => {
        this.log(`${this.kind} list failed (${e.message}); trying again`);
        this.relist(1000);
      });
    }, afterMs);
  }

  private emit(type: WatchEventType, obj: ObjectOf<K>): void {
    for (const h of this.handlers) h(type, obj);
  }

  /**
   * Whether the cache holds what the store holds now: no change is still on its way from the watch
   * to the handlers (a --once pass is over only then, or its last writes' reactions would be lost).
   */
  async caughtUp(): Promise<boolean> {
    const { items } = await this.store.list(this.kind);
    if (items.length !== this.items.size) return false;
    return items.every(
      (o) =>
        this.items.get(cacheKey(o.metadata.namespace, o.metadata.name))?.metadata.resourceVersion ===
        o.metadata.resourceVersion,
    );
  }

  get(namespace: string | undefined, name: string): ObjectOf<K> | undefined {
    return this.items.get(cacheKey(namespace, name));
  }

  list(namespace?: string): ObjectOf<K>[] {
    const all = [...this.items.values()];
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace);
  }

  stop(): void {
    this.stopped = true;
    this.handle?.close();
  }
}
