/** The Node kind (crds/nodes.yaml is the schema): one host running an orchctl controller (cluster-scoped). */
import type { NodeSchemaSpec } from './generated/node.js';
import type { Condition, Resource } from './types.js';

/** How often a node's reconciler renews its heartbeat; the scheduler's no-nodes grace is one beat. */
export const HEARTBEAT_MS = 10_000;

export type NodeSpec = NodeSchemaSpec;

export type NodeStatus = {
  observedGeneration?: number;
  conditions?: Condition[];
  capacity?: { cpu?: number; memoryBytes?: number; diskBytes?: number };
  free?: { memoryBytes?: number; diskBytes?: number };
  loadAverage?: number[];
  uptimeSeconds?: number;
  versions?: { node?: string; tmux?: string; git?: string; orchctl?: string };
  controller?: { holderIdentity?: string; pid?: number; startTime?: string };
  heartbeatTime?: string;
  /** Sessions in an active phase (a run in progress). */
  sessions?: number;
  /** tmux sessions on the node's tmux socket that no object owns. */
  orphanSessions?: string[];
  /** Project names whose path exists on this host (the scheduler's placement check). */
  projects?: string[];
};

export type Node = Resource<NodeSpec, NodeStatus>;
