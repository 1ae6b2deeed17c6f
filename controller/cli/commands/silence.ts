/**
 * `orchctl silence create` and `orchctl silence expire`: Alertmanager's silences from the command
 * line, as amtool makes them (`amtool silence add reason=Stalled -d 2h`). A new silence starts now
 * and goes through the same schema and admission checks as `orchctl apply`, so a bad matcher or a
 * length past the bound is refused with nothing written. Expiring keeps the object for the record
 * and ends it now, as Alertmanager does; `orchctl get silences` lists them all. The logic is shared
 * with the web console (client/silence.ts).
 */
import os from 'node:os';
import {
  buildSilence,
  createSilence,
  describeError,
  expireSilence,
  problems,
  type SilenceCreateOptions,
} from '../../client/silence.js';
import { namespaceFor, openContext, qualifiedKind, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

export type { SilenceCreateOptions };

function createdBy(): string {
  let user = process.env.USER;
  if (!user)
    try {
      user = os.userInfo().username;
    } catch {
      user = 'unknown';
    }
  return `${user}@${os.hostname()}`;
}

export async function silenceCreateCommand(
  positional: string[],
  opts: SilenceCreateOptions,
  g: GlobalOptions,
): Promise<void> {
  const ctx = openContext(g);
  try {
    const kind = ctx.reg.resolve('silence');
    const matchers = [...(opts.matcher ?? []), ...positional];
    const silence = buildSilence(matchers, opts, namespaceFor(kind, opts.namespace), Date.now(), createdBy());
    const errors = problems(silence, kind);
    if (errors.length) {
      for (const e of errors) err(`error: ${describeError(e)}\n`);
      throw new Error('the silence was not created');
    }
    await createSilence(ctx.store, silence, kind);
    out(`${silence.metadata.name}\n`);
  } finally {
    await ctx.close();
  }
}

export interface SilenceExpireOptions {
  namespace?: string;
}

/** Ends each silence now (client/silence.ts). Exit status 1 when any is not found. */
export async function silenceExpireCommand(names: string[], opts: SilenceExpireOptions, g: GlobalOptions) {
  const ctx = openContext(g);
  let failed = 0;
  try {
    const kind = ctx.reg.resolve('silence');
    const ns = namespaceFor(kind, opts.namespace);
    for (const arg of names) {
      const name = arg.includes('/') ? arg.split('/')[1] : arg;
      const what = `${qualifiedKind(kind)}/${name}`;
      const r = await expireSilence(ctx.store, ns, name);
      if (r.outcome === 'missing') {
        err(`error: silences "${name}" not found in namespace ${ns}\n`);
        failed++;
      } else if (r.outcome === 'unchanged') out(`${what} unchanged (expired at ${r.endsAt})\n`);
      else out(`${what} expired\n`);
    }
  } finally {
    await ctx.close();
  }
  if (failed) process.exitCode = 1;
}
