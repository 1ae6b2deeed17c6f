/**
 * Node lifecycle (control plane): reads each Node's lease, plans (plan.ts) and writes what a lost or
 * returning node means — the Node's Ready condition, NodeLost on its sessions, and after the grace
 * their unbinding (or, for a run that must not restart, its end as Failed/NodeLost). Session writes
 * are compare-and-swap on a session read while its binding still named the node, so a session the
 * node (or anyone) changed meanwhile is planned again on the next look, never overwritten.
 *
 * A Failed/NodeLost end is a status the session reconciler would otherwise write: the node that
 * owns the run is gone, so the control plane ends it, once, and unbinds it in the same write — the
 * node, if it returns, finds the session no longer bound to it and kills its stale run. A run that
 * is to go on elsewhere is ended in the same unbinding write (Pending, reason NodeLost), never left
 * Running with no pane while the session waits for another node.
 */
import { NodeReason, SessionReason } from '../../api/event-reasons.js';
import { type ConditionInput, getCondition, setCondition } from '../../api/conditions.js';
import { isApiError } from '../../api/errors.js';
import type { Node } from '../../api/node.js';
import { ACTIVE_PHASES, type Phase } from '../../api/phases.js';
import type { AgentSessionStatus } from '../../api/session.js';
import type { Condition } from '../../api/types.js';
import type { EventNote, EventRecorder } from '../../client/events.js';
import { writeStatusMerged } from '../../client/status.js';
import type { Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store, TxnOptions } from '../../store/store.js';
import {
  DEFAULT_GRACE_MS,
  markedLost,
  needsAllSessions,
  nodeLeaseName,
  planNodeLifecycle,
  type Probe,
  probeNode,
  type SessionAction,
} from './plan.js';

export interface NodeLifecycleDeps {
  store: Store;
  nodes: Pick<Informer<'Node'>, 'get'>;
  /** The session cache: its indexes by node find a node's sessions without going over the rest. */
  sessions: Pick<Informer<'AgentSession'>, 'addIndex' | 'byIndex'>;
  recorder: Pick<EventRecorder, 'ops'>;
  /** From the node's last renewal seen to unbinding its sessions (plan.ts checkGrace bounds it). */
  graceMs?: number;
  /** Options of every session write (the control plane's lease fence). */
  txnOptions?: () => TxnOptions;
  now?: () => number;
  /** When this control plane last regained the store after it could not write (runtime/manager.ts). */
  storeReturnedAt?: () => number | undefined;
}

/**
 * A node's last sign of life, seen no earlier than the store's return after this control plane could
 * not write (issue 26 item 1): while the store had no quorum no node could renew its lease either, so
 * that time is not the node's silence. As Kubernetes' node lifecycle stops evicting when a whole zone
 * is unhealthy: a control-plane problem is not a node problem. The node gets a full lease (and grace)
 * from the store's return.
 */
export function sinceStoreReturned(prev: Probe | undefined, back: number | undefined): Probe | undefined {
  if (!prev || back === undefined || prev.seenAt >= back) return prev;
  return { ...prev, seenAt: back };
}

/** Looking again this soon after a write lost a race (someone changed the session meanwhile). */
const RETRY_MS = 200;

/** Index of the session cache: sessions by the node they are bound to. */
const BOUND = 'nodelifecycle:bound';
/** Index of the session cache: sessions marked NodeLost, by the node they are bound to. */
const MARKED = 'nodelifecycle:marked-lost';

export class NodeLifecycleReconciler {
  private readonly probes = new Map<string, Probe>();

