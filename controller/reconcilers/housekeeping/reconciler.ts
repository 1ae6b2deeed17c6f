/**
 * Housekeeping: applies the retention (api/retention.ts) to what the control plane keeps in the store.
 *  - `Event`: Events whose last occurrence is older than the Event TTL (1 h by default, as in Kubernetes).
 *  - `Evaluation`: beyond the newest `evaluationsPerSession` Evaluations of a session (by run), those
 *    whose judgement is over (Judged, Failed). One still Pending or Judging is work under way, and the
 *    newest of a session is what the autopilot and `orchctl describe` read: neither is deleted.
 *  - `AgentSession`: a session an Autopilot started (its label) that completed (Succeeded, Failed,
 *    Killed, TimedOut) longer ago than `autopilotSessionTtlMs` — each start makes a new session, so
 *    without this they pile up. Never one a Decision waiting for approval names.
 * One key each: the work queue keeps two passes of one from overlapping. Deletions tolerate NotFound
 * (another pass, a person, the owner's cascade), so a pass killed half-way is simply done again.
 */
import { isApiError } from '../../api/errors.js';
import { AUTOPILOT_LABEL, type Decision } from '../../api/autopilot.js';
import type { Evaluation } from '../../api/evaluation.js';
import type { AgentSession } from '../../api/session.js';
import type { Resource } from '../../api/types.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { DEFAULT_RETENTION, type Retention } from '../../api/retention.js';

export const EVENTS = 'Event';
export const EVALUATIONS = 'Evaluation';
export const AUTOPILOT_SESSIONS = 'AgentSession';
const FINISHED = new Set(['Succeeded', 'Failed', 'Killed', 'TimedOut']);
export const DEFAULT_EVENT_TTL_MS = DEFAULT_RETENTION.eventTtlMs;

const JUDGEMENT_OVER = new Set(['Judged', 'Failed']);

/** The Evaluations beyond the newest `keep` of each session whose judgement is over (pure). */
export function evaluationsToDelete(items: Evaluation[], keep: number): Evaluation[] {
  const bySession = new Map<string, Evaluation[]>();
  for (const e of items) {
    const k = `${e.metadata.namespace ?? ''}/${e.spec?.sessionRef ?? ''}`;
    bySession.set(k, [...(bySession.get(k) ?? []), e]);
  }
  const out: Evaluation[] = [];
  for (const list of bySession.values()) {
    if (list.length <= keep) continue;
    list.sort(
      (a, b) =>
        (b.spec?.run ?? 0) - (a.spec?.run ?? 0) ||
        String(b.metadata.creationTimestamp ?? '').localeCompare(String(a.metadata.creationTimestamp ?? '')),
    );
    for (const e of list.slice(Math.max(2, keep))) if (JUDGEMENT_OVER.has(String(e.status?.phase ?? ''))) out.push(e);
  }
  return out;
}

/** Finished sessions an Autopilot started, completed before `cutoff`, that no pending Decision names (pure). */
export function autopilotSessionsToDelete(
  sessions: AgentSession[],
  decisions: Decision[],
  cutoff: number,
): AgentSession[] {
  const named = new Set(
    decisions
      .filter((d) => d.status?.phase === 'PendingApproval' && d.spec?.target?.session)
      .map((d) => `${d.metadata.namespace ?? ''}/${d.spec?.target.session}`),
  );
  return sessions.filter((s) => {
    const st = s.status;
    if (!s.metadata.labels?.[AUTOPILOT_LABEL] || !FINISHED.has(String(st?.phase)) || s.metadata.deletionTimestamp)
      return false;
    const done = Date.parse(String(st?.completionTime ?? ''));
    return done < cutoff && !named.has(`${s.metadata.namespace ?? ''}/${s.metadata.name}`);
  });
}

export class HousekeepingReconciler implements Reconciler {
  private readonly retention: Retention;
  /**
   * No Event can expire before this (what the last pass kept, plus the TTL): a pass before it lists
   * nothing — the list was every Event (two or more a session) every minute. An Event recorded with
   * an older lastTimestamp by a host whose clock is behind goes late by that skew.
   */
  private eventsDueAt = 0;

  constructor(
    private readonly d: {
      store: Store;
      eventTtlMs?: number;
      retention?: Partial<Retention>;
      now?: () => number;
      /**
       * The sessions' cache: a pass whose cache shows no Autopilot session to delete reads no store
       * (it listed every session and Decision each minute). Without it, every pass lists the store.
       */
      sessions?: Pick<Informer<'AgentSession'>, 'list'>;
    },
  ) {
    this.retention = { ...DEFAULT_RETENTION, ...d.retention, ...(d.eventTtlMs ? { eventTtlMs: d.eventTtlMs } : {}) };
  }

  async reconcile(key: string): Promise<void> {
    if (key === EVENTS) await this.events();
    else if (key === EVALUATIONS) await this.evaluations();
    else if (key === AUTOPILOT_SESSIONS) await this.autopilotSessions();
  }

  private async autopilotSessions(): Promise<void> {
    const cutoff = (this.d.now ?? Date.now)() - this.retention.autopilotSessionTtlMs;
    // The cache first: one that shows none to delete ends the pass (one it lags behind is caught by
    // the next); one that shows some, the store decides — a pending Decision may be newer than a cache.
    if (this.d.sessions && !autopilotSessionsToDelete(this.d.sessions.list(), [], cutoff).length) return;
    const [sessions, decisions] = await Promise.all([this.d.store.list('AgentSession'), this.d.store.list('Decision')]);
    await this.remove(autopilotSessionsToDelete(sessions.items, decisions.items, cutoff));
  }

  private async events(): Promise<void> {
    const now = (this.d.now ?? Date.now)();
    if (now < this.eventsDueAt) return;
    const { items } = await this.d.store.list('Event');
    const cutoff = now - this.retention.eventTtlMs;
    const last = (e: (typeof items)[number]) => Date.parse(String(e.lastTimestamp ?? e.metadata.creationTimestamp));
    const old = items.filter((e) => last(e) < cutoff);
    await this.remove(old);
    // The oldest kept, or one recorded from now on (whose lastTimestamp is now or later), expires no sooner.
    let oldest = now;
    for (const e of items) if (last(e) >= cutoff) oldest = Math.min(oldest, last(e));
    this.eventsDueAt = oldest + this.retention.eventTtlMs;
  }

  private async evaluations(): Promise<void> {
    const { items } = await this.d.store.list('Evaluation');
    await this.remove(evaluationsToDelete(items, this.retention.evaluationsPerSession));
  }

  private async remove(objects: Resource[]): Promise<void> {
    // All of them: a cap per pass falls behind whatever records faster than it (the soak showed Events
    // growing under a 500-a-minute cap); each delete is its own short transaction.
    for (const o of objects)
      await this.d.store
        .delete(
          { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name },
          // As listed: an Event seen again meanwhile (its count and lastTimestamp moved on) stays.
          { resourceVersion: o.metadata.resourceVersion },
        )
        .catch((err: unknown) => {
          // Deleted meanwhile (another pass, a person, its owner) or changed: the next sweep looks again.
          if (!isApiError(err, 'NotFound') && !isApiError(err, 'Conflict')) throw err;
        });
  }
}
