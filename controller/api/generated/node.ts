// Generated from crds/nodes.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface NodeSchema {
  /**
   * Desired configuration of the node.
   */
  spec?: {
    /**
     * While true (cordoned), the scheduler binds no new session here and the node admits no new runs;
     * running sessions are left alone.
     */
    unschedulable?: boolean;
    /**
     * At most this many sessions bound here at once whose run is not finished (the scheduler's
     * capacity check). Unset - no limit. `orchctl node --max-sessions` sets it.
     */
    maxSessions?: number;
  };
  /**
   * What the node's controller observed about its host, refreshed on every heartbeat.
   */
  status?: {
    /**
     * The metadata.generation the controller last acted on. When it equals metadata.generation, status
     * reflects the current spec.
     */
    observedGeneration?: number;
    /**
     * Latest observations of the object's state, one entry per condition type (Kubernetes
     * metav1.Condition shape). Conditions are authoritative; phase-like fields are derived from them.
     *
     * Items: One aspect of the object's current state (a Kubernetes metav1.Condition).
     */
    conditions?: {
      /**
       * Type of the condition in CamelCase or in foo.example.com/CamelCase form, e.g. Ready.
       */
      type: string;
      /**
       * Status of the condition, one of True, False or Unknown.
       */
      status: 'True' | 'False' | 'Unknown';
      /**
       * The metadata.generation this condition was computed from; if it is older than the object's
       * current generation, the condition is out of date.
       */
      observedGeneration?: number;
      /**
       * Last time the condition's status changed from one value to another; it does not change when only
       * the reason or message change.
       */
      lastTransitionTime: string;
      /**
       * Programmatic identifier for the condition's last transition, one CamelCase word such as
       * SessionStarted. Used for aggregation and table columns.
       */
      reason: string;
      /**
       * Human-readable details about the transition; may be empty.
       */
      message: string;
    }[];
    /**
     * Total resources of the host.
     */
    capacity?: {
      /**
       * Number of logical CPUs.
       */
      cpu?: number;
      /**
       * Total physical memory in bytes.
       */
      memoryBytes?: number;
      /**
       * Total size in bytes of the filesystem holding orchctl's state directory.
       */
      diskBytes?: number;
    };
    /**
     * Resources of the host that are currently available.
     */
    free?: {
      /**
       * Available memory in bytes (MemAvailable on Linux).
       */
      memoryBytes?: number;
      /**
       * Free disk space in bytes on the filesystem measured by capacity.diskBytes.
       */
      diskBytes?: number;
    };
    /**
     * Load averages over the last 1, 5 and 15 minutes, in that order.
     *
     * @maxItems 3
     */
    loadAverage?: number[];
    /**
     * Seconds since the host booted.
     */
    uptimeSeconds?: number;
    /**
     * Versions of the software orchctl depends on, as installed on the host.
     */
    versions?: {
      /**
       * Node.js version running the controller.
       */
      node?: string;
      /**
       * tmux version.
       */
      tmux?: string;
      /**
       * git version.
       */
      git?: string;
      /**
       * orchctl version of the controller.
       */
      orchctl?: string;
    };
    /**
     * The controller process that currently holds this node's lease.
     */
    controller?: {
      /**
       * Identity of the lease holder, unique per controller process.
       */
      holderIdentity?: string;
      /**
       * Process ID of the controller.
       */
      pid?: number;
      /**
       * When the controller process started.
       */
      startTime?: string;
    };
    /**
     * Last time the controller refreshed this status; a stale heartbeat means no controller is running
     * on the node.
     */
    heartbeatTime?: string;
    /**
     * Sessions bound to this node whose run is not finished (waiting, running or between runs) - what
     * counts against spec.maxSessions.
     */
    sessions?: number;
    /**
     * tmux sessions on the orchctl socket that no AgentSession owns (untagged). They are reported,
     * never killed.
     */
    orphanSessions?: string[];
    /**
     * Projects (namespace/name) whose spec.path is a directory on this host. When some node reports a
     * project, the scheduler places its sessions only on nodes that do.
     *
     * @maxItems 10000
     */
    projects?: string[];
  };
}
export type NodeSchemaSpec = NonNullable<NodeSchema['spec']>;
export type NodeSchemaStatus = NonNullable<NodeSchema['status']>;