  constructor(private readonly d: NodeLifecycleDeps) {
    d.sessions.addIndex(BOUND, (s) => s.status?.binding?.nodeName);
    d.sessions.addIndex(MARKED, (s) => (markedLost(s) ? s.status?.binding?.nodeName : undefined));
  }

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const name = key.slice(key.indexOf('/') + 1);
    const node = this.d.nodes.get('', name);
    if (!node) {
      this.probes.delete(name);
      return undefined;
    }
    const lease = await this.d.store.getLease(nodeLeaseName(name));
    const now = this.now();
    const prev = sinceStoreReturned(this.probes.get(name), this.d.storeReturnedAt?.());
    // A live, Ready node (every 2 s, the usual pass) needs only its sessions marked lost: mostly none.
    const all = needsAllSessions(node, probeNode({ node, lease, prev, now }).lost);
    const sessions = this.d.sessions.byIndex(all ? BOUND : MARKED, name);
    const r = planNodeLifecycle({
      node,
      lease,
      prev,
      sessions,
      now,
      graceMs: this.d.graceMs ?? DEFAULT_GRACE_MS,
    });
    this.probes.set(name, r.probe);
    const current = (r.ready && (await this.writeReady(node, r.ready, now))) || node;
    let raced = false;
    let unbound = 0;
    for (const a of r.sessions) {
      if (!(await this.act(name, a, now))) raced = true;
      else if (a.type === 'Unbind' || a.type === 'Fail') unbound++;
    }
    // A lost node writes nothing: its count of sessions is the control plane's to keep, so `get
    // nodes` counts the sessions bound there now, not what the node last wrote before it was lost.
    const bound = sessions.length - unbound;
    if (getCondition(current.status?.conditions, 'Ready')?.status === 'Unknown' && current.status?.sessions !== bound)
      await writeStatusMerged(this.d.store, current, { ...current.status, sessions: bound });
    const next = raced ? RETRY_MS : r.requeueAfterMs;
    return next !== undefined ? { requeueAfterMs: Math.max(next, 1) } : undefined;
  }

  private async writeReady(node: Node, ready: ConditionInput, now: number): Promise<Node | undefined> {
    const conditions: Condition[] = structuredClone(node.status?.conditions ?? []);
    setCondition(conditions, ready, new Date(now).toISOString());
    const lost = ready.status === 'Unknown';
    const what = lost ? NodeReason.NodeNotReady : NodeReason.NodeReady;
    const event = {
      type: lost ? 'Warning' : 'Normal',
      reason: what,
      message: `Node ${node.metadata.name} status is now: ${what} (${ready.message})`,
    } as const;
    // The Event in the transaction of the condition it tells of: never one without the other.
    return await writeStatusMerged(this.d.store, node, { ...node.status, conditions }, 8, undefined, {
      recorder: this.d.recorder,
      events: [event],
    });
  }

  /** One session's change, if it is still bound to `node` as read. False when it lost a race (look again soon). */
  private async act(node: string, a: SessionAction, now: number): Promise<boolean> {
    const s = a.session;
    if (s.status?.binding?.nodeName !== node) return true;
    const status = changed(a, s.status ?? {}, new Date(now).toISOString());
    const found = a.type === 'Found';
    const reason = found ? SessionReason.NodeReady : SessionReason.NodeLost;
    const event: EventNote = { type: found ? 'Normal' : 'Warning', reason, message: a.message };
    try {
      await this.d.store.txn(
        [{ op: 'updateStatus', object: { ...s, status } }, ...(await this.d.recorder.ops(s, [event]))],
        this.d.txnOptions?.(),
      );
      return true;
    } catch (e) {
      if (isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists')) return false;
      if (isApiError(e, 'NotFound')) return true;
      throw e;
    }
  }
}

/** The session's status after action `a` (only conditions, binding and, for Fail, the run's end). */
function changed(a: SessionAction, before: AgentSessionStatus, now: string): AgentSessionStatus {
  const s: AgentSessionStatus = structuredClone(before);
  s.conditions ??= [];
  const conditions = s.conditions;
  const cond = (type: string, status: Condition['status'], reason: string) =>
    setCondition(conditions, { type, status, reason, message: a.message }, now);
  if (a.type === 'Found') {
    cond('NodeLost', 'False', 'NodeReady');
    return s;
  }
  cond('NodeLost', 'True', 'NodeLost');
  if (a.type === 'MarkLost') return s;
  delete s.binding;
  cond('Scheduled', 'False', 'NodeLost');
  if (a.type === 'Fail') {
    s.phase = 'Failed';
    s.reason = 'NodeLost';
    s.message = a.message;
    s.completionTime = now;
    if (conditions.some((c) => c.type === 'Ready')) cond('Ready', 'False', 'NodeLost');
  } else if (ACTIVE_PHASES.has(s.phase as Phase)) endMovedRun(s, a.message, now);
  return s;
}

/**
 * An unbound session's run, over with its node (the node's fuse hung it up before the grace ran
 * out): ended in status now, so the session does not show Running with no pane while it waits for
 * another node — Pending, reason NodeLost, its run count kept. The node it is bound to next takes it
 * over as a moved run (session/epoch.ts: the note, RunMoved, no restart counted).
 */
function endMovedRun(s: AgentSessionStatus, why: string, now: string): void {
  const message = `run ${s.run ?? 0} ended with its node: ${why}`;
  for (const f of ['tmuxSession', 'stopRequestTime', 'nextRestartTime', 'deadlineTime', 'pause'] as const) delete s[f];
  if (s.lifecycle) delete s.lifecycle.stopReason;
  s.phase = 'Pending';
  s.reason = 'NodeLost';
  s.message = message;
  s.completionTime = now;
  if (s.conditions?.some((c) => c.type === 'Ready'))
    setCondition(s.conditions, { type: 'Ready', status: 'False', reason: 'NodeLost', message }, now);
}

/** The key of every Node in the cache (the periodic look: a lease runs out without any object changing). */
export const nodeKeys = (nodes: Pick<Informer<'Node'>, 'list'>) => nodes.list().map((n) => `/${n.metadata.name}`);
