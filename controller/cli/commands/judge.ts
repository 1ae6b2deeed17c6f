/**
 * `orchctl judge SESSION [--wait]`: asks the controller to judge the session's current (or last)
 * run now, by creating an OnDemand Evaluation `<session>-run-<run>-ondemand-<n>` owned by the
 * session. One that is still waiting for its verdict is reused rather than doubled, so running
 * the command twice asks once. The controller's judge fills in the evidence and the verdict;
 * `--wait` waits for it and prints it (exit 1 when the judgement fails).
 */
import { parseDuration } from '../../api/duration.js';
import { isApiError } from '../../api/errors.js';
import { hasVerdict, isFailed, newEvaluation, type Evaluation } from '../../api/evaluation.js';
import { CONTROLLER_LEASE, holderIsDead } from '../../runtime/lease.js';
import { namespaceFor, openContext, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

export interface JudgeOptions {
  namespace?: string;
  wait?: boolean;
  timeout?: string;
}

export const onDemandName = (session: string, run: number, n: number) => `${session}-run-${run}-ondemand-${n}`;

export async function judgeCommand(name: string, opts: JudgeOptions, g: GlobalOptions): Promise<void> {
  const timeoutMs = parseDuration(opts.timeout ?? '120s');
  const ctx = openContext(g);
  try {
    const ns = namespaceFor(ctx.reg.resolve('agentsession'), opts.namespace);
    const n0 = name.includes('/') ? name.split('/')[1] : name;
    const session = await ctx.store.get({ kind: 'AgentSession', namespace: ns, name: n0 });
    if (!session) throw new Error(`agentsessions "${n0}" not found in namespace ${ns}`);
    const run = session.status?.run ?? 0;
    if (run < 1) throw new Error(`agentsession "${n0}" has not started a run yet: there is nothing to judge`);
    const { items } = await ctx.store.list('Evaluation', { namespace: ns });
    const onDemand = items.filter(
      (e) => e.spec?.sessionRef === n0 && e.spec.run === run && e.spec.trigger === 'OnDemand',
    );
    let ev = onDemand.find((e) => !hasVerdict(e) && !isFailed(e));
    if (ev) out(`evaluation.orchctl.io/${ev.metadata.name} unchanged (already waiting for its verdict)\n`);
    else {
      for (let n = onDemand.length + 1; !ev && n < onDemand.length + 100; n++) {
        try {
          ev = await ctx.store.create(newEvaluation(session, onDemandName(n0, run, n), run, 'OnDemand'));
        } catch (e) {
          if (!isApiError(e, 'AlreadyExists')) throw e;
        }
      }
      if (!ev) throw new Error(`could not find a free name for an OnDemand evaluation of run ${run} of "${n0}"`);
      out(`evaluation.orchctl.io/${ev.metadata.name} created\n`);
    }
    const lease = await ctx.store.getLease(CONTROLLER_LEASE);
    const leaseLive =
      lease && Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1000 > Date.now() && !holderIsDead(lease);
    if (!leaseLive) err('warning: no controller is running on this store; the evaluation is judged when one starts\n');
    if (!opts.wait) return;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const cur = await ctx.store.get({ kind: 'Evaluation', namespace: ns, name: ev.metadata.name });
      if (!cur) throw new Error(`evaluation "${ev.metadata.name}" was deleted while waiting`);
      if (hasVerdict(cur)) return void out(render(cur));
      if (isFailed(cur)) {
        const c = cur.status?.conditions?.find((x) => x.type === 'JudgeFailed');
        const why = c?.message ?? cur.status?.message ?? '';
        throw new Error(`evaluation "${cur.metadata.name}" failed (${c?.reason ?? 'JudgeFailed'}): ${why}`);
      }
      if (Date.now() > deadline)
        throw new Error(
          `timed out after ${opts.timeout ?? '120s'} waiting for the verdict of "${cur.metadata.name}" ` +
            `(phase ${cur.status?.phase ?? 'Pending'}; is the controller running?)`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await ctx.close();
  }
}

function render(e: Evaluation): string {
  const s = e.status!;
  const lines = [
    `${e.metadata.name}: run ${e.spec?.run} of ${e.spec?.sessionRef} scored ${s.score}/5, outcome ${s.outcome}, ` +
      `recommendation ${s.recommendation} (confidence ${s.confidence}; ${s.backend}${s.model ? ` ${s.model}` : ''})`,
  ];
  if (s.accomplishments?.length) lines.push('Accomplishments:', ...s.accomplishments.map((x) => `  - ${x}`));
  if (s.failures?.length) lines.push('Failures:', ...s.failures.map((x) => `  - ${x}`));
  if (s.reasoning) lines.push(`Reasoning: ${s.reasoning}`);
  return `${lines.join('\n')}\n`;
}
