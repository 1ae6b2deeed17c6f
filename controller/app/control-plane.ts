/**
 * The control plane role (`orchctl controller`): leader-elected on the store lease
 * `orchctl-controller`, with every write fenced by it (role-stores.ts). It decides where and
 * whether things run and tells people — the scheduler, node lifecycle, projects, policies, the
 * notifier, housekeeping, the autopilot and pipelines — and touches no tmux of its own: runs are
 * the node agents' (node-agent.ts). docs/multi-host.md says what runs where and why.
 */
import type { ControllerMetrics } from '../metrics/index.js';
import { setup as setupAutopilot } from '../reconcilers/autopilot/setup.js';
import { setup as setupHousekeeping } from '../reconcilers/housekeeping/setup.js';
import { setup as setupNodeLifecycle } from '../reconcilers/nodelifecycle/setup.js';
import { setup as setupNotifier } from '../reconcilers/notifier/setup.js';
import { loadOrCreateLinkKey } from '../notify/action-links.js';
import { setup as setupPipeline } from '../reconcilers/pipeline/setup.js';
import { setup as setupPolicy } from '../reconcilers/policy/setup.js';
import { setup as setupProject } from '../reconcilers/project/setup.js';
import { setup as setupScheduler } from '../reconcilers/scheduler/setup.js';
import type { Retention } from '../api/retention.js';
import type { ControllerServices } from '../reconcilers/services.js';
import type { Manager } from '../runtime/manager.js';
import { applyManifests, ManifestWatcher } from './manifests.js';

export interface ControlPlaneDeps extends ControllerServices {
  metrics: ControllerMetrics;
  /** A directory of manifests applied at start and whenever a file in it changes. */
  manifests?: string;
  eventTtlMs?: number;
  /** Retention of what grows with time (api/retention.ts); defaults for what is unset. */
  retention?: Partial<Retention>;
  /** From a node's last renewal seen to moving its sessions (nodelifecycle/plan.ts checkGrace bounds it). */
  nodeGraceMs?: number;
  /** Approve/reject links on a pending Decision's notification: the console's external URL and their expiry. */
  actionLinks?: { base: URL; ttlMs: number };
}

/** Registers the control plane's controllers on `mgr` (whose lease is the controller lease). */
export function setupControlPlane(mgr: Manager, d: ControlPlaneDeps): void {
  const { log, recorder } = d;
  if (d.manifests) {
    const dir = d.manifests;
    // As the caches fill, before any controller's first pass: what they declare is there from the start.
    mgr.onSynced('manifests', () => applyManifests(mgr.store, dir, log));
    mgr.add(new ManifestWatcher(mgr.store, dir, log));
  }
  setupScheduler(mgr, { recorder, metrics: d.metrics.scheduler });
  setupNodeLifecycle(mgr, { recorder, graceMs: d.nodeGraceMs });
  setupProject(mgr, { git: d.git });
  setupPolicy(mgr, { recorder });
  const retentionMs = d.retention?.notificationTtlMs;
  const links = d.actionLinks && { ...d.actionLinks, key: loadOrCreateLinkKey(d.home) };
  setupNotifier(mgr, { recorder, log, metrics: d.metrics.notifications, home: d.home, retentionMs, links });
  setupHousekeeping(mgr, { eventTtlMs: d.eventTtlMs, retention: d.retention });
  setupAutopilot(mgr, { log, metrics: d.metrics.autopilot });
  setupPipeline(mgr, d);
}
