/**
 * Keeps the Node object of this node agent current (one per node name; on one host the controller
 * embeds the agent): its labels and spec.maxSessions as the agent was started with, capacity,
 * free memory/disk, load, uptime, tool versions, the process holding it, the sessions bound here,
 * the Projects whose path exists on this host (the scheduler's placement check: one stat each),
 * the Ready condition, and tmux sessions on our socket that no object owns. A session tagged with
 * this store's identity whose object is gone was deleted behind the finalizer's back: it is
 * stopped. Any other unowned session — another store's, a lost or replaced store's, an older
 * orchctl's, or one a person started — is an orphan: reported on the Node and in an Event, never
 * killed unless `--gc-orphans` says so.
 */
import { NodeReason } from '../../api/event-reasons.js';
import fs from 'node:fs';
import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { setCondition } from '../../api/conditions.js';
import { API_VERSION, type Condition, type Resource } from '../../api/types.js';
import type { EventRecorder } from '../../client/events.js';
import type { HostSnapshot } from '../../observers/host.js';
import type { PaneObserver } from '../../observers/panes.js';
import type { Tmux } from '../../observers/tmux.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store } from '../../store/store.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { Node } from '../../api/node.js';
import { writeStatusMerged } from '../../client/status.js';

export function nodeName(hostname = os.hostname()): string {
  const n = hostname
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return n.slice(0, 253) || 'localhost';
}

export interface NodeDeps {
  store: Store;
  sessions: Informer<'AgentSession'>;
  panes: PaneObserver;
  tmux: Tmux;
  host: () => HostSnapshot;
  versions: { node: string; tmux: string; git: string; orchctl: string };
  controller: { holderIdentity: string; pid: number; startTime: string };
  recorder: EventRecorder;
  log: { warn(msg: string): void };
  /** This store's identity (the `@orchctl-store` tag of the sessions it launched). */
  storeUid: string;
  gcOrphans?: boolean;
  /** This node's name (default: the hostname, cleaned up as nodeName() does). */
  nodeName?: string;
  /** Labels this agent puts on its Node (`orchctl node --label k=v`); others set on it are kept. */
  labels?: Record<string, string>;
  /** spec.maxSessions as the agent was started with (`--max-sessions`); unset leaves the Node's own. */
  maxSessions?: number;
  /** The Projects, for status.projects (whose spec.path is a directory on this host). */
  projects?: Pick<Informer<'Project'>, 'list'>;
}

export class NodeReconciler {
  readonly name: string;
  private reportedOrphans = new Set<string>();

  constructor(private readonly d: NodeDeps) {
    this.name = d.nodeName ?? nodeName();
  }

  private cachedUnschedulable = false;

  /** spec.unschedulable as of the last pass: admission stops while it is true. */
  unschedulable(): boolean {
    return this.cachedUnschedulable;
  }

