// Generated from crds/agents.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface AgentSchema {
  /**
   * Desired configuration of the agent CLI - its command line, environment, prompt delivery, stop
   * behaviour and state detection.
   */
  spec?: {
    /**
     * Executable followed by any fixed leading arguments, e.g. [claude]. It is run directly, never
     * through a shell.
     *
     * @minItems 1
     * @maxItems 64
     */
    command: string[];
    /**
     * Extra arguments appended after command (and before the prompt when promptDelivery is argument).
     *
     * @maxItems 256
     */
    args?: string[];
    /**
     * Environment variables set for the agent process on top of its base environment and inheritEnv
     * (an agent never inherits the controller's environment). Names are unique. Values are never put
     * on a command line (they reach the agent through a private file), and valueFrom keeps secrets out
     * of manifests.
     *
     * @maxItems 256
     *
     * Items: One environment variable.
     */
    env?: {
      /**
       * Name of the variable; letters, digits and underscores, not starting with a digit.
       */
      name: string;
      /**
       * Value of the variable; the empty string when omitted. At most 32 KiB.
       */
      value?: string;
      /**
       * Where the value comes from when the manifest should not hold it, read when the run starts.
       * Exactly one of env or file; not together with value.
       */
      valueFrom?: {
        /**
         * Name of a variable in the controller's own environment.
         */
        env?: string;
        /**
         * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
         */
        file?: string;
      };
    }[];
    /**
     * Variables of the controller's own environment the agent is given, by name or by a prefix ending
     * in * (e.g. [ANTHROPIC_*, CLAUDE_CONFIG_DIR]). An agent never inherits the controller's
     * environment - it starts from the base (PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ,
     * TMPDIR), then these, then env. Values are passed like env's, never on a command line. The
     * built-in templates name what their CLI needs.
     *
     * @maxItems 64
     *
     * Items: A variable name (letters, digits and underscores, not starting with a digit), or a prefix of one
     * ending in * such as ANTHROPIC_*.
     */
    inheritEnv?: string[];
    /**
     * How the task prompt reaches the agent. paste loads it into a tmux buffer, pastes it into the
     * pane and sends submitKeys; argument appends it as the last argument (after promptFlag if set);
     * stdin feeds the prompt file on standard input; none sends no prompt.
     */
    promptDelivery?: 'paste' | 'argument' | 'stdin' | 'none';
    /**
     * Flag placed before the prompt when promptDelivery is argument, e.g. -p. When empty the prompt is
     * the bare last argument.
     */
    promptFlag?: string;
    /**
     * Persona (system-prompt) file, relative to the manifest's directory. Its contents are combined
     * with each session's task prompt.
     */
    systemPromptFile?: string;
    /**
     * How long to wait for the agent's ready pattern before pasting the prompt anyway, as a Go
     * duration such as 30s.
     */
    readyTimeout?: string;
    /**
     * tmux key names sent after pasting the prompt to submit it, e.g. [Enter].
     */
    submitKeys?: string[];
    /**
     * How the controller asks the agent to stop before it kills the tmux session.
     */
    stop?: {
      /**
       * tmux key names sent to ask the agent to stop, e.g. [C-c].
       */
      keys?: string[];
      /**
       * How long to wait after sending the stop keys before the tmux session is killed, as a Go duration
       * such as 10s.
       */
      gracePeriod?: string;
    };
    /**
     * tmux key names that interrupt the agent's current turn without ending it (e.g. [Escape] for
     * Claude Code), sent when a SessionPolicy budget with enforce Hard is reached mid-turn. Default
     * [C-c].
     *
     * @maxItems 8
     */
    interruptKeys?: string[];
    /**
     * Data that tells the agent's state (ready, busy, waiting for input, done) from pane output,
     * transcripts and hook events. Patterns are data, keyed by CLI version; the shape is free-form for
     * now.
     */
    detection?: {
      [k: string]: unknown;
    };
    /**
     * Names of startup dialogs the controller may answer automatically. Empty by default; permission
     * prompts are never auto-approved unless listed here.
     */
    autoAnswer?: string[];
    /**
     * Agent hooks the controller installs so the agent reports its own state (e.g. Claude Code hooks
     * posting to the controller's hook endpoint). Free-form for now.
     */
    hooks?: {
      /**
       * kind claude-code: whose config directory a run uses. prepared: a fresh one in the run's
       * workspace (onboarding done, the workdir trusted, the API key approved; CLAUDE_CONFIG_DIR); user:
       * the person's own (~/.claude), untouched; auto (default): prepared when the agent's environment
       * has ANTHROPIC_API_KEY, else user. A CLAUDE_CONFIG_DIR in the environment always wins.
       */
      configDir?: 'auto' | 'prepared' | 'user';
      [k: string]: unknown;
    };
    /**
     * Prices for the estimated cost in an AgentSession's status.usage (USD per million tokens), by
     * model. An entry whose model is the exact name wins; otherwise the first entry whose model glob
     * (`*` matches any text) matches. A model no entry prices leaves the cost out (status.usage.priced
     * false). Estimates only: the provider's bill is the authority.
     *
     * @maxItems 50
     */
    pricing?: {
      /**
       * The model name as the agent reports it (e.g. claude-sonnet-4-5-20250929), or a glob.
       */
      model: string;
      /**
       * USD per million input tokens (not from the cache).
       */
      inputPerMTok: number;
      /**
       * USD per million output tokens.
       */
      outputPerMTok: number;
      /**
       * USD per million input tokens read from the prompt cache.
       */
      cacheReadPerMTok: number;
      /**
       * USD per million input tokens written to the prompt cache.
       */
      cacheWritePerMTok: number;
    }[];
  };
  /**
   * What the controller observed about the agent CLI on this host.
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
     * Version of the agent CLI detected on this host, e.g. 2.0.14.
     */
    version?: string;
    /**
     * Whether the agent's executable (command[0]) was found on the controller's PATH.
     */
    installed?: boolean;
  };
}
export type AgentSchemaSpec = NonNullable<AgentSchema['spec']>;
export type AgentSchemaStatus = NonNullable<AgentSchema['status']>;
