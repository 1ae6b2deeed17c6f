/** What every command needs: the kind registry and the store, opened from global options. */
import type { StoreChoice, StoreTarget } from '../config/config-location.js';
import type { KindInfo, Registry } from '../api/crds.js';
import { registry } from '../config/crds.js';
import { orchctlHome } from '../config/paths.js';
import { DEFAULT_NAMESPACE } from '../api/types.js';
import { ValidatingStore } from '../client/validating-store.js';
import { storeFor, storeTarget } from '../store/open.js';
import type { Store } from '../store/store.js';

export interface GlobalOptions {
  home?: string;
  /** A context of $ORCHCTL_HOME/config (docs/contexts.md). */
  context?: string;
}

export interface Context {
  reg: Registry;
  store: Store;
  close(): Promise<void>;
}

/** What the global options say about the store: $ORCHCTL_HOME (or --home) and --context. */
export function storeChoice(g: GlobalOptions = {}): StoreChoice {
  const env = g.home ? { ...process.env, ORCHCTL_HOME: g.home } : process.env;
  return { home: orchctlHome(env), context: g.context, env };
}

/** Which store the global options name, and why: --context > $ORCHCTL_STORE > currentContext > default. */
export const resolveTarget = (g: GlobalOptions = {}): Promise<StoreTarget> => storeTarget(storeChoice(g));

/**
 * Opens the store. `readonly` for commands that only read (get, describe, logs...): they take no
 * write lock, so they never wait on the controller, and on a home with no store they find nothing
 * and create nothing.
 */
export function openContext(g: GlobalOptions = {}, opts: { readonly?: boolean } = {}): Context {
  // Every spec a command writes is checked as `orchctl apply` checks a manifest (one validating client).
  const store = new ValidatingStore(storeFor(storeChoice(g), opts));
  return { reg: registry(), store, close: () => store.close() };
}

/** The namespace a command works in: -n, else $ORCHCTL_NAMESPACE, else "default". */
export function namespaceFor(kind: KindInfo, ns: string | undefined): string {
  if (!kind.namespaced) return '';
  return ns || process.env.ORCHCTL_NAMESPACE || DEFAULT_NAMESPACE;
}

/** `TYPE NAME...`, `TYPE/NAME ...` and `TYPE1,TYPE2` forms, as kubectl accepts them. */
export function parseTargets(reg: Registry, args: string[]): { kind: KindInfo; names: string[] }[] {
  if (!args.length) throw new Error('you must specify the type of resource to get (e.g. orchctl get agentsessions)');
  if (args[0].includes('/')) {
    const out = new Map<KindInfo, string[]>();
    for (const a of args) {
      const [t, n] = a.split('/');
      if (!n) throw new Error(`arguments in resource/name form must have a single resource and name: "${a}"`);
      const k = reg.resolve(t);
      out.set(k, [...(out.get(k) ?? []), n]);
    }
    return [...out].map(([kind, names]) => ({ kind, names }));
  }
  const kinds = args[0]
    .split(',')
    .filter(Boolean)
    .flatMap((t) => (t === 'all' ? reg.kinds.filter((k) => k.categories.includes('all')) : [reg.resolve(t)]));
  return kinds.map((kind) => ({ kind, names: args.slice(1) }));
}

export const qualifiedKind = (k: KindInfo) => `${k.singular}.orchctl.io`;
