/**
 * Store.txn on etcd: optimistic, in ONE etcd transaction. Every key the ops need is read, the ops
 * are applied in memory in order (object-rules.ts), and the result is committed as
 *   If:   every key read still has the mod_revision it was read at (MOD == m; 0 = still absent),
 *         every `unchanged` guard (MOD < since+1 over the kind's key range), the fence's lease key,
 *         no new dependent of a removed owner (MOD < read+1 over its owners/ range)
 *   Then: one put or delete per changed key, the owner-index entries, and the `revision` key
 *   Else: read the `revision` key (did an earlier attempt of this very txn already apply?)
 * A false If means someone wrote in between: read again and recompute; the recomputation then
 * finds the real reason (a stale resourceVersion → Conflict, a guard → Conflict, AlreadyExists,
 * a lost lease → Fenced) or succeeds (writes without a resourceVersion are read-modify-write).
 * etcd refuses two writes to one key in a txn, so several ops on one object become one put.
 */
import { randomUUID } from 'node:crypto';
import type { Etcd3, ICompare, IKeyValue, IRequestOp } from 'etcd3';
import { ApiError } from '../api/errors.js';
import type { ObjectOf } from '../api/kinds.js';
import type { ObjectKey, Resource } from '../api/types.js';
import type { EtcdKeys } from './etcd-keys.js';
import { rangeEnd } from './etcd-keys.js';
import * as rules from './object-rules.js';
import {
  fenceBroken,
  fencedError,
  type LeaseRecord,
  type TxnOptions,
  type UnchangedGuard,
  type WriteOp,
} from './store.js';

/**
 * An object as etcd holds it: the value is the JSON without resourceVersion, which is mod_revision.
 * The decode point of reads (see Store): a key under kind K holds an object of kind K.
 */
export function decodeObject<K extends string = string>(
  kv: IKeyValue,
  revision: string | number = kv.mod_revision,
): ObjectOf<K> {
  const obj = JSON.parse(kv.value.toString()) as ObjectOf<K>;
  obj.metadata.resourceVersion = String(revision);
  return obj;
}

export function encodeObject(obj: Resource): Buffer {
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return Buffer.from(JSON.stringify({ ...obj, metadata }));
}

interface Slot {
  key: string;
  okey: ObjectKey;
  /** mod_revision when read; 0 = absent. */
  mod: number;
  cur?: Resource;
  /** undefined: untouched; null: removed; else the object to put. */
  next?: Resource | null;
}

const MAX_ATTEMPTS = 30;

/**
 * One Store.txn call, which may be run more than once (withDeadline retries it after a transient
 * failure): its id marks the commit, so a commit whose answer was lost is recognised, not redone.
 */
export class EtcdTxn {
  private readonly txnId = randomUUID();
  private readonly uids: string[] = [];
  private attempt = 0;
  /** The last commit sent whose outcome is not known (its answer was lost). */
  private sent?: { plan: Plan; results: Resource[] };

  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdKeys,
    private readonly ops: WriteOp[],
    private readonly opts: TxnOptions,
  ) {}

  /** Runs the ops until they commit, fail for a reason, or `deadline` (ms since epoch) passes. */
  async run(deadline: number): Promise<{ results: Resource[]; revision?: number }> {
    if (this.sent) {
      const res = await this.client.kv.range({ key: Buffer.from(this.keys.revision) });
      const applied = this.applied(this.sent, res.kvs[0]);
      if (applied) return applied;
      this.sent = undefined;
    }
    for (;;) {
      this.attempt++;
      // The first attempt trusts the compares in the If; a retry, a dry run or a write-less txn asks why first.
      const plan = new Plan(this.client, this.keys, this.uids, this.attempt > 1 || !!this.opts.dryRun);
      const results = await plan.apply(this.ops, this.opts);
      if (this.opts.dryRun) return { results: plan.finish(results, plan.snapshot + 1) };
      if (!plan.needsCommit()) return { results };
      this.sent = { plan, results };
      const res = await this.client.kv.txn(plan.commit(this.txnId));
      this.sent = undefined;
      if (res.succeeded) {
        const rev = Number(res.header.revision);
        return { results: plan.finish(results, rev), revision: plan.writes() ? rev : undefined };
      }
      // etcd3 resends a txn whose answer was lost (deadline, member killed): it may have applied.
      const applied = this.applied({ plan, results }, res.responses[0]?.response_range?.kvs?.[0]);
      if (applied) return applied;
      if (this.attempt >= MAX_ATTEMPTS || Date.now() > deadline)
        throw new ApiError(
          'Conflict',
          `the transaction kept meeting concurrent writes (${this.attempt} attempts); retry`,
        );
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, this.attempt * 5)));
    }
  }

  /** The outcome of an earlier commit of this txn when the revision key still carries its id. */
  private applied(sent: { plan: Plan; results: Resource[] }, marker: IKeyValue | undefined) {
    if (marker?.value.toString() !== this.txnId) return undefined;
    const rev = Number(marker.mod_revision);
    return { results: sent.plan.finish(sent.results, rev), revision: rev };
  }
}

