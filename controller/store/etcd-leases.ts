/**
 * Named leases on etcd, with the SQLite backend's semantics (store.ts LeaseRecord): held while
 * renewTime + duration is in the future by the clock of whoever looks; re-acquiring by the holder
 * renews; leaderTransitions counts changes of holder. One key per lease (leases/<name>, outside
 * objects/, so no watch sees it and revision() does not move), written with compare-and-swap on
 * its mod_revision, so two contenders never both win. No etcd TTL lease is attached: expiry is
 * the record's, as with Kubernetes' coordination Leases (hosts keep their clocks in sync).
 */
import type { Etcd3 } from 'etcd3';
import { ApiError, isApiError } from '../api/errors.js';
import type { EtcdKeys } from './etcd-keys.js';
import { acquiredLease } from './object-rules.js';
import { retryOnConflict } from './retry.js';
import type { LeaseRecord } from './store.js';

const MAX_ATTEMPTS = 20;

export class EtcdLeases {
  /**
   * Each lease this process last wrote, with the revision of that write: while the key is still at
   * that revision the record is ours as written, so a renewal is one compare-and-swap against it
   * (one request, not a read and a swap: a node renews every 5 s, a leader every 0.8 s).
   */
  private readonly written = new Map<string, { rec: LeaseRecord; mod: number }>();

  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdKeys,
  ) {}

  private async read(name: string): Promise<{ rec?: LeaseRecord; mod: number }> {
    const res = await this.client.kv.range({ key: Buffer.from(this.keys.lease(name)) });
    const kv = res.kvs[0];
    return kv ? { rec: JSON.parse(kv.value.toString()) as LeaseRecord, mod: Number(kv.mod_revision) } : { mod: 0 };
  }

  /** Put or delete the lease key only if it is still at `mod` (0 = absent); true when it was. */
  private async swap(name: string, mod: number, rec: LeaseRecord | undefined): Promise<boolean> {
    const key = Buffer.from(this.keys.lease(name));
    this.written.delete(name);
    const res = await this.client.kv.txn({
      compare: [{ key, target: 'Mod', result: 'Equal', mod_revision: mod }],
      success: [
        rec ? { request_put: { key, value: Buffer.from(JSON.stringify(rec)) } } : { request_delete_range: { key } },
      ],
      failure: [],
    });
    // A put in a transaction has the transaction's revision as its mod_revision.
    if (res.succeeded && rec) this.written.set(name, { rec, mod: Number(res.header.revision) });
    return res.succeeded;
  }

  async tryAcquire(name: string, holder: string, durationSeconds: number): Promise<LeaseRecord | undefined> {
    const mine = this.written.get(name);
    if (mine) {
      // Renewing what this process wrote last: nobody wrote it since if the swap succeeds.
      const rec = acquiredLease(mine.rec, name, holder, durationSeconds, new Date());
      if (rec && (await this.swap(name, mine.mod, rec))) return rec;
    }
    // Someone else writing it meanwhile is a Conflict: look again (they may now hold it).
    return retryOnConflict(
      async () => {
        const { rec: cur, mod } = await this.read(name);
        const rec = acquiredLease(cur, name, holder, durationSeconds, new Date());
        if (!rec) return undefined;
        if (await this.swap(name, mod, rec)) return rec;
        throw new ApiError('Conflict', `lease "${name}" kept changing while ${holder} tried to acquire it; retry`);
      },
      { attempts: MAX_ATTEMPTS },
    );
  }

  async release(name: string, holder: string): Promise<void> {
    await retryOnConflict(
      async () => {
        const { rec, mod } = await this.read(name);
        if (rec?.holderIdentity !== holder) return;
        if (!(await this.swap(name, mod, undefined))) throw new ApiError('Conflict', `lease "${name}" changed`);
      },
      { attempts: MAX_ATTEMPTS },
    ).catch((e: unknown) => {
      // Still changing after every attempt: left to expire, as before.
      if (!isApiError(e, 'Conflict')) throw e;
    });
  }

  async get(name: string): Promise<LeaseRecord | undefined> {
    return (await this.read(name)).rec;
  }
}
