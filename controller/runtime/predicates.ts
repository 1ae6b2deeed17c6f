/**
 * Event filters for `watches` mappings (controller-runtime's predicates).
 */
import type { Resource } from '../api/types.js';
import type { ObjectMapping } from './builder.js';
import { queueKey } from './builder.js';

/**
 * Passes a change of a watched object on only when what a dependent reads of it changed: its spec
 * (metadata.generation), labels, annotations, deletion, and whatever `extra` names (a status field
 * it does read) — not any other status write. Like controller-runtime's GenerationChangedPredicate.
 * A Project's status moves with every change of its sessions (activeSessions, lastActivity), and the
 * session controller queued every session of the namespace on each of those writes.
 */
export function onSpecChange<T extends Resource>(map: ObjectMapping<T>, extra?: (o: T) => unknown): ObjectMapping<T> {
  const last = new Map<string, string>();
  return (o, type) => {
    const key = queueKey(o);
    if (type === 'DELETED') {
      last.delete(key);
      return map(o, type);
    }
    const m = o.metadata;
    const print = JSON.stringify([m.generation, m.deletionTimestamp, m.labels, m.annotations, extra?.(o)]);
    if (last.get(key) === print) return [];
    last.set(key, print);
    return map(o, type);
  };
}
