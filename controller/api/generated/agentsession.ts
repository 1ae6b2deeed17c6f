// Generated from crds/agentsessions.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface AgentSessionSchema {
  /**
   * Desired state of the session - the agent, the working directory, the prompt, whether it should
   * run and the limits and restart rules that apply.
   */
  spec?: {
    /**
     * Name of an Agent in the same namespace that says how to run the agent CLI. Set either agentRef
     * or an inline agent.
     */
    agentRef?: string;
    /**
     * Inline agent configuration with the same fields as an Agent's spec, for a one-off agent without
     * a separate Agent object. Set either agent or agentRef.
     */
    agent?: {
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
     * Name of a Project in the same namespace to work in; the project's path becomes the working
     * directory.
     */
    projectRef?: string;
    /**
     * Working directory used when no projectRef is set. Relative paths are resolved against the
     * manifest file's directory.
     */
    workdir?: string;
    /**
     * Task prompt given to the agent at the start of each run. Set either prompt or promptFile.
     */
    prompt?: string;
    /**
     * File holding the task prompt, relative to the manifest file's directory. An alternative to an
     * inline prompt.
     */
    promptFile?: string;
    /**
     * Whether the agent should be running. Running starts it (or keeps it running); Stopped stops it
     * gracefully and keeps the object and its status.
     */
    desiredState?: 'Running' | 'Stopped';
    /**
     * Time box for one run, as a Go duration such as 45m. Falls back to the selected policy's
     * maxSessionDuration; without either, runs are not time-boxed.
     */
    maxDuration?: string;
    /**
     * What happens when a run reaches maxDuration. Stop ends the run as TimedOut; Warn only records a
     * Warning event and condition. Falls back to the selected policy's timeoutAction.
     */
    timeoutAction?: 'Stop' | 'Warn';
    /**
     * Whether an ended run is started again. Never leaves it ended; OnFailure restarts runs that
     * failed; Always restarts every ended run. Restarts are capped by maxRestarts.
     */
    restartPolicy?: 'Never' | 'OnFailure' | 'Always';
    /**
     * Maximum number of restarts of this session. Falls back to the selected policy's maxRestarts,
     * then to 3.
     */
    maxRestarts?: number;
    /**
     * Backoff between restarts; the delay starts at initialDelay and grows exponentially up to
     * maxDelay.
     */
    restartBackoff?: {
      /**
       * Delay before the first restart, as a Go duration such as 10s.
       */
      initialDelay?: string;
      /**
       * Upper bound of the delay between restarts, as a Go duration such as 5m.
       */
      maxDelay?: string;
    };
    /**
     * Run the agent in its own git worktree instead of the project's main checkout. Required when the
     * project is protected.
     */
    worktree?: {
      /**
       * Whether the session runs in a dedicated git worktree.
       */
      enabled?: boolean;
      /**
       * Branch checked out in the worktree; defaults to orchctl/<session name>.
       */
      branch?: string;
      /**
       * Commit-ish the worktree branch is created from; defaults to HEAD.
       */
      baseRef?: string;
    };
    /**
     * Name of a SessionPolicy in the same namespace to apply explicitly. When empty, policies are
     * selected by their label selectors.
     */
    policyRef?: string;
    /**
     * Extra environment variables for the agent process; they override the agent's env entries of the
     * same name. Names are unique. Values are never put on a command line (they reach the agent
     * through a private file), and valueFrom keeps secrets out of manifests.
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
     * Pin the session to this Node. The scheduler still checks that the node fits (Ready, not
     * cordoned, capacity) and says why not; without it the scheduler picks a node. Multi-host -
     * docs/scheduling.md.
     */
    nodeName?: string;
    /**
     * Only Nodes whose labels include all of these key/value pairs (Kubernetes' nodeSelector). The
     * Project's own nodeSelector applies as well.
     */
    nodeSelector?: {
      [k: string]: string;
    };
  };
  /**
   * What the controller observed about the session - its lifecycle phase, the current run, the tmux
   * session, git progress, agent output and the state of the detector, breaker and judge.
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
     * Coarse lifecycle phase derived from the session's state machine, for tables and metrics;
     * conditions are authoritative. The set of values is closed.
     */
    phase?:
      | 'Pending'
      | 'Starting'
      | 'Running'
      | 'Stopping'
      | 'Backoff'
      | 'Succeeded'
      | 'Failed'
      | 'Killed'
      | 'TimedOut';
    /**
     * Number of the current (or last) run, starting at 1 and incremented on every start or restart.
     */
    run?: number;
    /**
     * Restarts by the restart policy (OnFailure, Always) since the last new run - the count
     * maxRestarts caps; 0 again after a new run asked through the restart annotation or a spec change.
     * status.run counts every run.
     */
    restarts?: number;
    /**
     * Why and when the current (or last) run was started, recorded with the run before tmux starts it.
     */
    lastStart?: {
      /**
       * The run that was started.
       */
      run: number;
      /**
       * What started it: FirstRun; RestartPolicy (after a failed run, counted in restarts); SpecChanged;
       * a restart annotation by orchctl restart (Manual), an Autopilot decision, a pipeline's Recovery
       * of a lost run or Resume of an ended one, the context policy (Context), or of unknown origin
       * (Restart); NodeLost (the run of a lost node started again); NewRun otherwise.
       */
      reason:
        | 'FirstRun'
        | 'RestartPolicy'
        | 'SpecChanged'
        | 'Manual'
        | 'Autopilot'
        | 'Recovery'
        | 'Resume'
        | 'Context'
        | 'Restart'
        | 'NodeLost'
        | 'NewRun';
      /**
       * When the start was decided (the run's startTime follows it).
       */
      time: string;
      /**
       * The detail - which restart value, which Decision, which restart of how many.
       */
      message: string;
    };
    /**
     * Name of the tmux session running the agent.
     */
    tmuxSession?: string;
    /**
     * Handoff directory of the current run, holding the prompt, result.json and similar files.
     */
    workspace?: string;
    /**
     * Resolved absolute working directory of the current run (the project path or the session's
     * worktree).
     */
    workdir?: string;
    /**
     * When the current run started.
     */
    startTime?: string;
    /**
     * When the last run ended - when its process exited (the launch wrapper's exit-code file, or
     * tmux's pane_dead_time) when that is known, so a run that ended while no controller ran keeps its
     * own end time; else when the controller saw it end.
     */
    completionTime?: string;
    /**
     * When the next restart is due, while the session is in Backoff.
     */
    nextRestartTime?: string;
    /**
     * When the current run reaches its maxDuration time box.
     */
    deadlineTime?: string;
    /**
     * When the stop keys were sent to the agent while Stopping; the grace period runs from it.
     */
    stopRequestTime?: string;
    /**
     * Exit code of the agent process of the last run.
     */
    exitCode?: number;
    /**
     * Machine-readable reason for the current phase, one CamelCase word such as TimedOut.
     */
    reason?: string;
    /**
     * Human-readable detail about the current phase.
     */
    message?: string;
    /**
     * Tail of the agent's tmux pane with ANSI escape sequences removed.
     */
    lastOutput?: string;
    /**
     * Git HEAD commit SHA when the current run started; git progress is measured from it.
     */
    headBefore?: string;
    /**
     * Git progress of the current run since headBefore.
     */
    git?: {
      /**
       * Commit SHA that HEAD points to now.
       */
      head?: string;
      /**
       * Currently checked-out branch in the working directory.
       */
      branch?: string;
      /**
       * Number of commits made since headBefore.
       */
      commits?: number;
      /**
       * Lines added since headBefore.
       */
      insertions?: number;
      /**
       * Lines removed since headBefore.
       */
      deletions?: number;
      /**
       * Number of files changed since headBefore.
       */
      filesChanged?: number;
      /**
       * The newest commit made since headBefore.
       */
      lastCommit?: {
        /**
         * Commit SHA.
         */
        sha?: string;
        /**
         * Subject line of the commit message.
         */
        subject?: string;
        /**
         * Commit time.
         */
        time?: string;
      };
    };
    /**
     * What the agent wrote to result.json in its workspace at the end of the run; free-form.
     */
    result?: {
      [k: string]: unknown;
    };
    /**
     * Persisted snapshot of the session's lifecycle state machine, so a restarted controller resumes
     * where it left off.
     */
    lifecycle?: {
      /**
       * status.binding.epoch the current run was started under. A run of an older epoch than the binding
       * is stale - its node was lost - and is never written for again.
       */
      epoch?: number;
      /**
       * The Node the current run was started on (status.binding.nodeName then).
       */
      nodeName?: string;
      [k: string]: unknown;
    };
    /**
     * What the agent itself is doing, from its hooks, its transcript and its screen - state (starting,
     * idle, busy, waiting, dialog, exited) and its source, turns completed, the last assistant
     * message, the session id and transcript path, and the event-log position this was computed up to.
     */
    agent?: {
      [k: string]: unknown;
    };
    /**
     * The lightweight detector's view of the current run (docs/assessment.md) - frustrationEma and
     * successEma, message and event counts, counts per signal (TestFailure, UserCorrection, ...), the
     * last signals with their event seq and message index, and the frustration trajectory. Written by
     * the assessment reconciler.
     */
    detector?: {
      [k: string]: unknown;
    };
    /**
     * The circuit breaker of the current run (docs/assessment.md) - state Closed, Open or HalfOpen,
     * why it opened, its counters against the thresholds in force, and the interventions decided with
     * their outcome. Written by the assessment reconciler.
     */
    breaker?: {
      [k: string]: unknown;
    };
    /**
     * Where the assessment reconciler is in the session's event log (position, committed with the
     * detector and breaker state), the open checkpoint segment and the checkpoints taken, the turn in
     * progress and an intervention decided but not yet delivered.
     */
    assessment?: {
      [k: string]: unknown;
    };
    /**
     * Context-window use of the agent, as read from its transcript.
     */
    context?: {
      [k: string]: unknown;
    };
    /**
     * Tokens the agent's messages used in the current run, summed from its transcript (each message
     * counted once), and the cost estimated from the Agent's spec.pricing. Reset when a new run
     * starts.
     */
    usage?: {
      /**
       * The run these sums belong to.
       */
      run: number;
      /**
       * Input tokens not read from or written to the cache.
       */
      inputTokens: number;
      /**
       * Output tokens.
       */
      outputTokens: number;
      /**
       * Input tokens read from the prompt cache.
       */
      cacheReadTokens: number;
      /**
       * Input tokens written to the prompt cache.
       */
      cacheCreationTokens: number;
      /**
       * The four figures summed.
       */
      totalTokens: number;
      /**
       * The model of the latest message.
       */
      model?: string;
      /**
       * Estimated cost in USD; present only when every model the run used is priced.
       */
      costUSD?: number;
      /**
       * Whether the Agent's spec.pricing prices every model the run used.
       */
      priced: boolean;
      /**
       * The sums per model ("" for an unknown model); the cost is computed from them.
       *
       * @maxItems 9
       */
      byModel?: {
        model: string;
        inputTokens: number;
        outputTokens: number;
        cacheReadTokens: number;
        cacheCreationTokens: number;
      }[];
      /**
       * Tokens and cost by the hour they were used in, across runs (carried over when a new run starts),
       * the newest 25 hours - what a SessionPolicy budget sums over its window.
       *
       * @maxItems 25
       */
      hourly?: {
        /**
         * The start of the hour (UTC).
         */
        hour: string;
        tokens: number;
        /**
         * Estimated USD; absent when some use in the hour was not priced.
         */
        costUSD?: number;
      }[];
      /**
       * The last message counted and the figures counted for it: its later (streamed) transcript lines
       * add only what grew.
       */
      last?: {
        messageId: string;
        inputTokens: number;
        outputTokens: number;
        cacheReadTokens: number;
        cacheCreationTokens: number;
      };
    };
    /**
     * The run is alive but held (docs/long-running.md) - RateLimited until the limit resets (plus
     * jitter), then the continue message; BudgetExceeded until its SessionPolicy's budget has room.
     * Nothing else is sent to a paused run and it counts as neither failed nor finished.
     */
    pause?: {
      /**
       * The run that is paused.
       */
      run: number;
      /**
       * Why it is paused.
       */
      reason: 'RateLimited' | 'BudgetExceeded';
      /**
       * When the pause began.
       */
      since: string;
      /**
       * When it resumes (RateLimited - the reset time plus jitter).
       */
      until?: string;
      /**
       * What the pause is for, with the limit's text or the budget's figures.
       */
      message: string;
      /**
       * Whether the paused session still counts against maxConcurrentSessions.
       */
      holdsSlot: boolean;
      /**
       * When the continue message was sent; the pause ends when its delivery is confirmed.
       */
      continueSentAt?: string;
      /**
       * Continue messages that were not confirmed (each is tried again later, with backoff).
       */
      failedResumes?: number;
      /**
       * When a Hard budget last interrupted the busy agent (its Agent's interruptKeys) to pause it.
       */
      interruptedAt?: string;
    };
    /**
     * Held by orchctl freeze (the orchctl.io/frozen annotation on the session or its Project) - a live
     * run's process group is stopped (SIGSTOP), nothing starts, nothing is sent and no watchdog counts
     * the time; orchctl thaw continues it (SIGCONT) with its time box moved on by the time it was
     * frozen.
     */
    frozen?: {
      /**
       * When the freeze took hold.
       */
      since: string;
      /**
       * The run held (0 when none had started).
       */
      run: number;
      /**
       * Whether a live run's process group was stopped with SIGSTOP.
       */
      stopped: boolean;
      /**
       * The freeze mark and whose it is (the session's own or its project's).
       */
      message: string;
    };
    /**
     * The agent's progress report for the current run, mirrored from $ORCHCTL_WORKSPACE/status.json
     * (schemas/agent-report.schema.json). A file that cannot be used sets problem and keeps the last
     * good figures. Reset when a new run starts.
     */
    report?: {
      /**
       * The run whose status.json this is.
       */
      run: number;
      /**
       * What the agent last reported.
       */
      status?: 'executing' | 'complete' | 'blocked';
      /**
       * Tasks in state done.
       */
      tasksDone?: number;
      /**
       * Tasks listed.
       */
      tasksTotal?: number;
      /**
       * tasksDone/tasksTotal, as the TASKS column shows it.
       */
      progress?: string;
      /**
       * The subject of the first task in progress.
       */
      currentTask?: string;
      /**
       * What the agent says blocks it.
       */
      blocker?: string;
      /**
       * The report's notes, cleaned and cut (a pipeline hands them to the next phase).
       */
      notes?: string;
      /**
       * When the last valid report was read.
       */
      updatedAt?: string;
      /**
       * Why status.json as it is now was not used (not JSON, over 256 KiB, not the schema).
       */
      problem?: string;
      /**
       * Size and modification time of the file last read; it is read again only when they change.
       */
      stamp: string;
    };
    /**
     * The run's $ORCHCTL_WORKSPACE/handoff.md as its node last read it (again only when its size or
     * modification time changes), control characters removed and cut at 8 KiB, so that a reader on
     * another host (a pipeline's next phase) has it without the file.
     */
    handoff?: {
      /**
       * The run whose handoff.md this is.
       */
      run: number;
      /**
       * Size and modification time of the file last read.
       */
      stamp: string;
      /**
       * The file's text, up to 8 KiB.
       */
      text: string;
      /**
       * The file is longer than text.
       */
      truncated?: boolean;
      /**
       * The file's size in bytes.
       */
      bytes: number;
      /**
       * When it was read.
       */
      at: string;
    };
    /**
     * The last message (the orchctl.io/message annotation - orchctl send to a run on another host, a
     * pipeline's resume) the session's node took up and how it went. It is typed at an idle point,
     * never while the run is paused, once per id; Delivering is recorded before it is typed, and a
     * node that stops then reports it Unconfirmed and never sends it again.
     */
    messageDelivery?: {
      /**
       * The message's id.
       */
      id: string;
      /**
       * Who sent it.
       */
      from?: string;
      /**
       * Where the message is.
       */
      state: 'Waiting' | 'Delivering' | 'Delivered' | 'Failed' | 'Unconfirmed';
      /**
       * The run it went to.
       */
      run?: number;
      /**
       * Whether the agent confirmed it.
       */
      delivered?: boolean;
      /**
       * Why it waits, or how the delivery ended (Confirmed, Unconfirmed, NotRunning...).
       */
      reason: string;
      /**
       * What the delivery said.
       */
      message: string;
      /**
       * Extra presses of the submit keys it took.
       */
      retries?: number;
      /**
       * What confirmed it.
       */
      confirmedBy?: 'hook' | 'transcript' | 'screen';
      /**
       * When it reached this state.
       */
      at: string;
    };
    /**
     * Summary of the latest Evaluation of this session, such as its name, score and recommendation.
     */
    lastEvaluation?: {
      [k: string]: unknown;
    };
    /**
     * Progress of delivering the prompt to the agent in the current run, such as waiting for ready,
     * pasted or submitted.
     */
    promptDelivery?: {
      [k: string]: unknown;
    };
    /**
     * The Node this session's runs go to, written by the scheduler (compare-and-swap) and removed by
     * node lifecycle when that node is lost. A node acts on the session only while the binding names
     * it.
     */
    binding?: {
      /**
       * Name of the Node.
       */
      nodeName: string;
      /**
       * Higher with every binding of this session; a run carries the epoch it was started under
       * (status.lifecycle.epoch).
       */
      epoch: number;
      /**
       * When the scheduler made this binding.
       */
      boundAt: string;
    };
  };
}
export type AgentSessionSchemaSpec = NonNullable<AgentSessionSchema['spec']>;
export type AgentSessionSchemaStatus = NonNullable<AgentSessionSchema['status']>;
