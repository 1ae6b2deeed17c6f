import { parseSelector } from '../../api/labels.js';
import { readManifests } from '../../config/manifest.js';
import { applyPrepared, policyWarnings, prepareManifests, ValidationFailed, type DryRun } from '../../client/apply.js';
import { openContext, qualifiedKind, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';

export interface ApplyCmdOptions {
  filename: string[];
  recursive?: boolean;
  dryRun?: string;
  prune?: boolean;
  selector?: string;
  output?: string;
  namespace?: string;
}

export function parseDryRun(v: string | undefined): DryRun {
  if (v === undefined || v === 'none' || v === 'false') return 'none';
  if (v === 'client' || v === 'server') return v;
  if (v === 'true') return 'client';
  throw new Error(`Invalid dry-run value (${v}). Must be "none", "server", or "client".`);
}

export async function applyCommand(opts: ApplyCmdOptions, g: GlobalOptions): Promise<void> {
  const dryRun = parseDryRun(opts.dryRun);
  if (!opts.filename?.length) throw new Error('must specify one of -f and -k');
  if (opts.prune && !opts.selector)
    throw new Error(
      'all resources selected for prune without explicitly passing --all. To prune all resources, ' +
        'pass the --all flag. If you did not mean to prune all resources, specify a label selector',
    );
  const pruneSelector = opts.selector ? parseSelector(opts.selector) : undefined;
  // A client dry run only reads (on a home with no store it creates nothing); a server one checks in
  // a write transaction.
  const ctx = openContext(g, { readonly: dryRun === 'client' });
  try {
    const { docs, errors } = readManifests(opts.filename, !!opts.recursive);
    if (errors.length) throw new ValidationFailed(errors);
    const prepared = prepareManifests(docs, ctx.reg, opts.namespace);
    if (!prepared.length) throw new Error('no objects passed to apply');
    const results = await applyPrepared(ctx.store, prepared, {
      dryRun,
      prune: opts.prune,
      pruneSelector,
      registry: ctx.reg,
    });
    const suffix = dryRun === 'client' ? ' (dry run)' : dryRun === 'server' ? ' (server dry run)' : '';
    for (const r of results) {
      if (opts.output === 'name') out(`${qualifiedKind(r.kind)}/${r.name}\n`);
      else out(`${qualifiedKind(r.kind)}/${r.name} ${r.action}${suffix}\n`);
    }
    // A policy that governs nothing is legal but rarely meant (docs/controller.md, "Selectors").
    for (const w of await policyWarnings(ctx.store, results)) err(`warning: ${w}\n`);
  } finally {
    await ctx.close();
  }
}
