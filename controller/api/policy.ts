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

/** What a SessionPolicy does to the sessions of its namespace now: for `apply`'s warning and `describe`. */
export interface PolicyReach {
  /** Sessions its selector matches or whose policyRef names it. */
  selected: AgentSession[];
  /** Those {@link resolvePolicy} gives it (a higher priority or another policyRef wins the rest). */
  governed: AgentSession[];
}

export function policyReach(policy: SessionPolicy, sessions: AgentSession[], policies: SessionPolicy[]): PolicyReach {
  const ns = policy.metadata.namespace ?? '';
  const name = policy.metadata.name;
  const inNs = sessions.filter((s) => (s.metadata.namespace ?? '') === ns && !s.metadata.deletionTimestamp);
  const sel = policy.spec?.selector ? fromLabelSelector(policy.spec.selector) : undefined;
  const selected = inNs.filter((s) =>
    s.spec?.policyRef ? s.spec.policyRef === name : !!sel && matches(sel, s.metadata.labels),
  );
  const others = policies.filter((p) => !((p.metadata.namespace ?? '') === ns && p.metadata.name === name));
  const governed = inNs.filter((s) => resolvePolicy(s, [...others, policy])?.metadata.name === name);
  return { selected, governed };
}

/** The selector in words: a missing one selects nothing, `{}` everything (docs/controller.md, "Selectors"). */
export function selectorWords(policy: SessionPolicy): string | undefined {
  const sel = policy.spec?.selector;
  if (!sel) return 'none: selects no session (only those naming it in spec.policyRef)';
  if (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length)
    return '{} (every session in the namespace)';
  return undefined;
}

/**
 * Why a policy governs no session now, or undefined. A missing selector is always worth a word
 * (only a policyRef reaches it, unless it is the `default` fallback); a selector only when the
 * namespace has sessions to miss.
 */
export function reachWarning(policy: SessionPolicy, reach: PolicyReach, sessionsInNs: number): string | undefined {
  if (reach.governed.length) return undefined;
  const ns = policy.metadata.namespace || 'default';
  const what = `sessionpolicy "${policy.metadata.name}" applies to no session in namespace "${ns}" now`;
  if (reach.selected.length)
    return `${what}: the ${reach.selected.length} it selects are governed by a higher-priority policy`;
  if (!policy.spec?.selector) {
    if (policy.metadata.name === 'default') return undefined;
    return (
      `${what}: a missing selector selects nothing, only sessions naming it in spec.policyRef get it ` +
      '(write "selector: {}" to select every session)'
    );
  }
  return sessionsInNs
    ? `${what}: its selector matches none of the ${sessionsInNs} session${sessionsInNs === 1 ? '' : 's'} there`
    : undefined;
}
