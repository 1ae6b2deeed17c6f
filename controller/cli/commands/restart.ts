/**
 * `orchctl restart session`: like `kubectl rollout restart`, a change of desired state — the
 * session's orchctl.io/restartedAt annotation set to now (compare-and-swap) — that the session
 * reconciler answers with a new run (the current one stopped first). The Autopilot's restart
 * writes the same annotation.
 */
import { notFoundMessage } from '../../api/errors.js';
import { restartSession, stamp } from '../../client/restart.js';
import { type GlobalOptions, openContext, qualifiedKind } from '../context.js';
import { err, out } from '../output.js';
import { resolveTargets, type SelectOptions } from '../targets.js';

export { stamp };

export async function restartCommand(args: string[], opts: SelectOptions, g: GlobalOptions): Promise<void> {
  const ctx = openContext(g);
  let failed = 0;
  try {
    const t = await resolveTargets(ctx, 'agentsession', args, opts, 'orchctl restart session');
    if (t.selected && !t.names.length) err(`No resources found in ${t.namespace} namespace.\n`);
    for (const name of t.names) {
      const r = await restartSession(ctx.store, { namespace: t.namespace, name });
      if (r.outcome === 'written') {
        out(`${qualifiedKind(t.kind)}/${name} restarted\n`);
        if (r.object.spec?.desiredState === 'Stopped')
          err(`warning: agentsession "${name}" has desiredState Stopped: it restarts when it is set to Running\n`);
      } else if (r.outcome === 'missing') {
        err(`error: ${notFoundMessage('AgentSession', name, t.namespace)}\n`);
        failed++;
      } else {
        err(`error: ${r.why}\n`);
        failed++;
      }
    }
  } finally {
    await ctx.close();
  }
  if (failed) process.exitCode = 1;
}
