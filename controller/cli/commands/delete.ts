import type { KindInfo } from '../../api/crds.js';
import { isApiError, notFoundMessage } from '../../api/errors.js';
import { parseSelector } from '../../api/labels.js';
import { readManifests } from '../../config/manifest.js';
import { prepareManifests, ValidationFailed } from '../../client/apply.js';
import type { WriteOp } from '../../store/store.js';
import { CONTROLLER_LEASE, holderIsDead } from '../../runtime/lease.js';
import { namespaceFor, openContext, parseTargets, qualifiedKind, type GlobalOptions } from '../context.js';
import { err, out } from '../output.js';
import { parseDryRun } from './apply.js';

export interface DeleteOptions {
  filename?: string[];
  recursive?: boolean;
  namespace?: string;
  selector?: string;
  all?: boolean;
  ignoreNotFound?: boolean;
  dryRun?: string;
  wait?: boolean;
  timeout?: string;
}

export async function deleteCommand(args: string[], opts: DeleteOptions, g: GlobalOptions): Promise<void> {
  const dryRun = parseDryRun(opts.dryRun);
  const ctx = openContext(g);
  try {
    const targets: { kind: KindInfo; namespace: string; name: string }[] = [];
    if (opts.filename?.length) {
      const { docs, errors } = readManifests(opts.filename, !!opts.recursive);
      if (errors.length) throw new ValidationFailed(errors);
      for (const p of prepareManifests(docs, ctx.reg, opts.namespace))
        targets.push({ kind: p.kind, namespace: p.manifest.metadata.namespace ?? '', name: p.manifest.metadata.name });
    } else {
      for (const { kind, names } of parseTargets(ctx.reg, args)) {
        const ns = namespaceFor(kind, opts.namespace);
        if (names.length) for (const name of names) targets.push({ kind, namespace: ns, name });
        else if (opts.all || opts.selector) {
          const { items } = await ctx.store.list(kind.kind, {
            namespace: kind.namespaced ? ns : undefined,
            labelSelector: parseSelector(opts.selector),
          });
          for (const o of items) targets.push({ kind, namespace: ns, name: o.metadata.name });
        } else
          throw new Error('resource(s) were provided, but no name was specified (use --all or -l to select several)');
      }
    }
    if (!targets.length) {
      err('No resources found\n');
      return;
    }
    let failed = false;
    let controllerLive: boolean | undefined;
    const deleted: typeof targets = [];
    for (const t of targets) {
      const op: WriteOp = { op: 'delete', key: { kind: t.kind.kind, namespace: t.namespace, name: t.name } };
      try {
        let held = false;
        if (dryRun === 'client') {
          if (!(await ctx.store.get(op.key))) throw Object.assign(new Error(), { notFound: true });
        } else {
          const [after] = await ctx.store.txn([op], { dryRun: dryRun === 'server' });
          held = !!after?.metadata.deletionTimestamp && !!after.metadata.finalizers?.length;
        }
        const suffix = dryRun === 'client' ? ' (dry run)' : dryRun === 'server' ? ' (server dry run)' : '';
        const where = t.namespace ? ` from ${t.namespace} namespace` : '';
        if (held && dryRun === 'none') {
          // A finalizer holds it: the controller stops its agent first, then removes it.
          controllerLive ??= await controllerRunning(ctx);
          const who = controllerLive
            ? 'the controller finishes it'
            : 'the controller finishes it when one runs (none is running now)';
          out(`${qualifiedKind(t.kind)} "${t.name}" marked for deletion${where}; ${who}\n`);
        } else out(`${qualifiedKind(t.kind)} "${t.name}" deleted${where}${suffix}\n`);
        deleted.push(t);
      } catch (e) {
        if (isApiError(e, 'NotFound') || (e as { notFound?: boolean }).notFound) {
          if (!opts.ignoreNotFound) {
            err(`error: ${notFoundMessage(t.kind.kind, t.name, t.namespace)}\n`);
            failed = true;
          }
        } else throw e;
      }
    }
    if (opts.wait && dryRun === 'none') await waitGone(ctx, deleted, opts.timeout);
    if (failed) process.exitCode = 1;
  } finally {
    await ctx.close();
  }
}

/** --wait: until finalizers ran (a controller must be running) or the timeout passes. */
async function waitGone(
  ctx: ReturnType<typeof openContext>,
  targets: { kind: KindInfo; namespace: string; name: string }[],
  timeout = '60s',
) {
  const { parseDuration } = await import('../../api/duration.js');
  const deadline = Date.now() + parseDuration(timeout);
  for (const t of targets) {
    while (await ctx.store.get({ kind: t.kind.kind, namespace: t.namespace, name: t.name })) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${qualifiedKind(t.kind)} "${t.name}" to be deleted (is the controller running?)`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function controllerRunning(ctx: ReturnType<typeof openContext>): Promise<boolean> {
  const lease = await ctx.store.getLease(CONTROLLER_LEASE);
  return (
    !!lease && Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1000 > Date.now() && !holderIsDead(lease)
  );
}
