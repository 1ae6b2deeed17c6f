/** Which SessionPolicy governs a session: shared by the session, assessment and judge reconcilers. */
import type { AgentSession, SessionPolicy } from './kinds.js';
import { fromLabelSelector, matches } from './labels.js';

/** spec.policyRef if set; else the highest-priority policy whose selector matches; else "default". */
export function resolvePolicy(session: AgentSession, policies: SessionPolicy[]): SessionPolicy | undefined {
  const ns = session.metadata.namespace ?? '';
  const inNs = policies.filter((p) => (p.metadata.namespace ?? '') === ns && !p.metadata.deletionTimestamp);
  if (session.spec?.policyRef) return inNs.find((p) => p.metadata.name === session.spec!.policyRef);
  const selecting = inNs
    .filter((p) => p.spec?.selector && matches(fromLabelSelector(p.spec.selector), session.metadata.labels))
    .sort(
      (a, b) => (b.spec?.priority ?? 0) - (a.spec?.priority ?? 0) || a.metadata.name.localeCompare(b.metadata.name),
    );
  return selecting[0] ?? inNs.find((p) => p.metadata.name === 'default');
}
