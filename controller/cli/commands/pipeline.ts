/**
 * `orchctl pipeline resume NAME [--message TEXT]`: a change of desired state, like `orchctl
 * restart` — the Pipeline's orchctl.io/resume-requested annotation set to now and its message
 * beside it (compare-and-swap). The pipeline reconciler takes up each new value once and delivers
 * the message to the blocked phases' sessions (verified delivery, or a new run when the blocked
 * run has ended). `--wait` waits for that outcome.
 */
import { parseDuration } from '../../api/duration.js';
import { notFoundMessage } from '../../api/errors.js';
import { HANDOFF_LIMITS } from '../../api/pipeline.js';
import { resumePipeline, stampResume } from '../../client/pipeline-resume.js';
import { type GlobalOptions, namespaceFor, openContext } from '../context.js';
import { err, out } from '../output.js';

export interface ResumeOptions {
  namespace?: string;
  message?: string;
  wait?: boolean;
  timeout?: string;
}

export { stampResume };

export async function resumeCommand(name: string, opts: ResumeOptions, g: GlobalOptions): Promise<void> {
  if (opts.message && opts.message.length > HANDOFF_LIMITS.message)
    throw new Error(`--message is ${opts.message.length} characters, over ${HANDOFF_LIMITS.message}`);
  const ctx = openContext(g);
  try {
    const namespace = namespaceFor(ctx.reg.resolve('pipeline'), opts.namespace);
    const key = { kind: 'Pipeline' as const, namespace, name };
    const at = new Date().toISOString();
    const r = await resumePipeline(ctx.store, { namespace, name }, opts.message, at);
    if (r.outcome === 'missing') throw new Error(notFoundMessage('Pipeline', name, namespace));
    if (r.outcome !== 'written') throw new Error(r.why);
    const blocked = (r.object.status?.phases ?? []).filter((x) => x.state === 'Blocked').map((x) => x.name);
    if (!blocked.length) err(`warning: pipeline "${name}" has no blocked phase now; the resume may be ignored\n`);
    out(`pipeline.orchctl.io/${name} resume requested\n`);
    if (!opts.wait) return;
    const deadline = Date.now() + parseDuration(opts.timeout ?? '60s');
    for (;;) {
      const p = await ctx.store.get(key);
      const res = p?.status?.resume;
      if (res?.requested === at && res.state !== 'Delivering') {
        out(`${res.state}${res.message ? `: ${res.message}` : ''}\n`);
        if (res.state !== 'Delivered') process.exitCode = 1;
        return;
      }
      if (Date.now() > deadline) throw new Error('timed out waiting for the controller to deliver the resume');
      await new Promise((ok) => setTimeout(ok, 200));
    }
  } finally {
    await ctx.close();
  }
}
