/**
 * The scheduler (control plane): gives each session that needs one a binding to a Node —
 * `status.binding = {nodeName, epoch, boundAt}` written with compare-and-swap on the session's
 * resourceVersion, so two schedulers (or a deposed leader) never bind one session twice, and a
 * session someone changed meanwhile is planned again from a fresh read. None fits: condition
 * Scheduled=False (reason Unschedulable) and a FailedScheduling Event in kubectl's words, written
 * only when the message changes, so a retry that finds the same answer writes nothing. Events go in
 * the transaction of the status change they tell of (never lost to a crash, never told twice).
 *
 * Capacity is counted from the informer cache plus the bindings this process made that the cache
 * has not shown yet (kube-scheduler's "assumed" pods), so a burst of new sessions is spread and
 * respects maxSessions without waiting for the watch. Keyed by session (`namespace/name`); what
 * wakes it is in setup.ts. One worker: placements are decided one after another.
 */
import { SessionReason } from '../../api/event-reasons.js';
import { getCondition, setCondition } from '../../api/conditions.js';
import type { SchedulerMetricsHooks } from '../../api/metrics-hooks.js';
import { HEARTBEAT_MS } from '../../api/node.js';
import { resolvePolicy } from '../../api/policy.js';
import type { AgentSession, AgentSessionStatus, BindingStatus } from '../../api/session.js';
import { keyOfKind } from '../../api/kinds.js';
import type { Condition } from '../../api/types.js';
import { type EventNote, type EventRecorder, isEventRace } from '../../client/events.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import { retryOnConflict } from '../../store/retry.js';
import { isFenced, type Store, type TxnOptions, type WriteOp } from '../../store/store.js';
import { betterPlace, bindingFor, needsBinding, occupiesNode, type ScheduleInput, schedule } from './plan.js';

export interface SchedulerDeps {
  store: Store;
  sessions: Pick<Informer<'AgentSession'>, 'get' | 'list'>;
  nodes: Pick<Informer<'Node'>, 'list'>;
  projects: Pick<Informer<'Project'>, 'get'>;
  policies: Pick<Informer<'SessionPolicy'>, 'list'>;
  recorder: Pick<EventRecorder, 'ops'>;
  metrics?: SchedulerMetricsHooks;
  /** Options of every write (the control plane's lease fence, where the store has one). */
  txnOptions?: () => TxnOptions;
  /** How long after the start "no Node registered" is not yet an answer (default: NO_NODES_GRACE_MS). */
  noNodesGraceMs?: number;
  now?: () => number;
}

/**
 * A control plane starting with its node agents (the embedded one, or `orchctl node` on each host
 * started with it) sees no Node until they register, within their first heartbeat: until then a
 * session with no Node to go to waits, without the Warning (a Node registering wakes it sooner).
 */
export const NO_NODES_GRACE_MS = HEARTBEAT_MS;

/** A binding this process wrote, until the cache shows it (or it is this old and the cache is trusted again). */
interface Assumed {
  binding: BindingStatus;
  resourceVersion: number;
  at: number;
}
const ASSUME_TTL_MS = 30_000;
const ATTEMPTS = 4;

export class SchedulerReconciler implements Reconciler {
  private readonly assumed = new Map<string, Assumed>();
  /** When this scheduler started (its role began leading): NO_NODES_GRACE_MS runs from here. */
  private readonly startedAt: number;

  constructor(private readonly d: SchedulerDeps) {
    this.startedAt = this.now();
  }

  private now(): number {
    return (this.d.now ?? Date.now)();
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    let s = this.d.sessions.get(namespace, name);
    const mine = this.assumed.get(key);
    // The cache has not caught up with a binding written here: that copy is older than the binding.
    if (s && mine && Number(s.metadata.resourceVersion) < mine.resourceVersion) return;
    // Caught up (or gone): the cache's copy holds the binding, so the assumption is dropped here, as
    // boundCounts does (which runs only where a Node has a limit or there is a choice of Nodes).
    if (mine) this.assumed.delete(key);
    if (!s) return;
    // Changed since it was read (by a person, a node, another scheduler; or its Event by another
    // writer): plan again from the store.
    const stale = (e: unknown) => isEventRace(e) && !isFenced(e);
    return retryOnConflict(
      async (attempt) => {
        if (attempt > 0) s = await this.d.store.get(keyOfKind('AgentSession', s!));
        return s && this.place(key, s);
      },
      { attempts: ATTEMPTS, retryOn: stale },
    ).catch((e: unknown) => {
      if (stale(e)) throw new Error(`AgentSession ${key}: binding still conflicting after ${ATTEMPTS} attempts`);
      this.d.metrics?.onScheduleAttempt?.('error');
      throw e;
    });
  }

