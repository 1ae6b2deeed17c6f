/**
 * Which node name holds an ORCHCTL_HOME and its tmux socket. Sessions are bound to a node name, and
 * a node agent kills every run on its socket bound to another node (reconcilers/session/sweep.ts):
 * an agent started under a new name over the runs of the old one would kill them all. So the name
 * a home runs under — explicit (`--node-name`, `--name`, a context's `node`) or the default — is
 * kept in $ORCHCTL_HOME/node-name, and before a node agent does anything (its lease, its sweep) it
 * looks at the runs on its socket: runs bound to another name make it stop with an error naming
 * both names, unless it was asked to rename (`--rename-node`). A rename, under the old name's node
 * lease (so that no agent of that name is running, and as its fence):
 *  - rebinds every session bound to the old name to the new one, keeping the binding's epoch, so
 *    the runs started under it stay current and the new agent adopts their panes (same pane, same
 *    run, no restart); compare-and-swap, so a scheduler or node lifecycle that moved a session
 *    meanwhile wins and that run is stale as before;
 *  - deletes the old Node once nothing is bound to it (a Node nothing will renew would only turn
 *    NotReady and stay), and releases the old lease.
 * docs/multi-host.md, "Node names".
 */
import { SessionReason } from '../api/event-reasons.js';
import fs from 'node:fs';
import path from 'node:path';
import { getCondition, setCondition } from '../api/conditions.js';
import { isApiError } from '../api/errors.js';
import type { AgentSession, AgentSessionStatus } from '../api/session.js';
import { keyOfKind } from '../api/kinds.js';
import { EventRecorder } from '../client/events.js';
import type { PaneObserver } from '../observers/panes.js';
import { nodeName as hostNodeName } from '../reconcilers/node/reconciler.js';
import { nodeLeaseName } from '../reconcilers/nodelifecycle/plan.js';
import { runsOfOtherNodes } from '../reconcilers/session/sweep.js';
import { acquireLease, NODE_LEASE_TIMING } from '../runtime/lease.js';
import type { Logger } from '../runtime/log.js';
import { isRetryableConflict, retryOnConflict } from '../store/retry.js';
import type { Store, TxnOptions } from '../store/store.js';

export const NODE_NAME_FILE = 'node-name';

