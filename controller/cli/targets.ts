/**
 * What a verb on objects of one kind acts on (`orchctl approve decision a b`, `… -l tier=web`,
 * `… --all`), and the read-modify-write each one gets: compare-and-swap on resourceVersion, read
 * again and retried on a conflict, as kubectl's client-side patches are.
 */
import type { KindInfo } from '../api/crds.js';
import { parseSelector } from '../api/labels.js';
import type { Resource } from '../api/types.js';
import { type Context, namespaceFor, parseTargets } from './context.js';

export interface SelectOptions {
  namespace?: string;
  selector?: string;
  /** --all, for commands that have it (false when not given): undefined means the command has no --all. */
  all?: boolean;
}

export interface Targets {
  kind: KindInfo;
  namespace: string;
  /** The names to act on, in the order given (each once). */
  names: string[];
  /** True when they came from -l/--all rather than the command line. */
  selected: boolean;
}

/**
 * The objects of `kindName` the arguments name (`TYPE NAME…` or `TYPE/NAME…`), or those -l / --all
 * select that `eligible` keeps. Names together with -l or --all are refused, as kubectl does.
 */
export async function resolveTargets(
  ctx: Context,
  kindName: string,
  args: string[],
  opts: SelectOptions,
  usage: string,
  eligible: (o: Resource) => boolean = () => true,
): Promise<Targets> {
  const want = ctx.reg.resolve(kindName);
  const groups = parseTargets(ctx.reg, args);
  for (const g of groups)
    if (g.kind !== want) throw new Error(`${usage} works on ${want.plural}, not ${g.kind.plural}`);
  const names = [...new Set(groups.flatMap((g) => g.names))];
  const namespace = namespaceFor(want, opts.namespace);
  if (names.length && (opts.selector !== undefined || opts.all))
    throw new Error('names cannot be given together with a label selector (-l) or --all');
  if (names.length) return { kind: want, namespace, names, selected: false };
  if (opts.selector === undefined && !opts.all) {
    const ways = opts.all === undefined ? 'NAME… or -l SELECTOR' : 'NAME…, -l SELECTOR or --all';
    throw new Error(`give the ${want.plural} to act on: ${usage} ${ways}`);
  }
  const { items } = await ctx.store.list(want.kind, { namespace, labelSelector: parseSelector(opts.selector) });
  const picked = items.filter(eligible).map((o) => o.metadata.name);
  return { kind: want, namespace, names: picked.sort(), selected: true };
}

// The read-modify-write moved to client/update.ts (the console's actions use it too); re-exported here.
export { CAS_ATTEMPTS, type Change, type Outcome, updateWithRetry } from '../client/update.js';
