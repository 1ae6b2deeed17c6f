/**
 * The real AutopilotReconciler on a real store, in process (no manager, no tmux): what is under test
 * is which objects a think writes. Its informer caches are snapshots of the store taken when the
 * reconciler is built and never refreshed, so a test chooses exactly what a think reads.
 */
import type { ObjectOf } from '../../controller/api/kinds.js';
import type { Resource } from '../../controller/api/types.js';
import { type AutopilotDeps, AutopilotReconciler } from '../../controller/reconcilers/autopilot/reconciler.js';
import { silentLogger } from '../../controller/runtime/log.js';
import type { Store } from '../../controller/store/store.js';

/** The kinds the autopilot reconciler reads through informers. */
const CACHED_KINDS = ['Autopilot', 'Project', 'AgentSession', 'Evaluation', 'Decision', 'SessionPolicy', 'Node'];

/** A cache as an informer would hold it, filled from the store now (and never again). */
export async function snapshotCache(store: Store, kinds: readonly string[] = CACHED_KINDS) {
  const items = new Map<string, Resource[]>();
  for (const k of kinds) items.set(k, (await store.list(k)).items);
  return <K extends string>(kind: K) => {
    const of = (items.get(kind) ?? []) as ObjectOf<K>[]; // listed under `kind`
    return {
      list: (ns?: string) => of.filter((o) => ns === undefined || o.metadata.namespace === ns),
      get: (ns: string | undefined, name: string) =>
        of.find((o) => o.metadata.name === name && (ns === undefined || o.metadata.namespace === ns)),
    };
  };
}

/**
 * A reconciler reading a snapshot of `store`. Without `plannerFor` it builds each Autopilot's planner
 * from its spec.planner, as the controller does.
 */
export async function reconcilerFromStore(
  store: Store,
  opts: Partial<Omit<AutopilotDeps, 'store'>> = {},
): Promise<AutopilotReconciler> {
  const cache = await snapshotCache(store);
  return new AutopilotReconciler({
    store,
    autopilots: cache('Autopilot'),
    projects: cache('Project'),
    sessions: cache('AgentSession'),
    evaluations: cache('Evaluation'),
    decisions: cache('Decision'),
    policies: cache('SessionPolicy'),
    nodes: cache('Node'),
    log: silentLogger,
    ...opts,
  });
}
