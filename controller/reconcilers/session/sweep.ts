/**
 * The stale-run sweep of a node agent: when its node lease had lapsed (the agent was stopped or cut
 * off from the store for longer than the lease) and at its start, before it reconciles anything,
 * it kills every run in its tmux that is no longer its own — the session was bound to another node
 * or to a newer epoch meanwhile, unbound (its node was declared lost), or deleted. Runs that are
 * still its own are left to be adopted.
 *
 * A run's epoch travels with its tmux session, in its `@orchctl-epoch` option (the launch sets it;
 * it is absent on runs started before bindings existed, which are adopted, never swept). What a run
 * is judged against is read fresh from the store, not a cache.
 */
import type { AgentSession } from '../../api/session.js';
import type { PaneObserver } from '../../observers/panes.js';
import type { PaneInfo, Tmux } from '../../observers/tmux.js';
import type { Logger } from '../../runtime/log.js';
import type { Store } from '../../store/store.js';

/** The epoch a pane's run was started under, if it carries one. */
export function paneEpoch(pane: Pick<PaneInfo, 'epoch'>): number | undefined {
  return /^\d+$/.test(pane.epoch) ? Number(pane.epoch) : undefined;
}

/**
 * Why the run in `pane` is stale on node `node`, or undefined when it is still this node's (or not
 * orchctl's business here: a pane of another store is an orphan, which the Node reconciler reports).
 * `session`: the object whose uid the pane carries, as the store has it now (undefined: none).
 */
export function staleRun(
  pane: Pick<PaneInfo, 'uid' | 'epoch' | 'store'>,
  session: AgentSession | undefined,
  node: string,
  storeUid: string,
): string | undefined {
  if (!pane.uid) return undefined;
  if (!session) return pane.store === storeUid ? 'its AgentSession no longer exists' : undefined;
  const epoch = paneEpoch(pane);
  const b = session.status?.binding;
  if (!b) return epoch === undefined ? undefined : `the session was unbound from this node (run epoch ${epoch})`;
  if (b.nodeName !== node) return `the session is bound to node ${b.nodeName} (epoch ${b.epoch})`;
  if (epoch !== undefined && epoch !== b.epoch) return `the run's epoch ${epoch} is not the binding's ${b.epoch}`;
  return undefined;
}

export interface SweepDeps {
  store: Store;
  tmux: Tmux;
  panes: PaneObserver;
  node: string;
  storeUid: string;
  log: Logger;
}

/** Kills this node's stale runs (see the file's comment); returns how many. */
export async function sweepStaleRuns(d: SweepDeps): Promise<number> {
  d.panes.invalidate();
  const snap = await d.panes.snapshot();
  const ours = snap.panes.filter((p) => p.uid);
  if (!ours.length) return 0;
  const { items } = await d.store.list('AgentSession');
  const byUid = new Map(items.map((s) => [s.metadata.uid, s as AgentSession]));
  const killed = new Set<string>();
  for (const pane of ours) {
    if (killed.has(pane.session)) continue;
    const why = staleRun(pane, byUid.get(pane.uid), d.node, d.storeUid);
    if (!why) continue;
    d.log.warn(`node ${d.node}: killing stale run ${pane.key} (tmux session ${pane.session}): ${why}`);
    await d.tmux.kill(pane.session);
    killed.add(pane.session);
  }
  if (killed.size) d.panes.invalidate();
  return killed.size;
}
