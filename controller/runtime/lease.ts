/**
 * Leader lease: only one controller acts on a store per node (controller-runtime defaults:
 * 15 s lease, renewed every 2 s). A lease left by a controller that was killed on this same
 * host is taken over at once when its process is gone, so a crash-restart does not wait out the
 * lease. Writes stay guarded by resourceVersion compare-and-swap, since a lease is no fence.
 */
import os from 'node:os';
import { processAlive } from '../observers/process.js';
import type { LeaseRecord, Store } from '../store/store.js';

export const CONTROLLER_LEASE = 'orchctl-controller';

export function holderIdentity(): string {
  return `${os.hostname()}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

/** The holder's process is known to be dead (same host, pid gone). */
export function holderIsDead(rec: LeaseRecord): boolean {
  const parts = rec.holderIdentity.split('_');
  const pid = Number(parts[parts.length - 2]);
  const host = parts.slice(0, -2).join('_');
  return host === os.hostname() && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid);
}

export async function acquireLease(store: Store, identity: string, durationSeconds = 15): Promise<boolean> {
  const cur = await store.getLease(CONTROLLER_LEASE);
  if (cur && cur.holderIdentity !== identity && holderIsDead(cur))
    await store.releaseLease(CONTROLLER_LEASE, cur.holderIdentity);
  return !!(await store.tryAcquireLease(CONTROLLER_LEASE, identity, durationSeconds));
}
