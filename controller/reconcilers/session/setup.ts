/**
 * What wakes the session reconciler (keyed by session, `namespace/name`):
 *  - any change to an AgentSession: its own key; and when it is not (or no longer) running, every
 *    Pending session of its namespace (it may have freed an admission slot);
 *  - a change to an Agent, Project or SessionPolicy that a session reads (spec, metadata, a policy's
 *    budget exceeded or not; not other status writes): every session of that namespace;
 *  - a write to a live run's hook file or transcript: that session, at once;
 *  - a pane dying (tmux's pane-died hook): the live sessions (and those being deleted) whose observed
 *    facts changed, by the observe tick's filter on a fresh snapshot (death-changes.ts);
 *  - every observe interval: those of them whose observed facts changed since (changes.ts: one
 *    tmux snapshot and a few stats per session), and each at least every FULL_LOOK_MS;
 *  - when the controllers start, every session; every resync period, every session not live
 *    (a live one's own look is the observe tick's);
 *  - when its plan said to look again (requeueAfterMs: time-based transitions);
 *  - a background prompt delivery finishing (the reconciler enqueues its session).
 * --once also waits for deliveries in flight. A failing reconcile shows on the object
 * (Reconciled=False and a Warning Event).
 */
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import { budgetExceeded } from '../../api/pause.js';
import { resumeNotes } from '../../api/resume.js';
import { ACTIVE_PHASES, type Phase } from '../../api/phases.js';
import type { Resource } from '../../api/types.js';
import type { AgentFeed } from '../../observers/agent-feed.js';
import type { AuditLog } from '../../observers/audit.js';
import type { FileWatchSource } from '../../runtime/file-source.js';
import { type EventSource, type Manager, queueKey } from '../../runtime/manager.js';
import { onSpecChange } from '../../runtime/predicates.js';
import { ReconcileErrorReporter } from '../../runtime/reconcile-errors.js';
import type { EventLogs } from '../../store/eventlog.js';
import type { ControllerServices } from '../services.js';
import { ChangeFilter } from './changes.js';
import { deathChanges } from './death-changes.js';
import { boundTo } from './epoch.js';
import { freesSlot } from './observe.js';
import { SessionReconciler, type SessionMetricsHooks } from './reconciler.js';

export interface SessionSetupDeps extends ControllerServices {
  workers: number;
  resyncMs: number;
  observeEveryMs: number;
  /** spec.unschedulable of this host's Node: admission stops while it is true. */
  nodeUnschedulable: () => boolean;
  audit: AuditLog;
  logs: EventLogs;
  feed: AgentFeed;
  /** argv of `orchctl hook` (absolute node and bin paths), for agents that report through hooks. */
  hookCommand: string[];
  /** Hook files and transcripts of live runs. */
  feedFiles: FileWatchSource;
  /** Fires when a pane died or the tmux server went away. */
  paneDeaths: EventSource<void>;
  metrics?: SessionMetricsHooks;
  /** This node's name: only sessions bound to it are reconciled (epoch.ts). */
  node?: string;
}

/** A live session is queued by the observe tick at least this often, changed or not. */
export const FULL_LOOK_MS = 5 * 60_000;

const phaseOf = (o: Resource) => (o.status as { phase?: Phase } | undefined)?.phase;
const isActive = (o: Resource) => {
  const phase = phaseOf(o);
  return !!phase && ACTIVE_PHASES.has(phase);
};

/**
 * Whether a change to `o` may have given an admission slot back, so Pending sessions may start now.
 * A session that never ran held none: counting its changes in queued every Pending key of the
 * namespace for each Pending session applied — O(N²), an event loop blocked ~18 s by 1000 at once.
 */
export function mayFreeSlot(o: Resource): boolean {
  const s = o.status;
  if (isActive(o)) return freesSlot(s); // a paused run that gave its slot up (pause.ts)
  return !((s?.phase ?? 'Pending') === 'Pending' && !s?.run);
}

export function setup(mgr: Manager, d: SessionSetupDeps): SessionReconciler {
  const sessions = mgr.informer('AgentSession');
  const evaluations = mgr.informer('Evaluation');
  const ctl = mgr.controller('agentsession', {
    workers: d.workers,
    errors: new ReconcileErrorReporter({
      store: mgr.store,
      recorder: d.recorder,
      kind: 'AgentSession',
      cached: (k) => sessions.get(k.split('/')[0], k.split('/')[1]),
    }),
  });
  const reconciler = new SessionReconciler({
    store: mgr.store,
    sessions,
    agents: mgr.informer('Agent'),
    projects: mgr.informer('Project'),
    policies: mgr.informer('SessionPolicy'),
    tmux: d.tmux,
    panes: d.panes,
    storeUid: d.storeUid,
    git: d.git,
    host: d.host,
    nodeUnschedulable: d.nodeUnschedulable,
    recorder: d.recorder,
    audit: d.audit,
    home: d.home,
    log: d.log,
    enqueue: ctl.enqueue,
    metrics: d.metrics,
    logs: d.logs,
    feed: d.feed,
    hookCommand: d.hookCommand,
    node: d.node,
    watch: (k, files) => d.feedFiles.watch(k, files),
    // The judge's notes on the last run go into the next run's prompt.
    resumeNotes: (s: AgentSession) => resumeNotes(s, evaluations.list(s.metadata.namespace ?? '')),
  });

  const all = (ns?: string) => sessions.list(ns).map(queueKey);
  const pending = (ns: string) =>
    sessions
      .list(ns)
      .filter((o) => (phaseOf(o) ?? 'Pending') === 'Pending')
      .map(queueKey);
  const isLive = (o: Resource) => isActive(o) || !!(phaseOf(o) && o.metadata.deletionTimestamp);
  // A node fingerprints only its own sessions: the others' files are on other hosts.
  const mine = (o: AgentSession) => d.node === undefined || boundTo(o, d.node);
  const liveSessions = () => sessions.list().filter((o) => isLive(o) && mine(o));
  const notLive = () =>
    sessions
      .list()
      .filter((o) => !isLive(o))
      .map(queueKey);
  const changes = new ChangeFilter({ panes: d.panes, git: d.git, fullLookMs: FULL_LOOK_MS });
  const changed = async () => {
    const list = liveSessions();
    try {
      return await changes.changed(list);
    } catch (e) {
      d.log.warn(`agentsession: observe tick: ${(e as Error).message}; looking at every live session`);
      return list.map(queueKey);
    }
  };
  const namespace = (o: Resource) => all(o.metadata.namespace ?? '');

  ctl
    .for('AgentSession', { ownWrites: reconciler.ownWrites })
    .watches('AgentSession', (o) => (mayFreeSlot(o) ? pending(o.metadata.namespace ?? '') : []))
    .watches('Agent', onSpecChange(namespace))
    .watches('Project', onSpecChange(namespace))
    .watches(
      'SessionPolicy',
      onSpecChange(namespace, (p) => budgetExceeded(p as SessionPolicy)),
    )
    .watches(d.feedFiles, (key) => [key])
    .watches(deathChanges(d.paneDeaths, changed), (keys) => keys)
    .every(d.observeEveryMs, changed)
    .every(d.resyncMs, notLive)
    .atStart(all)
    .inFlight(() => reconciler.deliveriesInFlight())
    .onStop(() => changes.close())
    .complete(reconciler);
  // A run that is over needs no file watches.
  sessions.onChange((_t, o) => {
    if (!isActive(o)) d.feedFiles.unwatch(queueKey(o));
  });
  return reconciler;
}
