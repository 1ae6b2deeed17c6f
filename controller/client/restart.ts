/**
 * A manual restart (`orchctl restart session`, the console's Restart button): like `kubectl rollout
 * restart`, the session's orchctl.io/restartedAt annotation set to now (compare-and-swap), which the
 * session reconciler answers with a new run. The Autopilot's restart writes the same annotation.
 */
import { RESTART_NOTE_ANNOTATION, RESTART_REASON_ANNOTATION, RESTARTED_AT_ANNOTATION } from '../api/autopilot.js';
import type { AgentSession } from '../api/session.js';
import type { Store } from '../store/store.js';
import { type Change, type Outcome, updateWithRetry } from './update.js';

/** Stamps the annotation (pure: the read session in, the change out). A session being deleted is not restarted. */
export function stamp(s: AgentSession, at: string): Change<AgentSession> {
  if (s.metadata.deletionTimestamp)
    return { refuse: `agentsession "${s.metadata.name}" is being deleted: it is not restarted` };
  // An autopilot's note for its own earlier restart is not the reason for this one: drop it, so the
  // new run's prompt does not explain a restart the person did with the autopilot's words.
  const { [RESTART_NOTE_ANNOTATION]: _note, ...kept } = s.metadata.annotations ?? {};
  const annotations = {
    ...kept,
    [RESTARTED_AT_ANNOTATION]: at,
    [RESTART_REASON_ANNOTATION]: 'Manual',
  };
  return { write: { ...s, metadata: { ...s.metadata, annotations } } };
}

/** Restarts one session now. To the millisecond: a second restart within the same second is still a new value. */
export function restartSession(store: Store, key: { namespace: string; name: string }): Promise<Outcome<AgentSession>> {
  const at = new Date().toISOString();
  return updateWithRetry<AgentSession>(store, { kind: 'AgentSession', ...key }, (s) => stamp(s, at));
}
