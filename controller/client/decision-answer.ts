/**
 * A person's answer to a Decision waiting for approval (`orchctl approve|reject decision`, the
 * console's buttons): `spec.approval` written with compare-and-swap. Only a decision in phase
 * PendingApproval is answered, and only once: one answered already is left as it is, and asking
 * the other way round is refused.
 */
import type { Decision, DecisionSpec } from '../api/autopilot.js';
import { type Change, type Outcome, updateWithRetry } from './update.js';
import type { Store } from '../store/store.js';

export type Verdict = NonNullable<DecisionSpec['approval']>['verdict'];

export const VERB: Record<Verdict, string> = { Approved: 'approved', Rejected: 'rejected' };
const isPending = (d: Decision) => d.status?.phase === 'PendingApproval';
/** What -l/--all pick: pending and not answered yet (an answered one waits only for the controller). */
export const isOpen = (d: Decision) => isPending(d) && !d.spec?.approval;

/** What answering one decision does to it (pure: the read object in, the change out). */
export function answer(d: Decision, verdict: Verdict, at: string, by?: string, message?: string): Change<Decision> {
  const name = d.metadata.name;
  const given = d.spec?.approval;
  if (given) {
    const who = `${given.by ? ` by ${given.by}` : ''} at ${given.at}`;
    if (given.verdict === verdict) return { unchanged: `already ${VERB[verdict]}${who}` };
    return { refuse: `decision "${name}" was already ${VERB[given.verdict]}${who}` };
  }
  if (!d.spec || !isPending(d))
    return {
      refuse:
        `decision "${name}" is ${d.status?.phase ?? 'not decided yet'}, not PendingApproval: ` +
        `only a pending decision can be ${VERB[verdict]}`,
    };
  const approval: DecisionSpec['approval'] = { verdict, at, ...(by ? { by } : {}), ...(message ? { message } : {}) };
  return { write: { ...d, spec: { ...d.spec, approval } } };
}

/** Answers one decision now (read, decide with `answer`, compare-and-swap, retried on a conflict). */
export function answerDecision(
  store: Store,
  key: { namespace: string; name: string },
  verdict: Verdict,
  by: string | undefined,
  message?: string,
): Promise<Outcome<Decision>> {
  const at = new Date().toISOString();
  return updateWithRetry<Decision>(store, { kind: 'Decision', ...key }, (d) => answer(d, verdict, at, by, message));
}
