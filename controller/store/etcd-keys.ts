/**
 * Where the etcd backend keeps things, all under one prefix (default `/orchctl/`):
 *   objects/<Kind>/<namespace or _>/<name>   one object (JSON, without resourceVersion: that is mod_revision)
 *   owners/<owner uid>/<Kind>/<ns or _>/<name>  an index entry per ownerReference, for the cascade
 *   leases/<name>                             a LeaseRecord (JSON)
 *   revision                                  rewritten by every object write: its mod_revision is revision()
 *   uid                                       the store's identity, created once
 * Kind comes before namespace so one kind (a watch, a list, an `unchanged` guard) is one key range.
 */
import type { ObjectKey } from '../api/types.js';

/** `_` stands for the empty (cluster) namespace: no namespace name can be `_` (DNS labels). */
const CLUSTER = '_';

export class EtcdKeys {
  constructor(readonly prefix: string) {}

  object(k: ObjectKey): string {
    return `${this.prefix}objects/${k.kind}/${k.namespace || CLUSTER}/${k.name}`;
  }

  /** Every object, or one kind's, or one kind's in one namespace ('' = cluster-scoped). */
  objects(kind?: string, namespace?: string): string {
    if (kind === undefined) return `${this.prefix}objects/`;
    if (namespace === undefined) return `${this.prefix}objects/${kind}/`;
    return `${this.prefix}objects/${kind}/${namespace || CLUSTER}/`;
  }

  /** The ObjectKey of an objects/ key, or undefined for anything else. */
  parseObject(key: string): ObjectKey | undefined {
    const head = `${this.prefix}objects/`;
    if (!key.startsWith(head)) return undefined;
    const [kind, ns, ...name] = key.slice(head.length).split('/');
    if (!kind || !ns || !name.length) return undefined;
    return { kind, namespace: ns === CLUSTER ? '' : ns, name: name.join('/') };
  }

  owners(ownerUid: string): string {
    return `${this.prefix}owners/${ownerUid}/`;
  }

  ownerEntry(ownerUid: string, dependent: ObjectKey): string {
    return `${this.owners(ownerUid)}${dependent.kind}/${dependent.namespace || CLUSTER}/${dependent.name}`;
  }

  /** The dependent an owners/ entry points at. */
  parseOwnerEntry(key: string): ObjectKey | undefined {
    const rest = key.slice(`${this.prefix}owners/`.length).split('/');
    return this.parseObject(`${this.prefix}objects/${rest.slice(1).join('/')}`);
  }

  lease(name: string): string {
    return `${this.prefix}leases/${name}`;
  }

  get revision(): string {
    return `${this.prefix}revision`;
  }

  get uid(): string {
    return `${this.prefix}uid`;
  }
}

/** The end of the key range of everything starting with `prefix` (etcd's range_end: last byte + 1). */
export function rangeEnd(prefix: string): Buffer {
  const b = Buffer.from(prefix);
  let i = b.length - 1;
  while (i >= 0 && b[i] === 0xff) i--;
  if (i < 0) return Buffer.from([0]); // every key
  const end = Buffer.from(b.subarray(0, i + 1));
  end[i]++;
  return end;
}
