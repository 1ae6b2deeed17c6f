/**
 * The AgentSession reconciler: read → observe → plan → act → one status write (Flux's deferred
 * patch). The plan (plan.ts) is pure; the observer (observe.ts) reads tmux, files and git; the
 * actuator (actuator.ts) performs the plan's effects and feeds their outcomes back. Everything a
 * restarted controller needs is in status (phase, run, restarts, due times) or tagged on the tmux
 * session (@orchctl-tags: uid, run key, store), so a killed controller resumes by adoption.
 *
 * On a node (`node` set), it acts only on sessions bound to that node, and a run left active by a
 * lost node is taken over at the top of the pass (epoch.ts). Its status writes are fenced on the
 * binding it read (client/status.ts): a write for a session moved meanwhile is dropped.
 *
 * The plan's Events (RecordEvent) are not performed as they come: each is held until the status
 * write that records its transition — the Launch's record of a new run, the pass's one write, the
 * removal of the finalizer — and written in the same transaction. A controller killed in between
 * finds the transition not made and makes (and tells) it again; never an Event twice or none.
 */
import type { AgentSession, AgentSessionStatus } from '../../api/kinds.js';
import { ownedBy } from '../../api/status-fields.js';
import { isBindingFenced, writeOwnedStatus } from '../../client/status.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import { failpoint, holdpoint } from '../../runtime/failpoints.js';
import { OwnWrites } from '../../runtime/own-writes.js';
import type { Store } from '../../store/store.js';
import { type ActuatorDeps, SESSION_FINALIZER, SessionActuator } from './actuator.js';
import { effective } from './decide.js';
import type { EventNote } from '../../client/events.js';
import type { Actuator, Effect, Outcome } from './effects.js';
import { ACTIVE_PHASES, type Phase } from './machine.js';
import { type ObserverDeps, SessionObserver, type SessionObservation } from './observe.js';
import { type Continuation, gitKey, type Observed, plan, planFinalize } from './plan.js';
import { boundTo, takeOver } from './epoch.js';
import { planFreeze } from './freeze.js';
import { continueRun, stopRun } from '../../observers/process.js';

export { SESSION_FINALIZER } from './actuator.js';
export type { SessionMetricsHooks } from '../../api/metrics-hooks.js';
export type { Logger } from '../../runtime/log.js';

/** What the reconciler needs: what its observer reads and its actuator acts on (each says why). */
export type SessionDeps = ObserverDeps &
  Omit<ActuatorDeps, 'forget' | 'passStore'> & {
    /** Tests replace the world: a scripted observer and a recording actuator (no tmux). */
    observer?: SessionObservation;
    actuator?: Actuator & {
      delivery?(key: string, run: number): unknown;
      resumed?(key: string, run: number): unknown;
      message?(key: string): unknown;
      deliveriesInFlight?(): number;
    };
    /** This node's name: only sessions bound to it are reconciled (unset: every session, as in unit tests). */
    node?: string;
  };

/** A frozen session is looked at again this often (the thaw itself wakes it through its watch). */
const FROZEN_RECHECK_MS = 30_000;

/** Plan steps one pass may take (a launch is three: prepare, record and start, go on). */
const MAX_STEPS = 12;

export class SessionReconciler implements Reconciler {
  /** Sessions admitted by this process whose Starting status may not be in the cache yet. */
  private readonly reservations = new Set<string>();
  private readonly observer: SessionObservation;
  private readonly actuator: NonNullable<SessionDeps['actuator']>;
  /** The writes a pass goes on from, whose echoes need not wake it (runtime/own-writes.ts; setup.ts). */
  readonly ownWrites = new OwnWrites('AgentSession');
  /** The store of those writes (ActuatorDeps.passStore). */
  private readonly passStore: Store;

  constructor(private readonly d: SessionDeps) {
    this.passStore = this.ownWrites.through(d.store);
    this.observer = d.observer ?? new SessionObserver(d);
    const forget = (key: string, ws?: string) => this.observer.forget(key, ws);
    this.actuator = d.actuator ?? new SessionActuator({ ...d, passStore: this.passStore, forget });
  }

  /** Prompt pastes still waiting for their pane (--once waits for them before exiting). */
  deliveriesInFlight(): number {
    return this.actuator.deliveriesInFlight?.() ?? 0;
  }

