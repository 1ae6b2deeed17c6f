/**
 * Store leases, one holder each (controller-runtime's leader election): the control plane's
 * `orchctl-controller` (15 s, renewed every 2 s; a standby waits for it) and a node agent's
 * `orchctl-node-<name>` (15 s, renewed every 5 s: the node's heartbeat; one agent per node name).
 * A lease left by a process that was killed on this same host is taken over at once when its
 * process is gone, so a crash-restart does not wait out the lease. A lease alone is no fence:
 * writes stay guarded by resourceVersion compare-and-swap and, where a deposed holder could do
 * harm, by TxnOptions.fence.
 */
import os from 'node:os';
import { processAlive } from '../observers/process.js';
import type { LeaseRecord, Store } from '../store/store.js';

export const CONTROLLER_LEASE = 'orchctl-controller';

/** How a lease is held: its duration and how often it is renewed. */
export interface LeaseTiming {
  seconds: number;
  renewMs: number;
}

export const CONTROLLER_LEASE_TIMING: LeaseTiming = { seconds: 15, renewMs: 2000 };
export const NODE_LEASE_TIMING: LeaseTiming = { seconds: 15, renewMs: 5000 };

/**
 * `<node>@<host>_<pid>_<random>` (no `<node>@` for a control plane without a node). The node name
 * says which agent holds a lease when several run on one host (the multi-node test): they share
 * the hostname, and only the pid tells their processes apart.
 */
export function holderIdentity(node?: string): string {
  const id = `${os.hostname()}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  return node ? `${node}@${id}` : id;
}

/** The holder's process is known to be dead (same host, pid gone); a live process's lease is never released. */
export function holderIsDead(rec: LeaseRecord): boolean {
  const id = rec.holderIdentity.slice(rec.holderIdentity.indexOf('@') + 1);
  const parts = id.split('_');
  const pid = Number(parts[parts.length - 2]);
  const host = parts.slice(0, -2).join('_');
  return host === os.hostname() && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid);
}

export async function acquireLease(
  store: Store,
  identity: string,
  durationSeconds = CONTROLLER_LEASE_TIMING.seconds,
  name = CONTROLLER_LEASE,
): Promise<boolean> {
  const cur = await store.getLease(name);
  if (cur && cur.holderIdentity !== identity && holderIsDead(cur)) await store.releaseLease(name, cur.holderIdentity);
  return !!(await store.tryAcquireLease(name, identity, durationSeconds));
}
