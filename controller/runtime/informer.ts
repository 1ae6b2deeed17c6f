/**
 * An informer: list a kind once, then keep an in-memory cache current from the store's watch,
 * calling handlers on every change. On a compacted watch (Gone) it lists again, like client-go.
 */
import { isApiError } from '../api/errors.js';
import type { ObjectOf } from '../api/kinds.js';
import type { Resource } from '../api/types.js';
import type { Store, WatchEventType, WatchHandle } from '../store/store.js';

/** `old`: the object as the cache held it before this change (client-go's UpdateFunc(old, new)). */
export type ChangeHandler<T extends Resource = Resource> = (type: WatchEventType, obj: T, old?: T) => void;

const cacheKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;

/** The value an object is filed under in an index (undefined: not in it). */
export type IndexFn<T> = (obj: T) => string | undefined;

interface Index<T> {
  fn: IndexFn<T>;
  /** value → cache key → object. */
  byValue: Map<string, Map<string, T>>;
}

/** The informer of kind `K`: its cache and handlers hold that kind's type (api/kinds.ts KindMap). */
export class Informer<K extends string = string> {
  private readonly items = new Map<string, ObjectOf<K>>();
  /** Told only of objects of kind K; kept as any object's handlers so that Informer<K> is an Informer. */
  private readonly handlers: ChangeHandler[] = [];
  /** Of objects of kind K; kept as any object's indexes (as the handlers) so that Informer<K> is an Informer. */
  private readonly indexes = new Map<string, Index<Resource>>();
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
      this.put(k, o);
      if (old?.metadata.resourceVersion !== o.metadata.resourceVersion) this.emit(old ? 'MODIFIED' : 'ADDED', o, old);
    }
    for (const [k, o] of this.items) {
      if (seen.has(k)) continue;
      this.drop(k);
      this.emit('DELETED', o, o);
    }
    this.handle = this.store.watch(
      { kind: this.kind, fromRevision: revision },
      (ev) => {
        const k = cacheKey(ev.object.metadata.namespace, ev.object.metadata.name);
        const old = this.items.get(k);
        if (ev.type === 'DELETED') this.drop(k);
        else this.put(k, ev.object);
        this.emit(ev.type, ev.object, old);
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

  private put(k: string, o: ObjectOf<K>): void {
    const old = this.items.get(k);
    this.items.set(k, o);
    for (const ix of this.indexes.values()) {
      const was = old && ix.fn(old);
      const is = ix.fn(o);
      if (was !== is && was !== undefined) unfile(ix, was, k);
      if (is !== undefined) file(ix, is, k, o);
    }
  }

  private drop(k: string): void {
    const old = this.items.get(k);
    this.items.delete(k);
    if (!old) return;
    for (const ix of this.indexes.values()) {
      const was = ix.fn(old);
      if (was !== undefined) unfile(ix, was, k);
    }
  }

  /**
   * Keeps an index of the cache (client-go's Indexer): objects by the value `fn` files them under,
   * kept with every change, so a controller that wants a few objects by a field does not go over
   * the whole cache (issue 29: node lifecycle went over every session every 2 s). Adding an index
   * of a name already added keeps the first.
   */
  addIndex(name: string, fn: IndexFn<ObjectOf<K>>): void {
    if (this.indexes.has(name)) return;
    const ix: Index<Resource> = { fn: fn as IndexFn<Resource>, byValue: new Map() };
    this.indexes.set(name, ix);
    for (const [k, o] of this.items) {
      const v = fn(o);
      if (v !== undefined) file(ix, v, k, o);
    }
  }

  /** The cached objects index `name` files under `value` (addIndex first). */
  byIndex(name: string, value: string): ObjectOf<K>[] {
    const ix = this.indexes.get(name);
    if (!ix) throw new Error(`${this.kind} informer: no index ${name}`);
    const m = ix.byValue.get(value);
    return m ? ([...m.values()] as ObjectOf<K>[]) : [];
  }

  private emit(type: WatchEventType, obj: ObjectOf<K>, old: ObjectOf<K> | undefined): void {
    for (const h of this.handlers) h(type, obj, old);
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

function file<T>(ix: Index<T>, value: string, k: string, o: T): void {
  let m = ix.byValue.get(value);
  if (!m) {
    m = new Map();
    ix.byValue.set(value, m);
  }
  m.set(k, o);
}

function unfile<T>(ix: Index<T>, value: string, k: string): void {
  const m = ix.byValue.get(value);
  if (!m) return;
  m.delete(k);
  if (!m.size) ix.byValue.delete(value);
}
