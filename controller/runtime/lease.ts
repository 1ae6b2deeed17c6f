/**
 * Store leases, one holder each (controller-runtime's leader election): the control plane's
 * `orchctl-controller` (4 s by default, `--leader-lease`; renewed every 0.8 s, a standby looks as
 * often) and a node agent's `orchctl-node-<name>` (15 s, renewed every 5 s: the node's heartbeat;
 * one agent per node name).
 * A lease left by a process that was killed on this same host is taken over at once when its
 * process is gone, so a crash-restart does not wait out the lease. A lease alone is no fence:
 * writes stay guarded by resourceVersion compare-and-swap and, where a deposed holder could do
 * harm, by TxnOptions.fence.
 */
import os from 'node:os';
import { formatDuration } from '../api/duration.js';
import { processAlive } from '../observers/process.js';
import type { LeaseRecord, Store } from '../store/store.js';

export const CONTROLLER_LEASE = 'orchctl-controller';

/** How a lease is held: its duration and how often it is renewed. */
export interface LeaseTiming {
  seconds: number;
  renewMs: number;
}

export const NODE_LEASE_TIMING: LeaseTiming = { seconds: 15, renewMs: 5000 };

/** `orchctl controller --leader-lease`: its bounds (whole seconds: a lease record counts seconds). */
export const MIN_LEADER_LEASE_MS = 3000;
export const MAX_LEADER_LEASE_MS = 60_000;

/** Why `ms` cannot be the controller lease, or undefined when it can. */
export function checkLeaderLease(ms: number): string | undefined {
  if (!Number.isFinite(ms) || ms < MIN_LEADER_LEASE_MS || ms > MAX_LEADER_LEASE_MS || ms % 1000 !== 0)
    return (
      `the leader lease must be whole seconds between ${formatDuration(MIN_LEADER_LEASE_MS)} and ` +
      formatDuration(MAX_LEADER_LEASE_MS)
    );
  return undefined;
}

/**
 * The controller lease of `seconds` and its renew period, which is also how often a standby looks:
 * a fifth of the lease, so the leader has four more tries after a failed or stalled renewal (an etcd
 * election stalls writes 1–2.8 s) before the lease runs out; at least 0.5 s, so a short lease does
 * not turn into a stream of store writes; at most 2 s, so a standby takes over a released or dead
 * holder's lease within ~2 s whatever the lease.
 */
export function controllerLeaseTiming(seconds: number): LeaseTiming {
  return { seconds, renewMs: Math.min(2000, Math.max(500, (seconds * 1000) / 5)) };
}

/**
 * The default controller lease: 4 s, so a hung leader is replaced within ~4.2 s (the goal is 5 s),
 * while an etcd election (1–2.8 s of stalled writes here) leaves it renewals to spare; 3 s left
 * none. docs/benchmarks.md (multihost-failover) measures it against the old 15 s.
 */
export const DEFAULT_LEADER_LEASE_SECONDS = 4;
export const CONTROLLER_LEASE_TIMING: LeaseTiming = controllerLeaseTiming(DEFAULT_LEADER_LEASE_SECONDS);

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
