/** Resource shapes shared by every kind (Kubernetes ObjectMeta / Condition conventions). */

export const GROUP = 'orchctl.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const DEFAULT_NAMESPACE = 'default';

/** Annotation holding the manifest last applied by `orchctl apply` (three-way merge base). */
export const LAST_APPLIED_ANNOTATION = 'orchctl.io/last-applied-configuration';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** Any stored object. Kinds with spec/status use those fields; Event uses top-level fields. */
export interface Resource<Spec = Record<string, unknown>, Status = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
  [extra: string]: unknown;
}

/** An object's key; a literal `kind` (`{ kind: 'Pipeline', … }`) makes the store return that kind's type. */
export interface ObjectKey<K extends string = string> {
  kind: K;
  namespace: string; // '' for cluster-scoped kinds
  name: string;
}

export function keyOf(obj: Resource): ObjectKey {
  return { kind: obj.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
}

export function keyString(k: ObjectKey): string {
  return k.namespace ? `${k.kind}/${k.namespace}/${k.name}` : `${k.kind}/${k.name}`;
}

/** Deep copy for plain JSON data (objects read from the store are never mutated in place). */
export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}