/** The node name this home last ran under, if any. */
export function recordedNodeName(home: string): string | undefined {
  try {
    return fs.readFileSync(path.join(home, NODE_NAME_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined; // first start in this home
  }
}

/** Keeps `name` as this home's node name (written whole: a crash leaves the old name or the new). */
export function recordNodeName(home: string, name: string): void {
  const file = path.join(home, NODE_NAME_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${name}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * The node name when none is given: the one this home last ran under, else this host's. A host
 * whose name changes (a laptop on another network) must not find its runs bound to a node that
 * no longer exists.
 */
export function defaultNodeName(home: string): string {
  return recordedNodeName(home) ?? hostNodeName();
}

export interface ClaimDeps {
  home: string;
  /** The tmux socket's name, for the error. */
  socket: string;
  /** The name this process's node agent is to run under. */
  name: string;
  /** `--rename-node`: take the runs of other names over rather than refuse. */
  rename: boolean;
  store: Store;
  panes: PaneObserver;
  /** The process's lease holder identity (it then holds the node lease under it). */
  identity: string;
  log: Logger;
}

const runs = (n: number) => `${n} run${n === 1 ? '' : 's'}`;

/**
 * Before the node agent starts: refuses (throws, one line) when the socket holds runs of another
 * node name, or with `rename` takes them over (see the file's comment); then records the name.
 */
export async function claimHome(d: ClaimDeps): Promise<void> {
  const recorded = recordedNodeName(d.home);
  d.panes.invalidate();
  const snap = await d.panes.snapshot();
  const storeUid = await d.store.uid();
  const ours = snap.panes.filter((p) => p.uid && p.store === storeUid);
  const sessions = ours.length ? (await d.store.list('AgentSession')).items : [];
  const held = runsOfOtherNodes(ours, sessions, d.name, storeUid, recorded);
  if (held.size && !d.rename) {
    const names = [...held.keys()];
    const what = names.map((n) => `${runs(held.get(n)!.length)} of node ${n}`).join(' and ');
    throw new Error(
      `${d.home} (tmux socket ${d.socket}) holds ${what}: starting as node ${d.name} would kill them; ` +
        `start as node ${names.join(' or ')}, or add --rename-node to rename ${names.join(' and ')} to ${d.name} ` +
        '(sessions rebound, runs adopted)',
    );
  }
  if (d.rename) {
    const from = new Set(held.keys());
    if (recorded && recorded !== d.name) from.add(recorded);
    if (!from.size) d.log.info(`--rename-node: this home already runs as node ${d.name}; nothing to rename`);
    for (const old of from) await renameNode(d, old);
  } else if (recorded && recorded !== d.name)
    d.log.info(`node name ${d.name} (this home ran as ${recorded}, which has no runs on tmux socket ${d.socket})`);
  if (recorded !== d.name) recordNodeName(d.home, d.name);
}

/** Rebinds node `old`'s sessions to `d.name` and deletes its Node, under `old`'s node lease. */
async function renameNode(d: ClaimDeps, old: string): Promise<void> {
  const lease = nodeLeaseName(old);
  if (!(await acquireLease(d.store, d.identity, NODE_LEASE_TIMING.seconds, lease))) {
    const cur = await d.store.getLease(lease);
    throw new Error(
      `--rename-node: node ${old} is running (${cur?.holderIdentity} holds the lease ${lease}); ` +
        `stop it before renaming it to ${d.name}`,
    );
  }
  const fence = { lease, holder: d.identity };
  const recorder = new EventRecorder(d.store, 'orchctl-node', undefined, (m) => d.log.warn(m));
  try {
    let moved = 0;
    for (const s of (await d.store.list('AgentSession')).items) {
      if (s.status?.binding?.nodeName !== old) continue;
      const written = await rebind(d.store, s, old, d.name, fence);
      if (!written) continue;
      moved++;
      const run = written.status?.run;
      const live = d.name === written.status?.lifecycle?.nodeName && written.status?.tmuxSession;
      await recorder.record(
        written,
        'Normal',
        SessionReason.NodeRenamed,
        `node ${old} renamed to ${d.name} (--rename-node): the session is bound to ${d.name}` +
          (live && run ? `; run ${run} goes on there (adopted, not restarted)` : ''),
      );
    }
    const left = (await d.store.list('AgentSession')).items.some((s) => s.status?.binding?.nodeName === old);
    let gone = '';
    if (!left) {
      try {
        await d.store.txn([{ op: 'delete', key: { kind: 'Node', namespace: '', name: old } }], { fence });
        gone = `; Node ${old} deleted`;
      } catch (e) {
        if (!isApiError(e, 'NotFound')) throw e;
      }
    }
    d.log.warn(`--rename-node: node ${old} renamed to ${d.name}: ${moved} session(s) rebound${gone}`);
  } finally {
    await d.store.releaseLease(lease, d.identity).catch(() => undefined);
  }
}

const ATTEMPTS = 5;

/** One session's binding moved from `old` to `name` at the same epoch (CAS); undefined when it moved elsewhere. */
async function rebind(
  store: Store,
  first: AgentSession,
  old: string,
  name: string,
  fence: NonNullable<TxnOptions['fence']>,
): Promise<AgentSession | undefined> {
  try {
    return await retryOnConflict(
      async (attempt) => {
        const s = attempt === 0 ? first : await store.get(keyOfKind('AgentSession', first));
        if (!s) return undefined;
        const b = s.status?.binding;
        if (b?.nodeName !== old) return undefined;
        const status: AgentSessionStatus = structuredClone(s.status ?? {});
        const now = new Date().toISOString();
        const message = `bound to node ${name} (epoch ${b.epoch}): node ${old} was renamed`;
        status.binding = { ...b, nodeName: name };
        // The run started under this binding is the renamed node's run; an older one stays where it was.
        if (status.lifecycle?.nodeName === old && status.lifecycle.epoch === b.epoch) status.lifecycle.nodeName = name;
        status.conditions ??= [];
        setCondition(
          status.conditions,
          { type: 'Scheduled', status: 'True', reason: SessionReason.NodeRenamed, message },
          now,
        );
        if (getCondition(status.conditions, 'NodeLost')?.status === 'True')
          setCondition(
            status.conditions,
            { type: 'NodeLost', status: 'False', reason: SessionReason.NodeRenamed, message },
            now,
          );
        const [written] = await store.txn([{ op: 'updateStatus', object: { ...s, status } }], { fence });
        return written as AgentSession; // a txn's results are plain Resources: this one is the updateStatus of s
      },
      { attempts: ATTEMPTS },
    );
  } catch (e) {
    if (isApiError(e, 'NotFound')) return undefined;
    if (!isRetryableConflict(e)) throw e;
    if (!(await store.get(keyOfKind('AgentSession', first)))) return undefined;
    throw new Error(`--rename-node: AgentSession ${first.metadata.namespace}/${first.metadata.name} kept changing`);
  }
}