  async reconcile(key: string): Promise<Result | undefined> {
    const [namespace, name] = key.split('/');
    let obj = await this.d.store.get({ kind: 'AgentSession', namespace, name });
    if (!obj || (this.d.node !== undefined && !boundTo(obj, this.d.node))) {
      this.reservations.delete(key);
      return;
    }
    if (obj.metadata.deletionTimestamp) return this.finalize(key, obj);
    if (!obj.metadata.finalizers?.includes(SESSION_FINALIZER)) {
      // The finalizer guarantees we stop the tmux session before the object disappears. Stored
      // before anything else is done, and the pass goes on from what was stored (a pass of its own
      // cost every launch a whole reconcile).
      const finalizers = [...(obj.metadata.finalizers ?? []), SESSION_FINALIZER];
      obj = await this.passStore.update({ ...obj, metadata: { ...obj.metadata, finalizers } });
    }
    await holdpoint('session-reconcile', (m) => this.d.log.warn(`agentsession ${key}: ${m}`));
    // Frozen (orchctl freeze): the pass only holds it; thawed: it is continued, then a fresh pass.
    const mark = this.observer.freezeMark?.(obj);
    if (mark || obj.status?.frozen) {
      const r = await this.freezePass(key, obj, mark);
      if (r) return r;
    }
    const resolved = this.observer.resolve(obj);
    const held: EventNote[] = [];
    const act = (o: AgentSession, effects: Effect[]) => this.actuator.run(key, o, holdEvents(effects, held));
    const moved = this.d.node !== undefined ? takeOver(obj, this.d.node, Date.now()) : undefined;
    if (moved) await act(obj, moved.effects);
    let observed: Observed = await this.observer.observe(key, obj, resolved);
    if (moved) observed.moved = { note: moved.note };
    let status: AgentSessionStatus = moved?.status ?? obj.status ?? {};
    let outcomes: Outcome[] = [];
    let continuation: Continuation | undefined;
    let admitting = (status.phase ?? 'Pending') === 'Pending';
    for (let step = 0; step < MAX_STEPS; step++) {
      // Counted right before the plan and reserved right after, with no await between: another
      // worker cannot admit into the same slot. Only for a session that may start now.
      if (admitting) observed.admission = this.observer.admission(key, obj, resolved, this.reservations);
      observed.delivery = this.actuator.delivery?.(key, status.run ?? 0) as Observed['delivery'];
      observed.resumed = this.actuator.resumed?.(key, status.run ?? 0) as Observed['resumed'];
      observed.message = this.actuator.message?.(key) as Observed['message'];
      const now = Date.now();
      const out = plan({ key, obj, status, observed, resolved, now, outcomes, continuation });
      if (out.reserve) this.reservations.add(key);
      status = out.status;
      observed = out.observed;
      outcomes = await act(obj, out.effects);
      const launched = outcomes.find((o) => o.type === 'Launched');
      if (launched?.type === 'Launched') obj = launched.obj; // the run is recorded: later writes go on from it
      if (out.needs?.agent) observed.agent = await this.observer.agent(key, obj, status, resolved, observed.paneInfo);
      // Asked and answered for this workdir and starting point, whatever the answer (no repository: none).
      if (out.needs?.git) observed = { ...observed, ...(await this.observer.git(status)), gitKey: gitKey(status) };
      continuation = out.continuation;
      admitting ||= !!out.needs?.admission;
      if (!out.done) continue;
      failpoint('session-before-status');
      await this.write(obj, status, held);
      failpoint('session-after-status');
      if (!ACTIVE_PHASES.has(status.phase as Phase)) this.reservations.delete(key);
      return out.requeueAfterMs === undefined ? undefined : { requeueAfterMs: out.requeueAfterMs };
    }
    await this.write(obj, status, held);
    this.d.log.warn(`agentsession ${key}: no settled plan after ${MAX_STEPS} steps; looking again`);
    return { requeueAfterMs: 1000 };
  }

  /**
   * The one status write of a pass: this reconciler's fields, merged onto what others wrote meanwhile,
   * with the Events held since the last write, in one transaction.
   */
  private async write(obj: AgentSession, status: AgentSessionStatus, held: EventNote[]): Promise<void> {
    const mine = { ...status, observedGeneration: obj.metadata.generation };
    const events = { recorder: this.d.recorder, events: held.splice(0) };
    try {
      await writeOwnedStatus(this.passStore, obj, 'session', ownedBy('session', mine), undefined, events);
    } catch (e) {
      if (!isBindingFenced(e)) throw e;
      this.d.log.info(`agentsession ${obj.metadata.namespace}/${obj.metadata.name}: ${(e as Error).message}`);
    }
  }

  /** The freeze pass (freeze.ts); undefined when the session is neither frozen nor being thawed. */
  private async freezePass(key: string, obj: AgentSession, mark: string | undefined): Promise<Result | undefined> {
    const status = obj.status ?? {};
    const pane = (await this.observer.panesOf(obj.metadata.uid!)).find(
      (p) => p.key === `${key}#${status.run ?? 0}` && !p.dead,
    );
    const out = planFreeze({ status, mark, pane, now: Date.now() });
    if (!out.hold && !status.frozen) return undefined;
    if (out.signal === 'SIGSTOP' && pane) stopRun(pane.pid);
    else if (out.signal === 'SIGCONT' && pane) continueRun(pane.pid);
    await this.write(obj, out.status, out.events);
    // Held: looked at again now and then (SIGSTOP once more, in case something sent SIGCONT);
    // thawed: the next pass starts from the status just written.
    return { requeueAfterMs: out.hold ? FROZEN_RECHECK_MS : 0 };
  }

  private async finalize(key: string, obj: AgentSession): Promise<Result | undefined> {
    if (!obj.metadata.finalizers?.includes(SESSION_FINALIZER)) return;
    const agent = this.observer.resolve(obj).agent;
    const out = planFinalize({
      key,
      obj,
      panes: await this.observer.panesOf(obj.metadata.uid!),
      stopKeys: agent?.stop?.keys ?? ['C-c'],
      graceMs: effective(obj.spec ?? {}, undefined, agent?.stop?.gracePeriod).graceMs,
      projectPath: this.observer.projectPath(obj),
      now: Date.now(),
    });
    const held: EventNote[] = [];
    if (out.status) await this.write(obj, out.status, held);
    await this.actuator.run(key, obj, holdEvents(out.effects, held));
    if (!out.requeueAfterMs) this.reservations.delete(key);
    return out.requeueAfterMs === undefined ? undefined : { requeueAfterMs: out.requeueAfterMs };
  }
}

/**
 * The effects without their RecordEvents, which go into `held`; a Launch or a RemoveFinalizer takes
 * what is held, for its own write (the Events of everything the pass did before it).
 */
function holdEvents(effects: Effect[], held: EventNote[]): Effect[] {
  const out: Effect[] = [];
  for (const e of effects) {
    if (e.type === 'RecordEvent') held.push({ type: e.eventType, reason: e.reason, message: e.message });
    else if (e.type === 'Launch' || e.type === 'RemoveFinalizer') out.push({ ...e, events: held.splice(0) });
    else out.push(e);
  }
  return out;
}
