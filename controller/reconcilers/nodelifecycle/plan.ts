/**
 * Node lifecycle's pure part (Kubernetes' node lifecycle controller, for orchctl's Nodes): from a
 * Node, its lease and the sessions bound to it, whether the node is lost and what becomes of them.
 *
 * A node is seen alive when its lease's renewTime or its status.heartbeatTime changes. Like
 * Kubernetes, the time that counts is when this process saw the change (`seenAt`, its own clock),
 * not the timestamp written by the node: hosts' clocks may differ, and a control plane that just
 * took over gives every node a full lease before it judges it. Lost = not seen renewing for the
 * lease's duration → Ready=Unknown (NodeStatusUnknown) and NodeLost on its unfinished sessions.
 * After the grace (counted from the last renewal seen) each of them is unbound — the scheduler
 * places it again with a higher epoch — or, when it had a run that must not be restarted, ended
 * as Failed (reason NodeLost) and unbound. Seen renewing again → Ready=True, NodeLost=False.
 */
import type { ConditionInput } from '../../api/conditions.js';
import { getCondition } from '../../api/conditions.js';
import { formatDuration } from '../../api/duration.js';
import type { Node } from '../../api/node.js';
import { ACTIVE_PHASES, type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { AgentSession } from '../../api/session.js';
import { wantsRunning } from '../../api/session-intent.js';
import type { LeaseRecord } from '../../store/store.js';

/** The node agent's lease (one holder per node name). */
export const nodeLeaseName = (node: string) => `orchctl-node-${node}`;

export const DEFAULT_GRACE_MS = 40_000;
/**
 * Bounds of the grace. Its floor is above the node's self-fencing fuse (lease 15 s + 5 s: a cut-off
 * node's agents are dead by then), so a session never has two live runs; its ceiling keeps work
 * from waiting on a dead host for long.
 */
export const MIN_GRACE_MS = 25_000;
export const MAX_GRACE_MS = 3_600_000;
/** A Node with no lease (an older orchctl): judged by its heartbeat (every 10 s) against this. */
export const NO_LEASE_TIMEOUT_MS = 40_000;

export function checkGrace(ms: number): string | undefined {
  if (!Number.isFinite(ms) || ms < MIN_GRACE_MS || ms > MAX_GRACE_MS)
    return `node-lost grace must be between ${formatDuration(MIN_GRACE_MS)} and ${formatDuration(MAX_GRACE_MS)}`;
  return undefined;
}

/** The last sign of life this process saw from a node, and when (its own clock, ms). */
export interface Probe {
  renewTime?: string;
  heartbeatTime?: string;
  seenAt: number;
}

export interface NodeLifecycleInput {
  node: Node;
  lease?: LeaseRecord;
  prev?: Probe;
  /**
   * Sessions whose status.binding names this node: all of them, or, when needsAllSessions says
   * so, only those marked NodeLost (the others come to nothing then).
   */
  sessions: AgentSession[];
  now: number;
  graceMs: number;
}

export type SessionAction = {
  type: 'MarkLost' | 'Unbind' | 'Fail' | 'Found';
  session: AgentSession;
  message: string;
};

export interface NodeLifecycleResult {
  probe: Probe;
  lost: boolean;
  /** The Node's Ready condition, when it must change. */
  ready?: ConditionInput;
  sessions: SessionAction[];
  /** When to look again without a change (the lease running out, the grace ending). */
  requeueAfterMs?: number;
}

const lostCondition = (s: AgentSession) => getCondition(s.status?.conditions, 'NodeLost');

/** A session on a lost node that can be placed again: no run, or a run whose restart policy restarts it. */
function movable(s: AgentSession): boolean {
  if (s.metadata.deletionTimestamp) return true; // another node removes its finalizer
  if (!ACTIVE_PHASES.has(s.status?.phase as Phase)) return true; // Pending or Backoff: no run to lose
  return wantsRunning(s) && (s.spec?.restartPolicy === 'OnFailure' || s.spec?.restartPolicy === 'Always');
}

/** The node's last sign of life as of now, and whether it is lost (silent for its lease's duration). */
export function probeNode(i: Pick<NodeLifecycleInput, 'node' | 'lease' | 'prev' | 'now'>): {
  probe: Probe;
  lost: boolean;
  timeoutMs: number;
  silentMs: number;
} {
  const renewTime = i.lease?.renewTime;
  const heartbeatTime = i.node.status?.heartbeatTime;
  const changed = !i.prev || i.prev.renewTime !== renewTime || i.prev.heartbeatTime !== heartbeatTime;
  const probe: Probe = { renewTime, heartbeatTime, seenAt: changed ? i.now : i.prev!.seenAt };
  const timeoutMs = i.lease ? i.lease.leaseDurationSeconds * 1000 : NO_LEASE_TIMEOUT_MS;
  const silentMs = i.now - probe.seenAt;
  return { probe, lost: silentMs >= timeoutMs, timeoutMs, silentMs };
}

/**
 * Which of the node's sessions the plan needs: all of them when the node is lost or its Ready is
 * Unknown (they are marked, moved or counted); otherwise only those marked NodeLost (found again).
 */
export function needsAllSessions(node: Node, lost: boolean): boolean {
  return lost || getCondition(node.status?.conditions, 'Ready')?.status === 'Unknown';
}

/** The session is marked lost with its node (NodeLost=True). */
export const markedLost = (s: AgentSession) => lostCondition(s)?.status === 'True';

export function planNodeLifecycle(i: NodeLifecycleInput): NodeLifecycleResult {
  const name = i.node.metadata.name;
  const { probe, lost, timeoutMs, silentMs } = probeNode(i);
  const ready = getCondition(i.node.status?.conditions, 'Ready');
  const sessions: SessionAction[] = [];
  const live = i.sessions.filter((s) => !TERMINAL_PHASES.has(s.status?.phase as Phase));
  if (!lost) {
    for (const s of live)
      if (markedLost(s)) sessions.push({ type: 'Found', session: s, message: `node ${name} renews its lease again` });
    return {
      probe,
      lost,
      ...(ready?.status === 'Unknown' && ready.reason === 'NodeStatusUnknown'
        ? {
            ready: {
              type: 'Ready',
              status: 'True',
              reason: 'NodeLeaseRenewed',
              message: 'the node renews its lease again',
            },
          }
        : {}),
      sessions,
      requeueAfterMs: timeoutMs - silentMs,
    };
  }
  const since = new Date(probe.seenAt).toISOString();
  const what = i.lease ? 'lease' : 'heartbeat';
  const graceLeft = probe.seenAt + i.graceMs - i.now;
  for (const s of live) {
    if (graceLeft > 0) {
      if (lostCondition(s)?.status !== 'True')
        sessions.push({
          type: 'MarkLost',
          session: s,
          message:
            `node ${name} stopped renewing its ${what} (last seen ${since}); ` +
            `after ${formatDuration(i.graceMs)} from then the session ` +
            (movable(s) ? 'moves to another node' : 'is failed'),
        });
    } else if (movable(s))
      sessions.push({
        type: 'Unbind',
        session: s,
        message: `node ${name} lost (last seen ${since}): unbound, to be placed on another node`,
      });
    else
      sessions.push({
        type: 'Fail',
        session: s,
        message:
          `node ${name} lost (last seen ${since}) during the run; ` +
          `restartPolicy ${s.spec?.restartPolicy ?? 'Never'}: not restarted`,
      });
  }
  return {
    probe,
    lost,
    ...(ready?.status !== 'Unknown'
      ? {
          ready: {
            type: 'Ready',
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: `the node stopped renewing its ${what}: not seen since ${since}`,
          },
        }
      : {}),
    sessions,
    ...(graceLeft > 0 ? { requeueAfterMs: graceLeft } : {}),
  };
}
