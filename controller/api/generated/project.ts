// Generated from crds/projects.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface ProjectSchema {
  /**
   * Desired configuration of the project - where it lives, how important it is, its goals, and
   * whether it is blocked or protected.
   */
  spec?: {
    /**
     * Working directory of the project, usually a git repository. Relative paths are resolved against
     * the manifest file's directory at apply time.
     */
    path: string;
    /**
     * Priority of the project, higher first; a planner starts work on higher-priority stale projects
     * first.
     */
    priority?: number;
    /**
     * Goals and context of the project, in free text (at most 8192 characters), for whoever picks its
     * next work - a person or a planner.
     */
    notes?: string;
    /**
     * Present means the project is blocked - no new sessions start in it (running ones are left alone)
     * and it is never Stale. Remove the field to unblock it.
     */
    blocked?: {
      /**
       * Why the project is blocked, e.g. waiting for an API key; shown by orchctl get projects -o wide.
       */
      reason: string;
    };
    /**
     * When true, planners leave the project alone - they never start, stop or restart its sessions;
     * people still can.
     */
    protected?: boolean;
    /**
     * Free-text description of the project, shown by orchctl describe.
     */
    description?: string;
    /**
     * The project is Stale when it is not blocked, has no active session and its last activity (last
     * commit or last run end) is older than this, as a Go duration such as 72h. Unset means 72h (3
     * days); an Autopilot's stalenessDays will take precedence once that kind exists.
     */
    staleAfter?: string;
    /**
     * Only Nodes whose labels include all of these key/value pairs get this project's sessions (say,
     * the hosts that have its repository and credentials). Unset - any node; and when some nodes
     * report the project's path in status.projects, only those.
     */
    nodeSelector?: {
      [k: string]: string;
    };
  };
  /**
   * What the controller observed about the project directory and its git repository.
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
     * Whether spec.path exists and is a directory.
     */
    exists?: boolean;
    /**
     * Whether spec.path is inside a git work tree.
     */
    isGitRepo?: boolean;
    /**
     * Summary of the repository's git state, refreshed periodically.
     */
    git?: {
      /**
       * Currently checked-out branch; empty when HEAD is detached.
       */
      branch?: string;
      /**
       * Commit SHA that HEAD points to.
       */
      head?: string;
      /**
       * Whether the work tree has uncommitted changes.
       */
      dirty?: boolean;
      /**
       * Commit time of HEAD.
       */
      lastCommitTime?: string;
      /**
       * Subject line of HEAD's commit message.
       */
      lastCommitSubject?: string;
    };
    /**
     * Number of AgentSessions of this project (spec.projectRef) not in a terminal phase (Pending,
     * Starting, Running, Stopping or Backoff).
     */
    activeSessions?: number;
    /**
     * The later of the repository's last commit time and the last run end (completionTime) of the
     * project's sessions; absent when there has been neither.
     */
    lastActivity?: string;
    /**
     * Written by the Autopilot that selects the project - its recovery restarts after failed runs in
     * the current window (guardrails.errorRetryWindow), kept here so the count survives a controller
     * restart.
     */
    errorRetries?: {
      /**
       * Recovery restarts in the current window (a TimeBox continuation is counted in timeBoxes
       * instead).
       */
      count: number;
      /**
       * Continuations of runs stopped at their time box in the current window
       * (guardrails.maxTimeBoxContinuations).
       */
      timeBoxes?: number;
      /**
       * When the current window started.
       */
      windowStart: string;
      /**
       * The last failed run it looked at, so that one failure is counted once.
       */
      lastFailure?: {
        /**
         * Name of the AgentSession.
         */
        session: string;
        /**
         * The failed run.
         */
        run: number;
        /**
         * How the failure was classified - Transient, Dependency and Logic are retried; a TimeBox run is
         * continued; Auth and Unknown are escalated.
         */
        class: 'Transient' | 'Dependency' | 'Auth' | 'Logic' | 'TimeBox' | 'Unknown';
        /**
         * When it was classified.
         */
        at: string;
      };
      /**
       * Set when it stopped retrying - an Auth or Unknown failure, or the count reached maxErrorRetries
       * (timeBoxes maxTimeBoxContinuations) - until the window ends.
       */
      escalated?: {
        /**
         * Why it escalated.
         */
        reason: string;
        /**
         * When it escalated.
         */
        at: string;
      };
    };
    /**
     * The verdicts of the last (up to 5) judged Evaluations of the project's sessions, newest first.
     *
     * @maxItems 5
     *
     * Items: One judged run - which Evaluation, of which session, and its verdict.
     */
    recentOutcomes?: {
      /**
       * Name of the Evaluation.
       */
      evaluation: string;
      /**
       * Name of the AgentSession it judged.
       */
      session: string;
      /**
       * The judge's score, 1 (worst) to 5 (best).
       */
      score: number;
      /**
       * What the judge recommended next.
       */
      recommendation: 'continue' | 'retry' | 'escalate' | 'complete';
      /**
       * When the verdict was given (the Evaluation's status.evaluatedAt).
       */
      time: string;
    }[];
  };
}
export type ProjectSchemaSpec = NonNullable<ProjectSchema['spec']>;
export type ProjectSchemaStatus = NonNullable<ProjectSchema['status']>;
