/**
 * The stale-run sweep of a node agent: when its node lease had lapsed (the agent was stopped or cut
 * off from the store for longer than the lease) and at its start, before it reconciles anything,
 * it kills every run in its tmux that is no longer its own — the session was bound to another node
 * or to a newer epoch meanwhile, unbound (its node was declared lost), or deleted. Runs that are
 * still its own are left to be adopted. A run bound to another node under the run's own epoch is
 * that node's, not stale: only a rename (`--rename-node`) hands a run to another name without a new
 * epoch, and the node it was handed to adopts it on this same socket (app/node-home.ts).
 *
 * A run's epoch travels with its tmux session, in its tags (`@orchctl-tags`; the launch sets it;
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
  if (b.nodeName !== node)
    return epoch === b.epoch ? undefined : `the session is bound to node ${b.nodeName} (epoch ${b.epoch})`;
  if (epoch !== undefined && epoch !== b.epoch) return `the run's epoch ${epoch} is not the binding's ${b.epoch}`;
  return undefined;
}

/**
 * The runs on a tmux socket that belong to nodes other than `node`, by node name: a run started
 * under its session's current binding (the tag's epoch is the binding's), or one without an epoch
 * (started before bindings) whose session is bound to `recorded`, the name this home was last run
 * under. A node agent must not take a home that holds such runs under another name: its sweep
 * would kill them (app/node-home.ts).
 */
export function runsOfOtherNodes(
  panes: Pick<PaneInfo, 'uid' | 'epoch' | 'store' | 'session'>[],
  sessions: AgentSession[],
  node: string,
  storeUid: string,
  recorded?: string,
): Map<string, AgentSession[]> {
  const byUid = new Map(sessions.map((s) => [s.metadata.uid, s]));
  const out = new Map<string, AgentSession[]>();
  const seen = new Set<string>();
  for (const pane of panes) {
    if (!pane.uid || pane.store !== storeUid || seen.has(pane.session)) continue;
    const s = byUid.get(pane.uid);
    const b = s?.status?.binding;
    if (!s || !b || b.nodeName === node) continue;
    const epoch = paneEpoch(pane);
    if (epoch === undefined ? b.nodeName !== recorded : epoch !== b.epoch) continue;
    seen.add(pane.session);
    const list = out.get(b.nodeName) ?? [];
    if (!list.includes(s)) list.push(s);
    out.set(b.nodeName, list);
  }
  return out;
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
  const byUid = new Map(items.map((s) => [s.metadata.uid, s]));
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