  private async place(key: string, s: AgentSession): Promise<Result | undefined> {
    const input = this.input(key, s);
    if (needsBinding(s)) {
      const r = schedule(input);
      if (r.fits) {
        await this.bind(key, s, r.node);
        return undefined;
      }
      const wait = this.startedAt + (this.d.noNodesGraceMs ?? NO_NODES_GRACE_MS) - this.now();
      if (!input.nodes.length && wait > 0) return { requeueAfterMs: wait };
      this.d.metrics?.onScheduleAttempt?.('unschedulable', Object.keys(r.reasons));
      await this.unschedulable(s, r.message);
      return undefined;
    }
    const to = betterPlace(input);
    if (to) await this.bind(key, s, to);
    return undefined;
  }

  private input(key: string, s: AgentSession): ScheduleInput {
    const ns = s.metadata.namespace;
    const projectRef = s.spec?.projectRef;
    return {
      session: s,
      project: projectRef ? this.d.projects.get(ns, projectRef) : undefined,
      policy: resolvePolicy(s, this.d.policies.list()),
      nodes: this.d.nodes.list(),
      bound: this.boundCounts(key),
    };
  }

  /**
   * Sessions occupying each Node: the cache, with this process's newer bindings over it. Counted on
   * the first question only: one Node without maxSessions asks none, and a pass over every session
   * for each of N sessions scheduled was O(N²) (issue 29: ~2 % of the controller's CPU at 1000).
   */
  private boundCounts(except: string): (node: string) => number {
    let counts: Map<string, number> | undefined;
    return (node) => {
      counts ??= this.countBound(except);
      return counts.get(node) ?? 0;
    };
  }

  private countBound(except: string): Map<string, number> {
    const counts = new Map<string, number>();
    const now = this.now();
    for (const o of this.d.sessions.list()) {
      const k = `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      if (k === except || !occupiesNode(o)) continue;
      let binding = o.status?.binding;
      const a = this.assumed.get(k);
      if (a) {
        if (Number(o.metadata.resourceVersion) >= a.resourceVersion || now - a.at > ASSUME_TTL_MS)
          this.assumed.delete(k);
        else binding = a.binding;
      }
      if (binding) counts.set(binding.nodeName, (counts.get(binding.nodeName) ?? 0) + 1);
    }
    return counts;
  }

  private async bind(key: string, s: AgentSession, node: string): Promise<void> {
    const now = new Date(this.now()).toISOString();
    const before = s.status?.binding;
    const binding = bindingFor(s, node, now);
    const conditions: Condition[] = structuredClone(s.status?.conditions ?? []);
    setCondition(
      conditions,
      {
        type: 'Scheduled',
        status: 'True',
        reason: 'Scheduled',
        message: `bound to node ${node} (epoch ${binding.epoch})`,
      },
      now,
    );
    const lost = getCondition(conditions, 'NodeLost');
    const rescheduled = lost?.status === 'True';
    if (rescheduled)
      setCondition(
        conditions,
        { type: 'NodeLost', status: 'False', reason: 'Rescheduled', message: `rescheduled to node ${node}` },
        now,
      );
    // A first binding tells nothing a person would look for (Scheduled=True says it); a move does.
    const events: EventNote[] = [];
    if (before)
      events.push({
        type: 'Normal',
        reason: SessionReason.Rescheduled,
        message: `moved from node ${before.nodeName} (no repository there) to node ${node}, which has it`,
      });
    else if (rescheduled)
      events.push({
        type: 'Normal',
        reason: SessionReason.Rescheduled,
        message: `bound to node ${node} after its node was lost`,
      });
    const written = await this.write(s, { ...s.status, binding, conditions }, events);
    this.assumed.set(key, { binding, resourceVersion: Number(written.metadata.resourceVersion), at: this.now() });
    this.d.metrics?.onScheduleAttempt?.('scheduled');
  }

  private async unschedulable(s: AgentSession, message: string): Promise<void> {
    const cond = getCondition(s.status?.conditions, 'Scheduled');
    if (cond?.status === 'False' && cond.message === message) return; // said already
    const conditions: Condition[] = structuredClone(s.status?.conditions ?? []);
    setCondition(conditions, { type: 'Scheduled', status: 'False', reason: 'Unschedulable', message });
    await this.write(s, { ...s.status, conditions }, [
      { type: 'Warning', reason: SessionReason.FailedScheduling, message },
    ]);
  }

  /**
   * Compare-and-swap on the resourceVersion `s` was read at (Conflict when it changed since), with the
   * Events of the change in the same transaction.
   */
  private async write(s: AgentSession, status: AgentSessionStatus, events: EventNote[]): Promise<AgentSession> {
    const ops: WriteOp[] = [
      { op: 'updateStatus', object: { ...s, status } },
      ...(await this.d.recorder.ops(s, events)),
    ];
    const [out] = await this.d.store.txn(ops, this.d.txnOptions?.());
    return out;
  }
}
