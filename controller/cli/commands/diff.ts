import { createTwoFilesPatch } from 'diff';
import YAML from 'yaml';
import { readManifests } from '../../config/manifest.js';
import { applyPrepared, prepareManifests, ValidationFailed } from '../../client/apply.js';
import { LAST_APPLIED_ANNOTATION, type Resource } from '../../api/types.js';
import { openContext, type GlobalOptions } from '../context.js';
import { ExitCode, out } from '../output.js';

/** Fields the server owns; comparing them would show noise, as kubectl diff hides managedFields. */
function comparable(o: Resource | undefined): string {
  if (!o) return '';
  const c = structuredClone(o);
  delete c.status;
  for (const f of ['resourceVersion', 'generation', 'uid', 'creationTimestamp'] as const) delete c.metadata[f];
  if (c.metadata.annotations) {
    delete c.metadata.annotations[LAST_APPLIED_ANNOTATION];
    if (!Object.keys(c.metadata.annotations).length) delete c.metadata.annotations;
  }
  return YAML.stringify(c, { lineWidth: 0, sortMapEntries: true });
}

/** `orchctl diff -f`: live vs what apply would make of it. Exit 0 no differences, 1 differences. */
export async function diffCommand(
  opts: { filename: string[]; recursive?: boolean; namespace?: string },
  g: GlobalOptions,
): Promise<void> {
  const ctx = openContext(g, { readonly: true });
  let changed = false;
  try {
    const { docs, errors } = readManifests(opts.filename, !!opts.recursive);
    if (errors.length) throw new ValidationFailed(errors);
    const prepared = prepareManifests(docs, ctx.reg, opts.namespace);
    const results = await applyPrepared(ctx.store, prepared, { dryRun: 'client' });
    for (const r of results) {
      const live = await ctx.store.get({ kind: r.kind.kind, namespace: r.namespace ?? '', name: r.name });
      const a = comparable(live);
      const b = comparable(r.object);
      if (a === b) continue;
      changed = true;
      const id = `${r.kind.plural}.orchctl.io.${r.namespace ? `${r.namespace}.` : ''}${r.name}`;
      out(
        createTwoFilesPatch(`LIVE/${id}`, `MERGED/${id}`, a, b, undefined, undefined, { context: 3 }).replace(
          /^=+\n/m,
          '',
        ),
      );
    }
  } finally {
    await ctx.close();
  }
  if (changed) throw new ExitCode(1);
}