/** One attempt: reads, the ops applied in memory, and what to commit. */
class Plan {
  private readonly slots = new Map<string, Slot>();
  private readonly compares: ICompare[] = [];
  /** owners/ entries of removed owners (deleted with them). */
  private readonly staleEntries = new Set<string>();
  /** Results that are written (they get the commit's revision). */
  private readonly written = new Set<Resource>();
  private guardsOrFence = false;
  snapshot = 0;

  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdKeys,
    private readonly uids: string[],
    private readonly explain: boolean,
  ) {}

  async apply(ops: WriteOp[], opts: TxnOptions): Promise<Resource[]> {
    if (opts.fence) await this.fence(opts.fence);
    // Guards first, as etcd evaluates a txn's compares before its ops.
    for (const op of ops) if (op.op === 'unchanged') await this.guard(op);
    const results: Resource[] = [];
    let i = 0;
    for (const op of ops) {
      if (op.op === 'unchanged') continue;
      results.push(await this.applyOp(op, i++));
    }
    return results;
  }

  private async applyOp(op: Exclude<WriteOp, UnchangedGuard>, i: number): Promise<Resource> {
    switch (op.op) {
      case 'create': {
        const okey = rules.objectKey(op.object);
        if (!op.object.kind || !op.object.metadata?.name) return rules.created(op.object, undefined, '');
        // A create is put-if-absent: the first attempt need not read (MOD == 0 in the If says it).
        const slot = await this.slot(okey, !this.explain);
        this.uids[i] ??= randomUUID();
        return this.outcome(slot, { kind: 'write', object: rules.created(op.object, this.state(slot), this.uids[i]) });
      }
      case 'update': {
        const slot = await this.slot(rules.objectKey(op.object));
        return this.outcome(slot, rules.updated(op.object, rules.current(op.object, this.state(slot))));
      }
      case 'updateStatus': {
        const slot = await this.slot(rules.objectKey(op.object));
        return this.outcome(slot, rules.statusUpdated(op.object, rules.current(op.object, this.state(slot))));
      }
      case 'delete': {
        const slot = await this.slot(op.key);
        return this.outcome(slot, rules.deleted(op.key, this.state(slot), op.options));
      }
    }
  }

  private async outcome(slot: Slot, o: rules.Outcome): Promise<Resource> {
    if (o.kind === 'unchanged') return o.object;
    this.written.add(o.object);
    if (o.kind === 'write') {
      slot.next = rules.redactForStore(o.object);
      return o.object;
    }
    slot.next = null;
    rules.redactForStore(o.object);
    await this.cascade(o.object);
    return o.object;
  }

  /** Dependents (ownerReferences) go with their owner, in the same transaction, as SQLite does. */
  private async cascade(owner: Resource): Promise<void> {
    const uid = owner.metadata.uid;
    if (!uid) return;
    const prefix = this.keys.owners(uid);
    const res = await this.client.kv.range({ key: Buffer.from(prefix), range_end: rangeEnd(prefix), keys_only: true });
    // A dependent created after this read would be missed: the commit fails instead.
    this.compares.push({
      key: Buffer.from(prefix),
      range_end: rangeEnd(prefix),
      target: 'Mod',
      result: 'Less',
      mod_revision: Number(res.header.revision) + 1,
    });
    for (const kv of res.kvs) {
      const entry = kv.key.toString();
      this.staleEntries.add(entry);
      const dkey = this.keys.parseOwnerEntry(entry);
      if (!dkey) continue;
      const slot = await this.slot(dkey);
      const dep = this.state(slot);
      if (dep && rules.isDependent(dep, owner)) await this.outcome(slot, rules.deleted(dkey, dep));
    }
  }

  private async guard(g: UnchangedGuard): Promise<void> {
    this.guardsOrFence = true;
    const prefix = this.keys.objects(g.kind, g.namespace);
    const range = { key: Buffer.from(prefix), range_end: rangeEnd(prefix) };
    this.compares.push({ ...range, target: 'Mod', result: 'Less', mod_revision: g.since + 1 });
    if (!this.explain) return;
    const res = await this.client.kv.range({
      ...range,
      min_mod_revision: g.since + 1,
      sort_target: 'Mod',
      sort_order: 'Descend',
      limit: 1,
      keys_only: true,
    });
    this.seen(Number(res.header.revision));
    const newest = res.kvs[0] ? Number(res.kvs[0].mod_revision) : 0;
    if (newest <= g.since) return;
    throw rules.guardConflict(g, newest);
  }

  /** TxnOptions.fence: the lease key must hold `holder`, unexpired, and still be as read at commit. */
  private async fence(fence: NonNullable<TxnOptions['fence']>): Promise<void> {
    this.guardsOrFence = true;
    const key = this.keys.lease(fence.lease);
    const res = await this.client.kv.range({ key: Buffer.from(key) });
    this.seen(Number(res.header.revision));
    const kv = res.kvs[0];
    const cur = kv ? (JSON.parse(kv.value.toString()) as LeaseRecord) : undefined;
    const why = fenceBroken(cur, fence.holder, Date.now());
    if (why) throw fencedError(fence, why);
    this.compares.push({
      key: Buffer.from(key),
      target: 'Mod',
      result: 'Equal',
      mod_revision: Number(kv.mod_revision),
    });
  }

  private async slot(okey: ObjectKey, assumeAbsent = false): Promise<Slot> {
    const key = this.keys.object(okey);
    let slot = this.slots.get(key);
    if (slot) return slot;
    if (assumeAbsent) slot = { key, okey, mod: 0 };
    else {
      const res = await this.client.kv.range({ key: Buffer.from(key) });
      this.seen(Number(res.header.revision));
      const kv = res.kvs[0];
      slot = { key, okey, mod: kv ? Number(kv.mod_revision) : 0, cur: kv ? decodeObject(kv) : undefined };
    }
    this.slots.set(key, slot);
    return slot;
  }

  private seen(revision: number): void {
    this.snapshot = Math.max(this.snapshot, revision);
  }

  /** The object as the ops so far left it (a copy: the rules never change what they are given). */
  private state(slot: Slot): Resource | undefined {
    const o = slot.next === undefined ? slot.cur : (slot.next ?? undefined);
    return o && structuredClone(o);
  }

  needsCommit(): boolean {
    return this.guardsOrFence || this.writes();
  }

  /** Whether an object changes (a guards-only txn writes nothing and makes no revision). */
  writes(): boolean {
    return [...this.slots.values()].some((s) => s.next !== undefined);
  }

  commit(txnId: string): { compare: ICompare[]; success: IRequestOp[]; failure: IRequestOp[] } {
    const compare = [...this.compares];
    const success: IRequestOp[] = [];
    const index = new Map<string, boolean>(); // owners/ entry → put (true) or delete (false)
    for (const e of this.staleEntries) index.set(e, false);
    for (const s of this.slots.values()) {
      compare.push({ key: Buffer.from(s.key), target: 'Mod', result: 'Equal', mod_revision: s.mod });
      if (s.next === undefined) continue;
      if (s.next) success.push({ request_put: { key: Buffer.from(s.key), value: encodeObject(s.next) } });
      else if (s.mod) success.push({ request_delete_range: { key: Buffer.from(s.key) } });
      const before = new Set((s.cur?.metadata.ownerReferences ?? []).map((r) => r.uid));
      const after = new Set((s.next?.metadata.ownerReferences ?? []).map((r) => r.uid));
      for (const uid of before) if (!after.has(uid)) index.set(this.keys.ownerEntry(uid, s.okey), false);
      for (const uid of after) if (!before.has(uid)) index.set(this.keys.ownerEntry(uid, s.okey), true);
    }
    for (const [key, put] of index)
      success.push(
        put
          ? { request_put: { key: Buffer.from(key), value: Buffer.alloc(0) } }
          : { request_delete_range: { key: Buffer.from(key) } },
      );
    if (success.length)
      success.push({ request_put: { key: Buffer.from(this.keys.revision), value: Buffer.from(txnId) } });
    return { compare, success, failure: [{ request_range: { key: Buffer.from(this.keys.revision) } }] };
  }

  /** Written results carry the commit's revision as their resourceVersion. */
  finish(results: Resource[], revision: number): Resource[] {
    for (const o of this.written) o.metadata.resourceVersion = String(revision);
    return results;
  }
}
