/**
 * `orchctl restart session`: like `kubectl rollout restart`, a change of desired state — the
 * session's orchctl.io/restartedAt annotation set to now (compare-and-swap) — that the session
 * reconciler answers with a new run (the current one stopped first). The Autopilot's restart
 * writes the same annotation.
 */
import { RESTART_NOTE_ANNOTATION, RESTART_REASON_ANNOTATION, RESTARTED_AT_ANNOTATION } from '../../api/autopilot.js';
import { notFoundMessage } from '../../api/errors.js';
import type { AgentSession } from '../../api/session.js';
import { type GlobalOptions, openContext, qualifiedKind } from '../context.js';
import { err, out } from '../output.js';
import { type Change, resolveTargets, type SelectOptions, updateWithRetry } from '../targets.js';

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

export async function restartCommand(args: string[], opts: SelectOptions, g: GlobalOptions): Promise<void> {
  const ctx = openContext(g);
  let failed = 0;
  try {
    const t = await resolveTargets(ctx, 'agentsession', args, opts, 'orchctl restart session');
    if (t.selected && !t.names.length) err(`No resources found in ${t.namespace} namespace.\n`);
    for (const name of t.names) {
      // To the millisecond: a second restart within the same second is still a new value.
      const at = new Date().toISOString();
      const key = { kind: 'AgentSession', namespace: t.namespace, name };
      const r = await updateWithRetry<AgentSession>(ctx.store, key, (s) => stamp(s, at));
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
