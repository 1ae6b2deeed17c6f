// Generated from crds/pipelines.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface PipelineSchema {
  /**
   * The phases and whether new ones may start.
   */
  spec?: {
    /**
     * The phases. Without dependsOn anywhere each phase depends on the one before it; with dependsOn
     * on any phase, each phase depends on exactly the phases it names (none - it starts at once).
     *
     * @minItems 1
     * @maxItems 50
     *
     * Items: One phase - one AgentSession named <pipeline>-<phase>.
     */
    phases: {
      /**
       * Name of the phase, unique in the pipeline; a DNS label. Its session is named <pipeline>-<phase>,
       * which must fit 63 characters.
       */
      name: string;
      /**
       * Names of the phases that must complete before this one starts. Setting it on any phase makes the
       * pipeline a DAG.
       *
       * @maxItems 50
       */
      dependsOn?: string[];
      /**
       * The phase's AgentSession spec (the session is validated as one at apply), plus labels for it.
       * desiredState is the pipeline's to set.
       */
      template: {
        /**
         * Labels of the phase's session, beside orchctl.io/pipeline and orchctl.io/phase, which the
         * pipeline sets.
         */
        labels?: {
          [k: string]: string;
        };
        /**
         * Name of an Agent in the same namespace to run. Set either agentRef or agent.
         */
        agentRef?: string;
        /**
         * An inline Agent spec (as AgentSession spec.agent).
         */
        agent?: {
          [k: string]: unknown;
        };
        /**
         * Name of a Project in the same namespace to work in.
         */
        projectRef?: string;
        /**
         * Working directory when no projectRef is set. Relative paths are resolved against the manifest
         * file's directory.
         */
        workdir?: string;
        /**
         * The phase's task. The handoff of the phases it depends on is added below it.
         */
        prompt?: string;
        /**
         * File holding the task, relative to the manifest file's directory. An alternative to prompt.
         */
        promptFile?: string;
        /**
         * Name of a SessionPolicy in the same namespace.
         */
        policyRef?: string;
        /**
         * Restarts of the session's own runs. Never (the default) leaves recovery to the pipeline - one
         * new run after a tmux death. OnFailure restarts failed runs first (up to maxRestarts); the phase
         * fails when the session gives up. Always cannot be used - a phase ends.
         */
        restartPolicy?: 'Never' | 'OnFailure';
        /**
         * As AgentSession spec.maxRestarts.
         */
        maxRestarts?: number;
        /**
         * Time box for one run of the phase, as a Go duration such as 45m.
         */
        maxDuration?: string;
        /**
         * As AgentSession spec.timeoutAction.
         */
        timeoutAction?: 'Stop' | 'Warn';
        /**
         * As AgentSession spec.restartBackoff.
         */
        restartBackoff?: {
          [k: string]: unknown;
        };
        /**
         * As AgentSession spec.worktree.
         */
        worktree?: {
          [k: string]: unknown;
        };
        /**
         * As AgentSession spec.env.
         *
         * @maxItems 256
         */
        env?: {
          [k: string]: unknown;
        }[];
        /**
         * As AgentSession spec.nodeName.
         */
        nodeName?: string;
        /**
         * As AgentSession spec.nodeSelector.
         */
        nodeSelector?: {
          [k: string]: string;
        };
      };
    }[];
    /**
     * While true no new phase session is created; the running ones go on.
     */
    suspend?: boolean;
  };
  /**
   * Where the pipeline is - each phase's state, session and run, and the overall status.
   */
  status?: {
    /**
     * The metadata.generation the controller last acted on.
     */
    observedGeneration?: number;
    /**
     * Latest observations of the object's state, one entry per condition type (Kubernetes
     * metav1.Condition shape) - Ready, Blocked and Failed.
     *
     * Items: One aspect of the object's current state (a Kubernetes metav1.Condition).
     */
    conditions?: {
      /**
       * Type of the condition in CamelCase.
       */
      type: string;
      /**
       * Status of the condition, one of True, False or Unknown.
       */
      status: 'True' | 'False' | 'Unknown';
      /**
       * The metadata.generation this condition was computed from.
       */
      observedGeneration?: number;
      /**
       * Last time the condition's status changed.
       */
      lastTransitionTime: string;
      /**
       * Programmatic identifier for the condition's last transition.
       */
      reason: string;
      /**
       * Human-readable details about the transition; may be empty.
       */
      message: string;
    }[];
    /**
     * Pending (nothing started), Running, Blocked (a phase waits for a person), Succeeded (every phase
     * completed) or Failed (a phase failed; no new phase starts).
     */
    phase?: 'Pending' | 'Running' | 'Blocked' | 'Succeeded' | 'Failed';
    /**
     * The phase being worked on, counted in completion order, of all phases, e.g. 2/4.
     */
    current?: string;
    /**
     * Phases completed.
     */
    completed?: number;
    /**
     * Phases in the spec.
     */
    total?: number;
    /**
     * Names of the phases running or blocked now.
     */
    active?: string[];
    /**
     * Machine-readable reason of the status, one CamelCase word.
     */
    reason?: string;
    /**
     * Why the pipeline is in its status (the blocker of a blocked phase, the failure of a failed one).
     */
    message?: string;
    /**
     * When the first phase session was created.
     */
    startTime?: string;
    /**
     * When the pipeline succeeded or failed - the end of its last phase (or of the failed one).
     */
    completionTime?: string;
    /**
     * One entry per phase, in spec order.
     *
     * Items: A phase's state.
     */
    phases?: {
      /**
       * The phase's name.
       */
      name?: string;
      /**
       * Pending, Running, Succeeded, Blocked or Failed.
       */
      state?: 'Pending' | 'Running' | 'Succeeded' | 'Blocked' | 'Failed';
      /**
       * The phase's AgentSession.
       */
      session?: string;
      /**
       * The session's current (or last) run.
       */
      run?: number;
      /**
       * Recovery runs after the phase's tmux session died (at most 1).
       */
      attempts?: number;
      /**
       * When the phase's session was created.
       */
      startedAt?: string;
      /**
       * When the phase completed or failed - when its session's run ended (status.completionTime) or its
       * complete report was read, not when the controller noticed.
       */
      finishedAt?: string;
      /**
       * Machine-readable reason of the state.
       */
      reason?: string;
      /**
       * Human-readable detail of the state.
       */
      message?: string;
      /**
       * When a resume was last delivered to the phase.
       */
      resumedAt?: string;
      /**
       * Why the phase's status.json could not be used (a warning; nothing else changes).
       */
      reportProblem?: string;
    }[];
    /**
     * The last orchctl pipeline resume the controller took up, and how it went.
     */
    resume?: {
      /**
       * The orchctl.io/resume-requested annotation value it answered.
       */
      requested?: string;
      /**
       * Delivering (until every blocked phase's node answered), Delivered, Failed, Ignored (nothing was
       * blocked) or Unconfirmed (the controller stopped before it posted the messages).
       */
      state?: string;
      /**
       * When it reached that state.
       */
      at?: string;
      /**
       * The blocked phases it went to.
       */
      phases?: string[];
      /**
       * What the delivery said.
       */
      message?: string;
      /**
       * While Delivering - the messages posted to live blocked phases (the orchctl.io/message annotation
       * on their sessions) whose nodes have not written the outcome yet.
       *
       * @maxItems 50
       */
      waiting?: {
        phase: string;
        session: string;
        id: string;
      }[];
      /**
       * How it went for each phase answered so far.
       *
       * @maxItems 50
       */
      outcomes?: {
        phase: string;
        delivered: boolean;
        how: string;
        at?: string;
      }[];
    };
  };
}
export type PipelineSchemaSpec = NonNullable<PipelineSchema['spec']>;
export type PipelineSchemaStatus = NonNullable<PipelineSchema['status']>;
