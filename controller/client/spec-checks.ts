/**
 * The checks the validating client (client/validating-store.ts) makes of a spec write: the kind's CRD
 * schema and its admission (client/admission.ts), as `orchctl apply` makes them. Apart from the store
 * wrapper so that a command that only reads never loads ajv or the admission rules.
 */
import type { KindInfo, Registry } from '../api/crds.js';
import { ApiError } from '../api/errors.js';
import type { Resource } from '../api/types.js';
import { registry } from '../config/crds.js';
import { type FieldError, formatPath, validateObject } from '../api/validate.js';
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
