/**
 * The one validating client: every create and update of an object with a spec — by `orchctl apply`,
 * a CLI command, a reconciler (a pipeline's phase session, an autopilot's session) — goes through
 * the kind's CRD schema and its admission (client/admission.ts) before it reaches the store, as the
 * Kubernetes API server does for every writer. Status writes (updateStatus) and deletes pass as they
 * are; so do Events (no spec; the controller's own record, written on every transition).
 *
 * The check is made on a copy: schema defaults are filled by `orchctl apply` (client/apply.ts),
 * not here, so what a reconciler writes is stored as written.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KindInfo, Registry } from '../api/crds.js';
import { ApiError } from '../api/errors.js';
import { keyOf, type Resource } from '../api/types.js';
import { registry } from '../config/crds.js';
import { type FieldError, formatPath, validateObject } from '../api/validate.js';
import type { Store, TxnOptions, WriteOp } from '../store/store.js';
import { type AdmissionOrigin, admissionErrors } from './admission.js';

/**
 * Schema, then admission — what `orchctl apply` runs, in the same order — of `o` as an object of
 * `kind`. Fills the schema's defaults into `o` (pass a copy to keep it as it is).
 */
export function objectErrors(o: Resource, kind: KindInfo, origin: AdmissionOrigin = 'apply'): FieldError[] {
  const schema = validateObject(o, kind);
  return schema.length ? schema : admissionErrors(o, kind, origin);
}

/** `agentsession "x" is invalid: spec.prompt: ...; ...`, each field also as a cause (Kubernetes' Invalid). */
export function invalidError(o: Resource, errors: FieldError[]): ApiError {
  const causes = errors.map((e) => ({ field: formatPath(e.path), message: e.message }));
  const fields = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)).join('; ');
  return new ApiError('Invalid', `${o.kind.toLowerCase()} "${o.metadata?.name}" is invalid: ${fields}`, causes);
}

/** Kinds whose objects carry a spec; the others (Event) are records written by the controller alone. */
const hasSpec = (k: KindInfo) => !!k.schema.properties?.spec;

/**
 * The errors of one object as a program writes it (its status is not part of a spec write). A new
 * object gets the schema and admission; an update the schema only: admission's rules are what a new
 * spec must satisfy, and a program's update is a transition it owns (`orchctl silence expire` ends a
 * silence at its start, which admission refuses of a new one).
 */
export function specWriteErrors(o: Resource, reg: Registry = registry(), update = false): FieldError[] {
  const kind = reg.byKind.get(o.kind);
  if (!kind || !hasSpec(kind)) return [];
  const copy = structuredClone({ ...o, status: undefined });
  delete copy.status;
  return update ? validateObject(copy, kind) : objectErrors(copy, kind, 'program');
}

/**
 * A Store whose create, update and txn create/update ops are refused (ApiError Invalid, nothing
 * written) when the object fails its schema, or a new one its admission. An update that leaves the spec as stored
 * passes (metadata only: a finalizer removed, an annotation set), so an object stored before a
 * check existed can still be annotated and deleted.
 */
export class ValidatingStore implements Store {
  constructor(
    private readonly inner: Store,
    private readonly reg: () => Registry = registry,
  ) {}

  get: Store['get'] = (key) => this.inner.get(key);
  list: Store['list'] = (kind, opts) => this.inner.list(kind, opts);
  updateStatus: Store['updateStatus'] = (o) => this.inner.updateStatus(o);
  delete: Store['delete'] = (key, opts) => this.inner.delete(key, opts);
  watch: Store['watch'] = (opts, onEvent, onError) => this.inner.watch(opts, onEvent, onError);
  revision: Store['revision'] = () => this.inner.revision();
  uid: Store['uid'] = () => this.inner.uid();
  tryAcquireLease: Store['tryAcquireLease'] = (name, holder, s) => this.inner.tryAcquireLease(name, holder, s);
  releaseLease: Store['releaseLease'] = (name, holder) => this.inner.releaseLease(name, holder);
  getLease: Store['getLease'] = (name) => this.inner.getLease(name);
  close: Store['close'] = () => this.inner.close();
  cannotCommit: Store['cannotCommit'] = () => this.inner.cannotCommit?.() ?? Promise.resolve(false);

  async create<T extends Resource>(o: T): Promise<T> {
    await this.admit(o, false);
    return this.inner.create(o);
  }

  async update<T extends Resource>(o: T): Promise<T> {
    await this.admit(o, true);
    return this.inner.update(o);
  }

  async txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]> {
    for (const op of ops) if (op.op === 'create' || op.op === 'update') await this.admit(op.object, op.op === 'update');
    return this.inner.txn(ops, opts);
  }

  private async admit(o: Resource, update: boolean): Promise<void> {
    const errors = specWriteErrors(o, this.reg(), update);
    if (!errors.length) return;
    if (update) {
      const live = await this.inner.get(keyOf(o));
      if (live && isDeepStrictEqual(live.spec, o.spec)) return;
    }
    throw invalidError(o, errors);
  }
}
