/**
 * The store as each role of a process writes to it (reads, watches and leases go straight
 * through; docs/multi-host.md, "Fencing"):
 *  - the control plane's writes all carry its lease (TxnOptions.fence): a deposed leader, whose
 *    lease another process took over, writes nothing — no binding, no unbinding, no Decision, no
 *    Event — whatever it still has in flight;
 *  - a node agent writes an AgentSession (status or metadata) only when the object it writes, the
 *    version it compares-and-swaps against, is bound to it. With the retry check in
 *    client/status.ts this is the node-side fence: nothing is written for a session moved away.
 */
import type { Resource } from '../api/types.js';
import type { AgentSessionStatus } from '../api/session.js';
import { fencedByBinding } from '../client/status.js';
import type { Store, TxnOptions, WriteOp } from '../store/store.js';
import { StoreView } from '../store/store-view.js';

/** The control plane's writes, fenced by its lease. */
export class LeaderStore extends StoreView {
  constructor(
    inner: Store,
    private readonly fence: NonNullable<TxnOptions['fence']>,
  ) {
    super(inner);
  }

  txn(ops: WriteOp[], opts: TxnOptions = {}): Promise<Resource[]> {
    return this.inner.txn(ops, { ...opts, fence: opts.fence ?? this.fence });
  }
}

/** A node agent's writes: an AgentSession only while the version written is bound to this node. */
export class NodeStore extends StoreView {
  constructor(
    inner: Store,
    private readonly node: string,
  ) {
    super(inner);
  }

  txn(ops: WriteOp[], opts?: TxnOptions): Promise<Resource[]> {
    for (const op of ops) {
      if ((op.op !== 'update' && op.op !== 'updateStatus') || op.object.kind !== 'AgentSession') continue;
      const bound = (op.object.status as AgentSessionStatus | undefined)?.binding;
      if (bound?.nodeName !== this.node)
        return Promise.reject(
          fencedByBinding(op.object, `bound to ${bound ? `node ${bound.nodeName}` : 'no node'}, not ${this.node}`),
        );
    }
    return this.inner.txn(ops, opts);
  }
}
