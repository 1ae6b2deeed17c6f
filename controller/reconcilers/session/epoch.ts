/**
 * Runs and epochs, the node side (pure). Every binding of a session to a Node has an epoch, one
 * more than the last (the scheduler's); a run records the epoch it was started under
 * (status.lifecycle.epoch). A session bound here whose run is active under an older epoch had that
 * run on a node that was lost: that node's run is over (its fuse killed it; the node kills what is
 * left when it comes back), so this node ends it in status — without looking for it in tmux, which
 * is another host's — and starts a new run at once, no backoff, with a note saying why (the
 * restart note's path, PrepareRun `note`) and the previous run's handoff where this node has it.
 *
 * A run with no recorded epoch predates bindings (started before an upgrade): it is adopted, not
 * ended.
 */
import { SessionReason } from '../../api/event-reasons.js';
import { getCondition, setCondition } from '../../api/conditions.js';
import type { AgentSession, AgentSessionStatus } from '../../api/session.js';
import type { Effect } from './effects.js';
import { ACTIVE_PHASES, type Phase } from './machine.js';

/** Whether `obj` is one this node reconciles: bound to it (a node acts on nothing else). */
export const boundTo = (obj: AgentSession, node: string) => obj.status?.binding?.nodeName === node;

/**
 * The epoch of the run in status, when it is older than the binding's (the run was on a lost node):
 * still active in status, or already ended by node lifecycle when it unbound the session (Pending,
 * reason NodeLost, nodelifecycle/reconciler.ts) and not yet taken over (NodeLost's reason is not
 * RunMoved).
 */
export function staleEpoch(status: AgentSessionStatus | undefined): number | undefined {
  const bound = status?.binding?.epoch;
  const ran = status?.lifecycle?.epoch;
  if (bound === undefined || ran === undefined || ran >= bound) return undefined;
  if (ACTIVE_PHASES.has(status?.phase as Phase)) return ran;
  const ended = status?.phase === 'Pending' && status.reason === 'NodeLost';
  return ended && getCondition(status.conditions, 'NodeLost')?.reason !== 'RunMoved' ? ran : undefined;
}

export interface Moved {
  /** The status to plan from: Pending, the lost run ended, its count kept (the next run is run + 1). */
  status: AgentSessionStatus;
  /** What the new run's prompt is told (PrepareRun `note`). */
  note: string;
  effects: Effect[];
}

/** A session whose run was on a lost node, taken over by `node`; undefined when its run is not stale. */
export function takeOver(obj: AgentSession, node: string, now: number): Moved | undefined {
  const st = obj.status;
  const ranEpoch = staleEpoch(st);
  if (!st || ranEpoch === undefined) return undefined;
  const run = st.run ?? 0;
  const where = previousNode(st);
  const message = `run ${run} was on ${where}, which was lost; starting run ${run + 1} on node ${node}`;
  const status: AgentSessionStatus = structuredClone(st);
  // The lost run's pane and timers belong to the other host; the next launch replaces the rest.
  for (const f of ['stopRequestTime', 'nextRestartTime', 'deadlineTime', 'tmuxSession', 'pause'] as const)
    delete status[f];
  status.phase = 'Pending';
  status.reason = 'NodeLost';
  status.message = message;
  if (status.lifecycle) delete status.lifecycle.stopReason;
  const at = new Date(now).toISOString();
  status.conditions ??= [];
  const gen = obj.metadata.generation;
  setCondition(
    status.conditions,
    { type: 'Ready', status: 'False', reason: 'NodeLost', message, observedGeneration: gen },
    at,
  );
  setCondition(
    status.conditions,
    { type: 'NodeLost', status: 'False', reason: 'RunMoved', message, observedGeneration: gen },
    at,
  );
  const m = obj.metadata;
  const entry = { kind: 'AgentSession', namespace: m.namespace, name: m.name, uid: m.uid, run };
  return {
    status,
    note:
      `The previous run (run ${run}) was on ${where}, which stopped answering and was declared lost; ` +
      `this run continues the work on node ${node}. Check the repository for what that run left.`,
    effects: [
      {
        type: 'RecordEvent',
        eventType: 'Warning',
        reason: SessionReason.RunMoved,
        message: `Run ${run} lost with its node: ${message}`,
      },
      { type: 'Audit', entry: { ...entry, from: st.phase, to: 'Pending', reason: 'NodeLost', message } },
      { type: 'Log', level: 'WARN', message: `agentsession ${m.namespace}/${m.name}: ${message}` },
    ],
  };
}

/** Which node the lost run was on (recorded with the run; runs before that recorded only the epoch). */
function previousNode(st: AgentSessionStatus): string {
  const node = st.lifecycle?.nodeName;
  return node ? `node ${node}` : `the node of epoch ${st.lifecycle?.epoch}`;
}
