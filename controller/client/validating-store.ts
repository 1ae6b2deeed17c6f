/**
 * The one validating client: every create and update of an object with a spec — by `orchctl apply`,
 * a CLI command, a reconciler (a pipeline's phase session, an autopilot's session) — goes through
 * the kind's CRD schema and its admission (client/admission.ts) before it reaches the store, as the
 * Kubernetes API server does for every writer. Status writes (updateStatus) and deletes pass as they
 * are; so do Events (no spec; the controller's own record, written on every transition).
 *
 * The checks themselves are in client/spec-checks.ts.
 *
 * The check is made on a copy: schema defaults are filled by `orchctl apply` (client/apply.ts),
 * not here, so what a reconciler writes is stored as written.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Registry } from '../api/crds.js';
import type { ObjectOf } from '../api/kinds.js';
import { keyOf, type ObjectKey, type Resource } from '../api/types.js';
import { registry } from '../config/crds.js';
import type { DeleteOptions, Store, TxnOptions, WriteOp } from '../store/store.js';
import { StoreView } from '../store/store-view.js';
import type * as SpecChecks from './spec-checks.js';

let checks: Promise<typeof SpecChecks> | undefined;
/**
 * The schema and admission checks, loaded on the first write: a command that only reads (`orchctl get`)
 * never loads ajv, the admission rules or what they import.
 */
const specChecks = (): Promise<typeof SpecChecks> => (checks ??= import('./spec-checks.js'));

/**
 * A Store whose create, update and txn create/update ops are refused (ApiError Invalid, nothing
 * written) when the object fails its schema, or a new one its admission. An update that leaves the spec as stored
 * passes (metadata only: a finalizer removed, an annotation set), so an object stored before a
 * check existed can still be annotated and deleted.
 */
export class ValidatingStore extends StoreView {
  constructor(
    inner: Store,
    private readonly reg: () => Registry = registry,
  ) {
    super(inner);
  }

  // Nothing to check in a status or a deletion: straight to the store beneath.
  override updateStatus<T extends Resource>(o: T): Promise<T> {
    return this.inner.updateStatus(o);
  }
  override delete<K extends string>(key: ObjectKey<K>, options?: DeleteOptions): Promise<ObjectOf<K>> {
    return this.inner.delete(key, options);
  }

  override async create<T extends Resource>(o: T): Promise<T> {
    await this.admit(o, false);
    return this.inner.create(o);
  }

  override async update<T extends Resource>(o: T): Promise<T> {
    await this.admit(o, true);
    return this.inner.update(o);
  }

  async txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]> {
    for (const op of ops) if (op.op === 'create' || op.op === 'update') await this.admit(op.object, op.op === 'update');
    return this.inner.txn(ops, opts);
  }

  private async admit(o: Resource, update: boolean): Promise<void> {
    const { specWriteErrors, invalidError } = await specChecks();
    const errors = specWriteErrors(o, this.reg(), update);
    if (!errors.length) return;
    if (update) {
      const live = await this.inner.get(keyOf(o));
      if (live && isDeepStrictEqual(live.spec, o.spec)) return;
    }
    throw invalidError(o, errors);
  }
}
