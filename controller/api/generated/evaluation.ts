// Generated from crds/evaluations.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface EvaluationSchema {
  /**
   * Which run of which session is judged, why, and the evidence given to the judge.
   */
  spec?: {
    /**
     * Name of the AgentSession in the same namespace whose run is judged.
     */
    sessionRef: string;
    /**
     * Run number of the session that is judged (status.run of the session at the time).
     */
    run: number;
    /**
     * Project of the session at the time, so a later session in the same project can be told how this
     * run went.
     */
    projectRef?: string;
    /**
     * What caused the evaluation. SessionEnded means a run ended; OnDemand means a user asked for it;
     * Sampled means a periodic mid-run sample.
     */
    trigger?: 'SessionEnded' | 'OnDemand' | 'Sampled';
    /**
     * Evidence given to the judge, bounded in size - run outcome, duration, git progress since
     * headBefore, tool failures, test signals, detector and breaker summaries, result.json, the
     * ANSI-stripped output tail and the last assistant message. Filled in by the controller when an
     * Evaluation is created without it (orchctl judge).
     */
    evidence?: {
      [k: string]: unknown;
    };
  };
  /**
   * The judge's verdict on the run.
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
     * Where the judgement is, for tables; the conditions are authoritative. Pending - not started;
     * Judging - a judge call is under way (after a controller restart it is started again); Judged -
     * the verdict is in status and is never overwritten; Failed - no valid verdict after the retries
     * and the repair attempt (JudgeFailed), no score is made up.
     */
    phase?: 'Pending' | 'Judging' | 'Judged' | 'Failed';
    /**
     * Why the judgement failed, or a one-line summary of the verdict.
     */
    message?: string;
    /**
     * Judgements started for this Evaluation. More than one means a controller restarted while a
     * judgement was under way; after 3 the Evaluation fails with reason TooManyAttempts.
     */
    attempts?: number;
    /**
     * Tokens the backend reported for the verdict, when it reports them.
     */
    usage?: {
      /**
       * Prompt tokens.
       */
      inputTokens?: number;
      /**
       * Completion tokens.
       */
      outputTokens?: number;
    };
    /**
     * Overall score from 1 (no useful progress) to 5 (the task was done fully and well).
     */
    score?: number;
    /**
     * What the judge recommends doing next - continue the session, retry the run, escalate to a
     * person, or treat the task as complete.
     */
    recommendation?: 'continue' | 'retry' | 'escalate' | 'complete';
    /**
     * Judged outcome of the run - success, partial, failure or abandoned.
     */
    outcome?: 'success' | 'partial' | 'failure' | 'abandoned';
    /**
     * The judge's confidence in its verdict, from 0 to 1.
     */
    confidence?: number;
    /**
     * What the run achieved, one item per entry.
     */
    accomplishments?: string[];
    /**
     * What went wrong or was left undone, one item per entry.
     */
    failures?: string[];
    /**
     * The judge's explanation of its verdict.
     */
    reasoning?: string;
    /**
     * Judge backend that produced the verdict - heuristic, command, openai or anthropic.
     */
    backend?: string;
    /**
     * Model the backend used, when it uses one.
     */
    model?: string;
    /**
     * When the verdict was produced.
     */
    evaluatedAt?: string;
  };
}
export type EvaluationSchemaSpec = NonNullable<EvaluationSchema['spec']>;
export type EvaluationSchemaStatus = NonNullable<EvaluationSchema['status']>;
