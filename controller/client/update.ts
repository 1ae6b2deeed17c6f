/**
 * The read-modify-write every verb on one object does (`orchctl approve`, `restart`, the console's
 * buttons): compare-and-swap on resourceVersion, read again and retried on a conflict, as kubectl's
 * client-side patches are.
 */
import type { Resource } from '../api/types.js';
import { retryOnConflict } from '../store/retry.js';
import type { Store } from '../store/store.js';

/** What to do with the object as read: write this version of it, leave it as it is, or refuse. */
export type Change<T> = { write: T } | { unchanged: string } | { refuse: string };

export type Outcome<T> =
  | { outcome: 'written'; object: T }
  | { outcome: 'unchanged'; why: string }
  | { outcome: 'refused'; why: string }
  | { outcome: 'missing' };

/** Attempts of one read-modify-write before a conflict is given up on. */
export const CAS_ATTEMPTS = 5;

/**
 * Reads the object, asks `change` what to make of it and writes that with the resourceVersion it
 * read; another writer in between makes the store refuse (Conflict) and the object is read again.
 */
export async function updateWithRetry<T extends Resource>(
  store: Store,
  key: { kind: string; namespace: string; name: string },
  change: (current: T) => Change<T>,
): Promise<Outcome<T>> {
  return retryOnConflict(
    async (): Promise<Outcome<T>> => {
      const cur = (await store.get(key)) as T | undefined;
      if (!cur) return { outcome: 'missing' };
      const c = change(structuredClone(cur));
      if ('refuse' in c) return { outcome: 'refused', why: c.refuse };
      if ('unchanged' in c) return { outcome: 'unchanged', why: c.unchanged };
      c.write.metadata.resourceVersion = cur.metadata.resourceVersion;
      return { outcome: 'written', object: (await store.update(c.write)) as T };
    },
    { attempts: CAS_ATTEMPTS },
  );
}
