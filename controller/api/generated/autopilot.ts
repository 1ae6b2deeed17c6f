// Generated from crds/autopilots.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface AutopilotSchema {
  /**
   * Which projects it plans over, how much it may do on its own, how often it thinks, its planner
   * and its guardrails.
   */
  spec?: {
    /**
     * Label selector for the Projects in this namespace it plans over. `{}` (empty) selects every
     * project in the namespace; a missing selector selects none (the autopilot plans over nothing).
     */
    projectSelector?: {
      /**
       * Label key/value pairs that must all be present on a project for it to be selected.
       */
      matchLabels?: {
        [k: string]: string;
      };
      /**
       * Label requirements that must all hold for a project to be selected.
       *
       * @maxItems 64
       *
       * Items: One label requirement - a key, an operator and, for In and NotIn, a set of values.
       */
      matchExpressions?: {
        /**
         * Label key the requirement applies to.
         */
        key: string;
        /**
         * How the label's value is compared with values - In, NotIn, Exists or DoesNotExist.
         */
        operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
        /**
         * Values for In and NotIn (must be non-empty); must be empty for Exists and DoesNotExist.
         *
         * @maxItems 64
         */
        values?: string[];
      }[];
    };
    /**
     * How much it does on its own (seed 002 section 2.1). observe - every decision waits for approval
     * (skip is only logged); cautious - start and notify execute (a start notifies after), stop and
     * restart wait for approval; moderate - everything executes (a stop notifies after); full -
     * everything executes. Only a person changes it.
     */
    autonomyLevel?: 'observe' | 'cautious' | 'moderate' | 'full';
    /**
     * Time between thinks, as a Go duration from 10s to 24h (default 5m). A session ending, an
     * escalation, a new Evaluation or an approval wakes it sooner.
     */
    interval?: string;
    /**
     * Who proposes the actions - the heuristic planner (offline, deterministic - starts the
     * highest-priority stale project when capacity allows, retries recoverable failures) or an LLM
     * backend configured like a SessionPolicy's judge, with the same fail-safe rules (schema-validated
     * JSON, one repair request, bounded retries, untrusted text fenced as data, one think at a time).
     * Whatever it proposes still passes the guardrails and the autonomy gate. Secrets never go here -
     * apiKeyEnv names the environment variable that holds the key.
     */
    planner?: {
      /**
       * heuristic plans offline from the projects' state; command runs a CLI with the prompt on stdin
       * and reads JSON from stdout; openai calls an OpenAI-compatible /v1/chat/completions (OpenAI,
       * Ollama, vLLM, llama.cpp server); anthropic calls the Anthropic Messages API.
       */
      backend?: 'heuristic' | 'command' | 'openai' | 'anthropic';
      /**
       * Model name sent to the openai and anthropic backends (required for them), and substituted for
       * {{model}} in command.
       */
      model?: string;
      /**
       * Base URL of the API. openai - up to and including /v1 (default https://api.openai.com/v1; Ollama
       * http://127.0.0.1:11434/v1). anthropic - without /v1 (default https://api.anthropic.com).
       */
      endpoint?: string;
      /**
       * For the command backend (required for it), the program and its arguments, run without a shell.
       * The prompt arrives on stdin; {{schema}} in an argument is replaced by the JSON Schema of the
       * answer and {{model}} by model. Standard output must be the JSON answer or Claude Code's
       * --output-format json wrapper.
       *
       * @minItems 1
       * @maxItems 64
       */
      command?: string[];
      /**
       * Name of the controller's environment variable that holds the API key (default ANTHROPIC_API_KEY
       * for anthropic, OPENAI_API_KEY for openai). The key itself is never stored in an object.
       */
      apiKeyEnv?: string;
      /**
       * Time limit of the planning in one think, retries included, as a Go duration (default 60s, at
       * most 10m); each request to the backend is bounded by it too. A request that takes longer is
       * abandoned (a command is killed); a think whose planner fails or runs out of time proposes
       * nothing and says why in status.lastThink.error.
       */
      timeout?: string;
      /**
       * Retries of a request that timed out, was rate limited (429, after Retry-After) or failed with a
       * server or network error, with exponential backoff (default 2). An answer that does not match the
       * schema gets one repair request besides.
       */
      maxRetries?: number;
    };
    /**
     * What it may do at all, and the checks every decision passes before it executes. A decision a
     * guardrail refuses is Rejected with the guardrail named in status.guardrail.
     */
    guardrails?: {
      /**
       * The actions it may take (default all five - start, stop, restart, notify, skip). A proposal of
       * another action is Rejected (Allowlist).
       *
       * @maxItems 5
       */
      actions?: ('start' | 'stop' | 'restart' | 'notify' | 'skip')[];
      /**
       * Least time between actions, so that it does not thrash.
       */
      cooldowns?: {
        /**
         * No second start, stop or restart of one project within this, as a Go duration from 0s to 24h
         * (default 10m). Refused as SameProjectCooldown.
         */
        sameProject?: string;
        /**
         * No second action of one kind (other than skip) within this, whichever project, as a Go duration
         * from 0s to 24h (default 5m). Refused as SameActionCooldown.
         */
        sameAction?: string;
      };
      /**
       * Label selector of Projects it leaves alone - no start, stop or restart (ProtectedProject) -
       * beside those with spec.protected. Unset protects none; an empty selector protects every project.
       */
      protectedProjects?: {
        /**
         * Label key/value pairs that must all be present on a project for it to be protected.
         */
        matchLabels?: {
          [k: string]: string;
        };
        /**
         * Label requirements that must all hold for a project to be protected.
         *
         * @maxItems 64
         *
         * Items: One label requirement - a key, an operator and, for In and NotIn, a set of values.
         */
        matchExpressions?: {
          /**
           * Label key the requirement applies to.
           */
          key: string;
          /**
           * How the label's value is compared with values - In, NotIn, Exists or DoesNotExist.
           */
          operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
          /**
           * Values for In and NotIn (must be non-empty); must be empty for Exists and DoesNotExist.
           *
           * @maxItems 64
           */
          values?: string[];
        }[];
      };
      /**
       * A session whose run started less than this ago is not stopped or restarted unless its run
       * failed, as a Go duration from 0s to 24h (default 30m). Refused as YoungSession.
       */
      youngSessionWindow?: string;
      /**
       * Recovery restarts of one project within errorRetryWindow (default 3). Past it - and at once for
       * an Auth or Unknown failure - it stops retrying and escalates with a notice (MaxErrorRetries). 0
       * never retries.
       */
      maxErrorRetries?: number;
      /**
       * Continuations of one project's runs that were stopped at their time box, within errorRetryWindow
       * (default 3), counted apart from maxErrorRetries. The next run continues from the handoff with a
       * note that the time ran out; past the limit it escalates with a notice. 0 never continues.
       */
      maxTimeBoxContinuations?: number;
      /**
       * The window error retries are counted in, as a Go duration from 1m to 720h (default 24h). The
       * count is kept in the Project's status.errorRetries, so it survives a controller restart.
       */
      errorRetryWindow?: string;
      /**
       * A project idle for longer than this many days is stale and a candidate for a start - when unset,
       * each Project's own spec.staleAfter (72h by default) decides; when set it takes precedence -. 0
       * makes every idle project stale.
       */
      stalenessDays?: number;
      /**
       * No start while the Node reports less free memory than this, in MB (default - the session
       * policy's minFreeMemoryMB, else 2048). Refused as ResourceFloor.
       */
      minFreeMemoryMB?: number;
      /**
       * No start while this many sessions of the selected projects are active - Pending, Starting,
       * Running, Stopping or Backoff (default 4). Refused as ResourceFloor.
       */
      maxActiveSessions?: number;
      /**
       * At most this many starts per think (default 1); further start proposals of the same think are
       * Rejected (ResourceFloor).
       */
      maxStartsPerThink?: number;
    };
    /**
     * What a start creates besides the project, prompt and generated name - the AgentSession's agent,
     * policy, time box and extra labels. Its labels always include orchctl.io/autopilot,
     * orchctl.io/project and orchctl.io/decision.
     */
    sessionTemplate?: {
      /**
       * Name of the Agent in this namespace the session runs (default - the session's own default).
       */
      agentRef?: string;
      /**
       * Name of a SessionPolicy in this namespace to apply explicitly (default - policies select the
       * session by label).
       */
      policyRef?: string;
      /**
       * Time box of one run of the session, as a Go duration such as 45m (at most 720h; default - the
       * session policy's maxSessionDuration, else 45m).
       */
      maxDuration?: string;
      /**
       * Extra labels on the sessions it creates (keys and values as in metadata.labels; the orchctl.io/
       * labels above win).
       */
      labels?: {
        [k: string]: string;
      };
    };
    /**
     * How many Decisions are kept. Older ones are deleted, newest kept first; one still
     * PendingApproval is never deleted.
     */
    history?: {
      /**
       * The newest this many Decisions are kept (default 50).
       */
      keep?: number;
      /**
       * No Decision older than this is kept, as a Go duration from 1m to 8760h (default 168h, a week).
       */
      ttl?: string;
    };
    /**
     * While true it does not think; decisions already pending can still be approved and then execute.
     */
    suspend?: boolean;
    /**
     * A Decision waiting for a person does not wait forever (seed 002 section 8.5) - after timeout it
     * is Expired, recorded (a DecisionExpired Event) and its default action taken. Approval is asked
     * only at the cautious level (stop, restart).
     */
    approval?: {
      /**
       * How long a PendingApproval Decision waits, as a Go duration from 1s to 168h (default 1h).
       */
      timeout?: string;
      /**
       * Per action, what happens when nobody answered - proceed executes it (rechecked against the world
       * as an approval is), reject drops it. Default stop and restart proceed, start rejects.
       */
      onTimeout?: {
        /**
         * Default reject.
         */
        start?: 'proceed' | 'reject';
        /**
         * Default proceed.
         */
        stop?: 'proceed' | 'reject';
        /**
         * Default proceed.
         */
        restart?: 'proceed' | 'reject';
      };
    };
  };
  /**
   * Written by the autopilot - its last think, the next one, and its decisions by phase.
   */
  status?: {
    /**
     * The metadata.generation the autopilot last acted on. When it equals metadata.generation, status
     * reflects the current spec.
     */
    observedGeneration?: number;
    /**
     * Latest observations of the object's state, one entry per condition type (Kubernetes
     * metav1.Condition shape).
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
       * The metadata.generation this condition was computed from.
       */
      observedGeneration?: number;
      /**
       * Last time the condition's status changed from one value to another.
       */
      lastTransitionTime: string;
      /**
       * Programmatic identifier for the condition's last transition, one CamelCase word.
       */
      reason: string;
      /**
       * Human-readable details about the transition; may be empty.
       */
      message: string;
    }[];
    /**
     * Thinks so far; the Decisions of a think are named after it (<autopilot>-<think>-<n>).
     */
    thinks?: number;
    /**
     * The last think - when, what woke it, the planner, how long it took and how many decisions it
     * made.
     */
    lastThink?: {
      /**
       * When it started.
       */
      time: string;
      /**
       * What woke it - its interval, a session ending, an escalation, a new Evaluation, an approval, a
       * change of its spec, or the controller starting.
       */
      trigger: 'interval' | 'session-ended' | 'escalation' | 'evaluation' | 'approval' | 'spec' | 'start';
      /**
       * The planner backend that planned.
       */
      planner: string;
      /**
       * The model, for an LLM planner.
       */
      model?: string;
      /**
       * How long the think took, in milliseconds.
       */
      durationMs: number;
      /**
       * How many Decisions it recorded.
       */
      decisions: number;
      /**
       * Why the planner produced nothing usable (garbage, a timeout, a configuration error); absent when
       * it planned.
       */
      error?: string;
    };
    /**
     * When the next think is due, unless something wakes it sooner.
     */
    nextThinkTime?: string;
    /**
     * The autonomy level the last think decided under (the spec may have changed since).
     */
    level?: 'observe' | 'cautious' | 'moderate' | 'full';
    /**
     * Projects the selector selected at the last think.
     */
    selectedProjects?: number;
    /**
     * Selected projects that were Stale at the last think.
     */
    staleProjects?: number;
    /**
     * Its kept Decisions by phase.
     */
    counts?: {
      /**
       * Decisions that changed desired state.
       */
      Executed?: number;
      /**
       * Decisions waiting for a person.
       */
      PendingApproval?: number;
      /**
       * Decisions recorded only.
       */
      Logged?: number;
      /**
       * Decisions a guardrail or a person refused.
       */
      Rejected?: number;
      /**
       * Decisions overtaken by a change of what they were decided on.
       */
      Superseded?: number;
      /**
       * Decisions whose write failed.
       */
      Failed?: number;
      /**
       * Decisions nobody approved within approval.timeout (their default action was taken).
       */
      Expired?: number;
    };
  };
}
export type AutopilotSchemaSpec = NonNullable<AutopilotSchema['spec']>;
export type AutopilotSchemaStatus = NonNullable<AutopilotSchema['status']>;
