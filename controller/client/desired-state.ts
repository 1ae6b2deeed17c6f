/**
 * Stopping or running a session by hand (the console's Stop and Start): `spec.desiredState` set
 * with compare-and-swap, as `orchctl apply` of a manifest with `desiredState: Stopped` would; the
 * session reconciler then stops the run (its Agent's stop keys, then a kill after the grace period).
 */
import type { AgentSession } from '../api/session.js';
import type { Store } from '../store/store.js';
import { type Change, type Outcome, updateWithRetry } from './update.js';

type Desired = NonNullable<NonNullable<AgentSession['spec']>['desiredState']>;

/** The change to `desired` (pure: the read session in, the change out). */
export function withDesiredState(s: AgentSession, desired: Desired): Change<AgentSession> {
  if (s.metadata.deletionTimestamp) return { refuse: `agentsession "${s.metadata.name}" is being deleted` };
  if (!s.spec) return { refuse: `agentsession "${s.metadata.name}" has no spec` };
  if ((s.spec.desiredState ?? 'Running') === desired) return { unchanged: `desiredState is ${desired} already` };
  return { write: { ...s, spec: { ...s.spec, desiredState: desired } } };
}

export function setDesiredState(
  store: Store,
  key: { namespace: string; name: string },
  desired: Desired,
): Promise<Outcome<AgentSession>> {
  return updateWithRetry<AgentSession>(store, { kind: 'AgentSession', ...key }, (s) => withDesiredState(s, desired));
}
