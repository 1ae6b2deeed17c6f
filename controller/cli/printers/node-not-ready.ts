/**
 * The PHASE and MESSAGE cells of a session whose node is not Ready (node lifecycle set its NodeLost
 * condition): its run may be gone (the node's fuse hangs it up) or going on where no one can see, so
 * `Running, running in tmux session …` would claim what nobody knows. kubectl shows a pod on a lost
 * node as Unknown, with NodeNotReady; so does `get agentsessions` until the session moves or its
 * node is back.
 */
import { ACTIVE_PHASES, type Phase } from '../../api/phases.js';
import type { AgentSession } from '../../api/session.js';

/** The NodeLost condition's message when the session's run is on a node that is not Ready, else undefined. */
export function nodeNotReady(s: AgentSession): string | undefined {
  const st = s.status;
  const node = st?.binding?.nodeName;
  if (!node || !ACTIVE_PHASES.has(st?.phase as Phase)) return undefined;
  const lost = st?.conditions?.find((c) => c.type === 'NodeLost' && c.status === 'True');
  return lost ? lost.message || `node ${node} is not ready` : undefined;
}
