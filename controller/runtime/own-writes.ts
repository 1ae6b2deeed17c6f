/**
 * The echoes of a controller's own writes (issue 29). A reconcile pass that writes its object hears
 * the write back from the watch, and that change tells the controller nothing its pass did not know;
 * yet it cost a whole reconcile of every launched session (read, resolve, observe, plan). A write
 * made through {@link OwnWrites.through} is noted as "revision B, made from revision A by this
 * controller alone" (its compare-and-swap on A: nothing else changed in between), and a change the
 * informer hands over as A → B is its echo, which `for` does not queue (builder.ts).
 *
 * Every other change still wakes the controller: another writer's (its own revision, which comes
 * on its own, even when this controller's retry wrote over it), one whose previous version the cache
 * never held (a relist that skipped revisions), a deletion, a write that stored nothing new. The pass
 * that wrote asks for what it needs next itself (its requeue), as it must anyway.
 */
import { keyOf, type Resource } from '../api/types.js';
import type { WatchEventType, Store, WriteOp, TxnOptions } from '../store/store.js';
import { StoreView } from '../store/store-view.js';

/** Notes kept per object: the writes whose echoes are still on their way (a pass makes up to three). */
const PER_OBJECT = 8;

const keyText = (o: Resource) => {
  const k = keyOf(o);
  return `${k.namespace ?? ''}/${k.name}`;
};

export class OwnWrites {
  /** `namespace/name` → (revision written → the revision it was written over). */
  private readonly written = new Map<string, Map<string, string>>();

  constructor(readonly kind: string) {}

  /** `store`, with its compare-and-swap writes of this kind that made a new revision noted. */
  through(store: Store): Store {
    return new NotingStore(store, (input, stored) => this.note(input, stored));
  }

  private note(input: Resource, stored: Resource | undefined): void {
    if (input.kind !== this.kind || !stored) return;
    const from = input.metadata.resourceVersion;
    const to = stored.metadata.resourceVersion;
    // No compare-and-swap (the base is unknown), or a write that stored nothing new.
    if (from === undefined || to === undefined || from === to) return;
    const k = keyText(stored);
    const m = this.written.get(k) ?? new Map<string, string>();
    this.written.set(k, m);
    m.set(to, from);
    if (m.size > PER_OBJECT) m.delete(m.keys().next().value!);
  }

  /** Whether the change `old` → `obj` is the echo of a noted write (a note is used once). */
  isEcho(type: WatchEventType, obj: Resource, old: Resource | undefined): boolean {
    const k = keyText(obj);
    const m = this.written.get(k);
    if (!m) return false;
    if (type === 'DELETED') {
      this.written.delete(k);
      return false;
    }
    const from = m.get(obj.metadata.resourceVersion ?? '');
    if (from === undefined) return false;
    m.delete(obj.metadata.resourceVersion!);
    if (!m.size) this.written.delete(k);
    return type === 'MODIFIED' && old?.metadata.resourceVersion === from;
  }
}

/** A store that tells `noted` of each update and status update it wrote (single writes come through txn). */
class NotingStore extends StoreView {
  constructor(
    inner: Store,
    private readonly noted: (input: Resource, stored: Resource | undefined) => void,
  ) {
    super(inner);
  }

  async txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]> {
    const results = await this.inner.txn(ops, opts);
    if (opts?.dryRun) return results;
    const writes = ops.filter((op) => op.op !== 'unchanged');
    writes.forEach((op, i) => {
      if (op.op === 'update' || op.op === 'updateStatus') this.noted(op.object, results[i]);
    });
    return results;
  }
}
