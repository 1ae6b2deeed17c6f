// Generated from crds/sessionpolicies.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface SessionPolicySchema {
  /**
   * Which sessions the policy selects and the limits and automation settings it applies to them.
   */
  spec?: {
    /**
     * Label selector for the AgentSessions in this namespace that the policy applies to. `{}` (empty)
     * selects every session in the namespace; a missing selector selects none (the policy then governs
     * only sessions naming it in spec.policyRef, or every unselected one if it is named default). A
     * session selected by several policies gets the one with the highest priority.
     */
    selector?: {
      /**
       * Label key/value pairs that must all be present on a session for it to be selected.
       */
      matchLabels?: {
        [k: string]: string;
      };
      /**
       * Label requirements that must all hold for a session to be selected.
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
         */
        values?: string[];
      }[];
    };
    /**
     * When several policies select a session, the one with the highest priority wins; ties are broken
     * by name.
     */
    priority?: number;
    /**
     * Maximum number of selected sessions that may run at the same time; further sessions wait in
     * Pending.
     */
    maxConcurrentSessions?: number;
    /**
     * Admission of new runs waits while the host has less available memory than this many megabytes.
     */
    minFreeMemoryMB?: number;
    /**
     * Admission of new runs waits while the host has less free disk space than this many megabytes.
     */
    minFreeDiskMB?: number;
    /**
     * Admission of new runs waits while the 1-minute load average divided by the CPU count exceeds
     * this value.
     */
    maxLoadPerCPU?: number;
    /**
     * Default time box for one run of a selected session, as a Go duration such as 45m. A session's
     * own maxDuration overrides it.
     */
    maxSessionDuration?: string;
    /**
     * What happens when a run reaches its time box. Stop ends the run as TimedOut; Warn only records a
     * Warning event and condition. A session's own timeoutAction overrides it.
     */
    timeoutAction?: 'Stop' | 'Warn';
    /**
     * Default maximum number of restarts of a selected session; a session's own maxRestarts overrides
     * it.
     */
    maxRestarts?: number;
    /**
     * Minimum time between two restarts of one session, as a Go duration such as 2m.
     */
    cooldown?: string;
    /**
     * How much the controller may do on its own for selected sessions. observe only records status and
     * events; suggest also records recommended actions without taking them; act takes actions such as
     * restarts and stops.
     */
    autonomy?: 'observe' | 'suggest' | 'act';
    /**
     * Circuit-breaker settings (docs/assessment.md) - when the breaker of a selected session opens and
     * which intervention it sends into the session. It opens on a correction storm
     * (ClarificationPause), on consecutive failed builds/tests/lint runs (ApproachPivot), when the
     * frustration EMA reaches its threshold (ExplicitCheckIn) and after turns without progress
     * (ApproachPivot); after the cooldown it is half-open until a healthy turn closes it.
     * Interventions are sent only under autonomy act.
     */
    breaker?: {
      /**
       * Run the circuit breaker for the selected sessions (the detector still counts signals when it is
       * off).
       */
      enabled?: boolean;
      /**
       * Consecutive failures (failing build, test or lint runs, corrections, refused tool calls; a
       * passing build/test/lint run resets the count) that open the breaker with ApproachPivot.
       */
      failureThreshold?: number;
      /**
       * Corrections (a user correcting the agent, a refused tool call) within correctionWindow that open
       * the breaker with ClarificationPause.
       */
      correctionThreshold?: number;
      /**
       * The window of the correction storm, as a Go duration (event time).
       */
      correctionWindow?: string;
      /**
       * Frustration EMA at which a frustrated or correcting user message opens the breaker with
       * ExplicitCheckIn.
       */
      frustrationThreshold?: number;
      /**
       * Turns in a row without progress (no commit, no file written, no change of status.git) that open
       * the breaker with ApproachPivot; 0 turns this trigger off. A turn ends at the Stop hook or at an
       * assistant message with stop reason end_turn.
       */
      noProgressTurns?: number;
      /**
       * How long the breaker stays open after it sent an intervention (no second intervention
       * meanwhile), as a Go duration; then it is half-open. Not the same as spec.cooldown, which spaces
       * restarts.
       */
      cooldown?: string;
      /**
       * The text sent into the session for each intervention type, replacing seed 001's defaults
       * (docs/assessment.md).
       */
      interventions?: {
        /**
         * Sent on a correction storm.
         */
        ClarificationPause?: string;
        /**
         * Sent after consecutive failures or turns without progress.
         */
        ApproachPivot?: string;
        /**
         * Sent when the frustration EMA reaches its threshold.
         */
        ExplicitCheckIn?: string;
      };
    };
    /**
     * Checkpoint settings (docs/assessment.md) - when a selected session's history is cut into a
     * segment with a summary, stored in the session's checkpoints.jsonl and counted in
     * status.assessment.
     */
    checkpoints?: {
      /**
       * Take checkpoints.
       */
      enabled?: boolean;
      /**
       * Messages (user and assistant messages, tool calls included) in a segment that close it.
       */
      messageThreshold?: number;
      /**
       * Age of a segment (event time) that closes it, as a Go duration.
       */
      interval?: string;
      /**
       * Close the segment when a tool call makes a git commit.
       */
      onCommit?: boolean;
      /**
       * Regular expressions (JavaScript syntax, matched case-insensitively; a leading (?i) is accepted)
       * that mark a user message as a task boundary and close the segment. Replace the defaults (done,
       * finished, next, moving on, that works, ...). Checked at apply time for validity and catastrophic
       * backtracking.
       *
       * @maxItems 64
       */
      taskBoundaryPatterns?: string[];
      /**
       * Who writes segment summaries. offline builds them from the segment's events (deterministic, no
       * model); judge uses the backend of this policy's judge section, falling back to offline when it
       * fails.
       */
      summarizer?: 'offline' | 'judge';
    };
    /**
     * LLM judge settings - whether the runs of selected sessions are judged, by which backend, and its
     * limits. Ended runs are judged only while a policy with this section (and enabled not false)
     * applies; orchctl judge works for any session. Secrets never go here - apiKeyEnv names the
     * environment variable that holds the key. See docs/judge.md.
     */
    judge?: {
      /**
       * Judge every ended run of the selected sessions (an Evaluation per run). False turns automatic
       * judging off; orchctl judge still works.
       */
      enabled?: boolean;
      /**
       * Which judge runs. heuristic scores from objective evidence only (offline, deterministic);
       * command runs a CLI with the prompt on stdin and reads JSON from stdout; openai calls an
       * OpenAI-compatible /v1/chat/completions (OpenAI, Ollama, vLLM, llama.cpp server); anthropic calls
       * the Anthropic Messages API.
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
       * For the command backend, the program and its arguments, run without a shell. The prompt arrives
       * on stdin; {{schema}} in an argument is replaced by the JSON Schema of the answer and {{model}}
       * by model. Standard output must be the JSON answer or Claude Code's --output-format json wrapper.
       *
       * @minItems 1
       */
      command?: string[];
      /**
       * Name of the controller's environment variable that holds the API key (default ANTHROPIC_API_KEY
       * for anthropic, OPENAI_API_KEY for openai). The key itself is never stored in an object.
       */
      apiKeyEnv?: string;
      /**
       * Time limit of one request to the backend, as a Go duration (default 60s). A request that takes
       * longer is abandoned (a command is killed) and counts as a failed attempt.
       */
      timeout?: string;
      /**
       * Retries of a request that timed out, was rate limited (429, after Retry-After) or failed with a
       * server or network error, with exponential backoff (default 2). An answer that does not match the
       * schema gets one repair request besides.
       */
      maxRetries?: number;
      /**
       * Maximum number of judgements in flight at once, for the whole controller. When several policies
       * set it, the smallest applies; the default is 2.
       */
      maxConcurrent?: number;
    };
    /**
     * Which ended runs the judge assesses (seed 001 sampling, docs/assessment.md) - every run during
     * burn-in, runs where the breaker intervened, runs with explicit feedback, long runs, and
     * otherwise a base rate decided by a hash of the session uid and run (the same answer after a
     * restart). Without this section every ended run is judged.
     */
    sampling?: {
      /**
       * Judge every ended run while the namespace has fewer Evaluations than this.
       */
      burnIn?: number;
      /**
       * Fraction of the remaining runs that are judged.
       */
      baseRate?: number;
      /**
       * A run with more messages than this is always judged.
       */
      longSessionMessages?: number;
      /**
       * Always judge a run in which the circuit breaker intervened.
       */
      onBreaker?: boolean;
      /**
       * Always judge a run in which a person praised, complained or corrected the agent.
       */
      onFeedback?: boolean;
    };
    /**
     * Detector settings (docs/assessment.md) - the patterns the lightweight detector looks for in user
     * messages, its moving averages, and when a busy agent counts as stalled. Patterns are regular
     * expressions (JavaScript syntax, matched case-insensitively; a leading (?i) is accepted), checked
     * at apply time for validity and catastrophic backtracking; a list replaces the defaults.
     */
    detector?: {
      /**
       * Run the detector, the circuit breaker and checkpoints for the selected sessions.
       */
      enabled?: boolean;
      /**
       * Patterns of frustration in a user message (seed 001 defaults - no that's wrong, I already said,
       * try again, still not, why did you, ...).
       *
       * @maxItems 64
       */
      frustrationPatterns?: string[];
      /**
       * Patterns of satisfaction in a user message (seed 001 defaults - perfect, great, thanks, works
       * well, good job, ...).
       *
       * @maxItems 64
       */
      satisfactionPatterns?: string[];
      /**
       * Patterns of a user correcting the agent (defaults - a message starting with no or stop, that's
       * wrong, not what I asked, undo that, I said, don't change, instead).
       *
       * @maxItems 64
       */
      correctionPatterns?: string[];
      /**
       * Smoothing factor of the frustration and success EMAs - the weight of the newest observation.
       */
      emaAlpha?: number;
      /**
       * How long a busy agent may go without new events (or, without hooks, a screen change) before it
       * is Stalled, as a Go duration (default 10m).
       */
      stalledAfter?: string;
    };
    /**
     * What to do when an agent's context window fills (docs/long-running.md) - at checkpointAt
     * percent, at an idle agent, ask for a handoff ($ORCHCTL_WORKSPACE/handoff.md), then /compact (or
     * /clear and a rehydrate prompt; an agent with neither gets a new run). Without this block nothing
     * is done but a ContextWindow Event every 10 percent.
     */
    context?: {
      /**
       * Record a ContextWindow Event every this many percent of the window (default 10).
       */
      reportEvery?: number;
      /**
       * Start the handoff and compaction at this percent of the window, at an idle agent (default 50, as
       * seed 003; a /compact sent when the window is nearly full can fail).
       */
      checkpointAt?: number;
      /**
       * Compact types /compact with compactFocus (and falls back to /clear and the rehydrate prompt if
       * compaction fails); ClearAndRehydrate types /clear and then delivers the rehydrate prompt
       * (default Compact).
       */
      action?: 'Compact' | 'ClearAndRehydrate';
      /**
       * The text after /compact - what the summary should keep (one line).
       */
      compactFocus?: string;
      /**
       * How long to wait for the handoff file and the end of the agent's turn before orchctl's last
       * checkpoint summary stands in (default 3m).
       */
      handoffTimeout?: string;
      /**
       * At most this many handoff-and-compact sequences in one run (default 3).
       */
      maxActionsPerRun?: number;
    };
    /**
     * What a rate or usage limit does (docs/long-running.md) - the session is paused (phase stays
     * Running; status.pause, reason RateLimited) until the limit resets plus a random jitter, then it
     * is sent the continue message through verified delivery. The reset time comes from the agent's
     * statusline or its limit text; without one, defaultWait.
     */
    rateLimit?: {
      /**
       * Pause on a limit (default true). False - the limit is only reported (the QuotaExhausted
       * condition and Event).
       */
      pause?: boolean;
      /**
       * At most this much is added at random to the reset time, so sessions do not all resume at once
       * (default 30s).
       */
      jitter?: string;
      /**
       * How long to pause when no reset time can be read (default 15m).
       */
      defaultWait?: string;
      /**
       * Whether a paused session keeps its maxConcurrentSessions slot (default true). False lets another
       * session start meanwhile.
       */
      holdSlot?: boolean;
      /**
       * Sent when the pause ends (default "Continue where you left off.").
       */
      continueMessage?: string;
    };
    /**
     * A token or cost budget across every session this policy governs, over a sliding window
     * (docs/long-running.md). When it is reached the sessions are paused (or stopped) at their next
     * idle point, never mid-turn, new ones are not admitted (reason BudgetExceeded), and a
     * BudgetExceeded Event goes out. status.budget shows what was used.
     */
    budget?: {
      /**
       * Tokens (input, output, cache read and write) all governed sessions may use in the window.
       */
      maxTokens?: number;
      /**
       * Estimated USD (from each Agent's spec.pricing) all governed sessions may spend in the window.
       * Use that is not priced does not count toward it (status.budget.priced says so).
       */
      maxCostUSD?: number;
      /**
       * The sliding window usage is summed over, counted in whole hours, at most 24h (default 24h).
       */
      window?: string;
      /**
       * Pause - held at the next idle point and sent the continue message once the window has room or
       * the budget is raised; Stop - stopped at the next idle point (reason BudgetExceeded) and not
       * restarted (default Pause).
       */
      action?: 'Pause' | 'Stop';
      /**
       * IdlePoint (default) - the action waits for the agent's next idle point, never mid-turn, so one
       * long turn can overshoot. Hard - at the limit a busy agent is interrupted with its Agent's
       * interruptKeys and paused (or stopped) at once; the BudgetExceeded Event records the overshoot.
       */
      enforce?: 'IdlePoint' | 'Hard';
    };
    /**
     * Variables of the controller's own environment given to the agents of the sessions this policy
     * governs, on top of their Agent's inheritEnv - names, or prefixes ending in * (e.g.
     * [GITHUB_TOKEN, AWS_*]). Nothing else of the controller's environment is inherited.
     *
     * @maxItems 64
     *
     * Items: A variable name (letters, digits and underscores, not starting with a digit), or a prefix of one
     * ending in * such as ANTHROPIC_*.
     */
    inheritEnv?: string[];
    /**
     * Notification settings - tiers, channels, budget and quiet hours for telling people about
     * sessions.
     */
    notifications?: {
      [k: string]: unknown;
    };
  };
  /**
   * What the controller observed about the policy and the sessions it applies to.
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
     * Number of sessions the policy currently applies to.
     */
    matchedSessions?: number;
    /**
     * What the governed sessions used in the budget's window, summed from their status.usage.hourly by
     * the policy reconciler.
     */
    budget?: {
      /**
       * The start of the first hour counted.
       */
      windowStart?: string;
      /**
       * Tokens used in the window.
       */
      usedTokens?: number;
      /**
       * Estimated USD spent in the window (priced use only).
       */
      usedCostUSD?: number;
      /**
       * Whether every use in the window was priced (false - usedCostUSD is a lower bound).
       */
      priced?: boolean;
      /**
       * Whether the budget is reached.
       */
      exceeded?: boolean;
      /**
       * Used against the budget, as the USED/BUDGET column shows it (1.2M/2M, $3.10/$5.00).
       */
      display?: string;
      /**
       * Since when it has been exceeded.
       */
      since?: string;
    };
  };
}
export type SessionPolicySchemaSpec = NonNullable<SessionPolicySchema['spec']>;
export type SessionPolicySchemaStatus = NonNullable<SessionPolicySchema['status']>;
