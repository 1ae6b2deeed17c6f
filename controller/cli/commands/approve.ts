/**
 * `orchctl approve decision` and `orchctl reject decision`: a person's answer to what an Autopilot
 * wants to do. The answer is desired state — `spec.approval` on the Decision, written with
 * compare-and-swap — and the controller acts on it (an approved decision executes, still against
 * the snapshot it was decided on). Only a decision in phase PendingApproval is answered, and only
 * once: one answered already is left as it is, and asking the other way round is an error.
 */
import { answer, answerDecision, isOpen, VERB, type Verdict } from '../../client/decision-answer.js';
import { notFoundMessage } from '../../api/errors.js';
import { isKind } from '../../api/kinds.js';
import { type GlobalOptions, openContext, qualifiedKind } from '../context.js';
import { err, out } from '../output.js';
import { resolveTargets, type SelectOptions } from '../targets.js';

export interface VerdictOptions extends SelectOptions {
  message?: string;
}

export { answer };

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
      const r = await answerDecision(ctx.store, { namespace: t.namespace, name }, verdict, by, opts.message);
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
