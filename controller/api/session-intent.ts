/**
 * What the user (or the autopilot) asks of an AgentSession, read from its spec and annotations:
 * pure rules shared by the session, scheduler and node-lifecycle reconcilers.
 */
import { RESTARTED_AT_ANNOTATION } from './autopilot.js';
import type { AgentSession } from './session.js';

export const wantsRunning = (s: AgentSession) => (s.spec?.desiredState ?? 'Running') === 'Running';

/**
 * The restart annotation's value when it asks for a run it has not had yet (like `kubectl rollout
 * restart`): set, and not the value the current run was started for (status.lifecycle.restartedAt).
 */
export function restartRequested(s: AgentSession): string | undefined {
  const asked = s.metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  return asked && asked !== s.status?.lifecycle?.restartedAt ? asked : undefined;
}
