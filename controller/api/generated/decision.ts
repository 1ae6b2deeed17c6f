// Generated from crds/decisions.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface DecisionSchema {
  /**
   * The choice as the planner made it, fixed when it was recorded; only approval is written later,
   * by a person.
   */
  spec?: {
    /**
     * The Autopilot that made it (same namespace; also its owner).
     */
    autopilot: string;
    /**
     * The think that made it (the autopilot's status.thinks at the time).
     */
    think: number;
    /**
     * start creates an AgentSession for the project; stop sets a session's desiredState to Stopped;
     * restart stamps the session's orchctl.io/restartedAt annotation; notify records an Event (reason
     * AutopilotNotice) for the notification policies; skip is recorded only.
     */
    action: 'start' | 'stop' | 'restart' | 'notify' | 'skip';
    /**
     * What it acts on.
     */
    target: {
      /**
       * Name of the Project.
       */
      project?: string;
      /**
       * Name of the AgentSession (for stop and restart).
       */
      session?: string;
    };
    /**
     * Why the planner proposed it (planner-written text).
     */
    reason: string;
    /**
     * 1 most urgent to 5.
     */
    priority: number;
    /**
     * For start and restart, the task the run gets (for a recovery restart, naming the error).
     */
    prompt?: string;
    /**
     * For notify, the text of the notice.
     */
    message?: string;
    /**
     * The planner backend that proposed it - heuristic, command, openai or anthropic.
     */
    planner: string;
    /**
     * The model, for an LLM planner.
     */
    model?: string;
    /**
     * The autonomy level it was decided under.
     */
    level: 'observe' | 'cautious' | 'moderate' | 'full';
    /**
     * What it was decided on - the store revision and the objects read, at the versions read.
     * Execution writes only if these are unchanged (else Superseded).
     */
    snapshot: {
      /**
       * The store revision of the view it planned on.
       */
      revision: number;
      /**
       * The objects it read, each at the resourceVersion it read.
       *
       * @maxItems 10000
       *
       * Items: One object at one version.
       */
      objects: {
        /**
         * Kind of the object, e.g. Project or AgentSession.
         */
        kind: string;
        /**
         * Name of the object (same namespace).
         */
        name: string;
        /**
         * Its metadata.resourceVersion when read.
         */
        resourceVersion: string;
        /**
         * Its metadata.generation when read.
         */
        generation?: number;
        /**
         * For a session, the run it was on.
         */
        run?: number;
      }[];
    };
    /**
     * For a recovery restart, or the notice that escalates instead, the failed run and how it was
     * classified (seed 002 section 2.4).
     */
    recovery?: {
      /**
       * Transient, Dependency or Logic are retried; a TimeBox run (stopped at its time box) is continued
       * from where it stopped; Auth and Unknown are escalated.
       */
      class: 'Transient' | 'Dependency' | 'Auth' | 'Logic' | 'TimeBox' | 'Unknown';
      /**
       * Which recovery restart this is within the project's error-retry window; for an escalation (a
       * notify), how many were made before it.
       */
      attempt: number;
      /**
       * The session whose run failed.
       */
      session: string;
      /**
       * The failed run.
       */
      run: number;
      /**
       * The line(s) of the run's output or status the class was read from (agent-written text).
       */
      evidence: string;
    };
    /**
     * A person's answer to a PendingApproval decision, written by orchctl approve|reject decision.
     * Approved ones then execute (still against the snapshot); rejected ones become Rejected (Person).
     */
    approval?: {
      /**
       * Approved lets it execute; Rejected ends it as Rejected (Person).
       */
      verdict: 'Approved' | 'Rejected';
      /**
       * When it was answered.
       */
      at: string;
      /**
       * Who answered ($USER of the orchctl command).
       */
      by?: string;
      /**
       * Why (orchctl reject decision -m).
       */
      message?: string;
    };
  };
  /**
   * Written by the autopilot - what became of the decision.
   */
  status?: {
    /**
     * Executed - desired state was changed (result says how); PendingApproval - the gate wants a
     * person; Logged - recorded only (observe level, skip); Rejected - a guardrail or a person refused
     * it; Superseded - what it was decided on changed before it executed; Failed - the write failed
     * for another reason; Expired - nobody answered within the Autopilot's approval.timeout and its
     * default action was taken (message says which).
     */
    phase?: 'Executed' | 'PendingApproval' | 'Logged' | 'Rejected' | 'Superseded' | 'Failed' | 'Expired';
    /**
     * The guardrail or check that refused it (Rejected), Person when a person rejected it.
     */
    guardrail?:
      | 'Allowlist'
      | 'UnknownTarget'
      | 'Blocked'
      | 'ProtectedProject'
      | 'SameProjectCooldown'
      | 'SameActionCooldown'
      | 'YoungSession'
      | 'MaxErrorRetries'
      | 'ResourceFloor'
      | 'AlreadyRunning'
      | 'NotRunning'
      | 'Paused'
      | 'Person';
    /**
     * Details - what it did, what changed, what failed.
     */
    message?: string;
    /**
     * Whether the gate asked for a notice after it executed (seed 002 - notify after).
     */
    notifyAfter?: boolean;
    /**
     * When the gate decided its phase.
     */
    decidedAt?: string;
    /**
     * For PendingApproval - when it expires unless a person answers (the Autopilot's
     * approval.timeout).
     */
    expiresAt?: string;
    /**
     * When it executed.
     */
    executedAt?: string;
    /**
     * What executing it wrote.
     */
    result?: {
      /**
       * The AgentSession it created, stopped or restarted.
       */
      session?: string;
      /**
       * The Event a notify recorded.
       */
      event?: string;
    };
  };
}
export type DecisionSchemaSpec = NonNullable<DecisionSchema['spec']>;
export type DecisionSchemaStatus = NonNullable<DecisionSchema['status']>;