  async reconcile(): Promise<void> {
    const key = { kind: 'Node', namespace: '', name: this.name };
    const node = await this.register(await this.d.store.get(key));
    this.cachedUnschedulable = !!(node.spec as { unschedulable?: boolean } | undefined)?.unschedulable;
    const h = this.d.host();
    const sessions = this.d.sessions.list();
    const uids = new Set(sessions.map((s) => s.metadata.uid));
    const snap = await this.d.panes.snapshot();
    const orphans: string[] = [];
    for (const pane of snap.panes) {
      if (pane.uid && uids.has(pane.uid)) continue;
      if (pane.uid && this.d.storeUid && pane.store === this.d.storeUid) {
        // Launched under this store, but its object is gone (deleted with the finalizer bypassed): stop it.
        this.d.log.warn(`killing tmux session ${pane.session}: its AgentSession (uid ${pane.uid}) no longer exists`);
        await this.d.tmux.kill(pane.session);
        this.d.panes.invalidate();
        continue;
      }
      const why = orphanReason(pane.uid, pane.store);
      if (this.d.gcOrphans) {
        this.d.log.warn(`--gc-orphans: killing orphan tmux session "${pane.session}" (${why})`);
        await this.d.tmux.kill(pane.session);
        this.d.panes.invalidate();
        await this.d.recorder.record(
          node,
          'Normal',
          NodeReason.OrphanKilled,
          `killed orphan tmux session "${pane.session}" (${why}) as --gc-orphans asked`,
        );
        continue;
      }
      orphans.push(pane.session);
      if (!this.reportedOrphans.has(pane.session)) {
        this.reportedOrphans.add(pane.session);
        const socket = this.d.tmux.socket;
        const msg =
          `orphan tmux session "${pane.session}" on tmux socket "${socket}": ${why}; left running (remove it ` +
          `with \`orchctl controller --gc-orphans\` or \`tmux -L ${socket} kill-session -t ${pane.session}\`)`;
        this.d.log.warn(msg);
        await this.d.recorder.record(node, 'Warning', NodeReason.OrphanTmuxSession, msg);
      }
    }
    const conditions: Condition[] = structuredClone(
      (node.status as { conditions?: Condition[] } | undefined)?.conditions ?? [],
    );
    const memMB = h.memoryAvailableBytes / 1048576;
    setCondition(conditions, {
      type: 'Ready',
      status: 'True',
      reason: 'NodeAgentReady',
      message: `node agent ${this.d.controller.holderIdentity} is posting ready status`,
    });
    setCondition(conditions, {
      type: 'MemoryPressure',
      status: memMB < 512 ? 'True' : 'False',
      reason: memMB < 512 ? 'LowMemory' : 'SufficientMemory',
      message: `${Math.round(memMB)} MB available`,
    });
    const status = {
      observedGeneration: node.metadata.generation,
      conditions,
      capacity: { cpu: h.cpu, memoryBytes: h.memoryTotalBytes, diskBytes: h.diskTotalBytes },
      free: { memoryBytes: h.memoryAvailableBytes, diskBytes: h.diskFreeBytes },
      loadAverage: h.loadAverage.map((x) => Math.round(x * 100) / 100),
      uptimeSeconds: h.uptimeSeconds,
      versions: this.d.versions,
      controller: this.d.controller,
      heartbeatTime: new Date().toISOString(),
      // What counts against spec.maxSessions: bound here, run not finished (Pending and Backoff too).
      sessions: sessions.filter(
        (s) => s.status?.binding?.nodeName === this.name && !TERMINAL_PHASES.has(s.status?.phase as Phase),
      ).length,
      orphanSessions: orphans,
      projects: this.projectsHere(),
    };
    // Merged: node lifecycle (control plane) writes this Node's Ready condition too.
    await writeStatusMerged(this.d.store, node, status);
  }

  /** The Node as this agent registers it: created, or its labels and maxSessions set as it was started with. */
  private async register(node: Node | undefined): Promise<Resource> {
    const labels = this.d.labels ?? {};
    const max = this.d.maxSessions;
    if (!node)
      return this.d.store.create({
        apiVersion: API_VERSION,
        kind: 'Node',
        metadata: { name: this.name, ...(Object.keys(labels).length ? { labels } : {}) },
        spec: max !== undefined ? { maxSessions: max } : {},
      });
    const merged = { ...node.metadata.labels, ...labels };
    const sameLabels = isDeepStrictEqual(merged, node.metadata.labels ?? {});
    if (sameLabels && (max === undefined || node.spec?.maxSessions === max)) return node;
    return this.d.store.update({
      ...node,
      metadata: { ...node.metadata, labels: merged },
      spec: { ...node.spec, ...(max !== undefined ? { maxSessions: max } : {}) },
    });
  }

  /** `namespace/name` of each Project whose spec.path is a directory here. */
  private projectsHere(): string[] {
    const here: string[] = [];
    for (const p of this.d.projects?.list() ?? []) {
      const dir = p.spec?.path;
      try {
        if (dir && fs.statSync(dir).isDirectory()) here.push(`${p.metadata.namespace || 'default'}/${p.metadata.name}`);
      } catch {
        // not here (or not readable): not a place for its sessions
      }
    }
    return here.sort();
  }
}

function orphanReason(uid: string, store: string): string {
  if (!uid) return 'not started by orchctl';
  if (!store)
    return `its AgentSession (uid ${uid}) is not in this store, and it carries no store identity (an older orchctl)`;
  return (
    `it was started under another store (${store.slice(0, 8)}), ` +
    'or under this one before it was lost, replaced or restored'
  );
}
