/**
 * `orchctl approve decision` and `orchctl reject decision`: a person's answer to what an Autopilot
 * wants to do. The answer is desired state — `spec.approval` on the Decision, written with
 * compare-and-swap — and the controller acts on it (an approved decision executes, still against
 * the snapshot it was decided on). Only a decision in phase PendingApproval is answered, and only
 * once: one answered already is left as it is, and asking the other way round is an error.
 */
import type { Decision, DecisionSpec } from '../../api/autopilot.js';
import { notFoundMessage } from '../../api/errors.js';
import { isKind } from '../../api/kinds.js';
import { type GlobalOptions, openContext, qualifiedKind } from '../context.js';
import { err, out } from '../output.js';
import { type Change, resolveTargets, type SelectOptions, updateWithRetry } from '../targets.js';

export type Verdict = NonNullable<DecisionSpec['approval']>['verdict'];

export interface VerdictOptions extends SelectOptions {
  message?: string;
}

const VERB: Record<Verdict, string> = { Approved: 'approved', Rejected: 'rejected' };
const isPending = (d: Decision) => d.status?.phase === 'PendingApproval';
/** What -l/--all pick: pending and not answered yet (an answered one waits only for the controller). */
const isOpen = (d: Decision) => isPending(d) && !d.spec?.approval;

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

async function verdictCommand(verdict: Verdict, args: string[], opts: VerdictOptions, g: GlobalOptions) {
  const usage = verdict === 'Approved' ? 'orchctl approve decision' : 'orchctl reject decision';
  const ctx = openContext(g);
  let failed = 0;
  try {
    const select = { ...opts, all: !!opts.all }; // these commands have --all
    const t = await resolveTargets(ctx, 'decision', args, select, usage, (o) => isKind(o, 'Decision') && isOpen(o));
    if (t.selected && !t.names.length) err(`No pending decisions found in ${t.namespace} namespace.\n`);
    const by = process.env.USER || undefined;
    for (const name of t.names) {
      const at = new Date().toISOString();
      const key = { kind: 'Decision', namespace: t.namespace, name };
      const r = await updateWithRetry<Decision>(ctx.store, key, (d) => answer(d, verdict, at, by, opts.message));
      const what = `${qualifiedKind(t.kind)}/${name}`;
      if (r.outcome === 'written') out(`${what} ${VERB[verdict]}\n`);
      else if (r.outcome === 'unchanged') out(`${what} unchanged (${r.why})\n`);
      else {
        err(`error: ${r.outcome === 'missing' ? notFoundMessage('Decision', name, t.namespace) : r.why}\n`);
        failed++;
      }
    }
  } finally {
    await ctx.close();
  }
  if (failed) process.exitCode = 1;
}

export const approveCommand = (args: string[], opts: VerdictOptions, g: GlobalOptions) =>
  verdictCommand('Approved', args, opts, g);
export const rejectCommand = (args: string[], opts: VerdictOptions, g: GlobalOptions) =>
  verdictCommand('Rejected', args, opts, g);
