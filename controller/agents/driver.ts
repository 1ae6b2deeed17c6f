/**
 * Everything agent-specific behind one interface. Generic code (the session reconciler, `orchctl
 * send`, the agent feed) asks the Agent's driver, never "is this Claude Code?":
 *  - what a launch adds (settings files, flags, a known session id and so the transcript's path);
 *  - which confirmation sources verified delivery may use (hooks, a transcript, else the screen);
 *  - how transcript lines become orchctl's events.
 * Screen detection (ready / waiting / dialogs and their answer keys) is data on the Agent
 * (agents/detection/), so every driver shares it.
 */
import type { AgentSpec } from '../api/kinds.js';
import type { NewEvent } from '../store/eventlog.js';

/** What a launch knows about its run when the driver is asked for additions. */
export interface LaunchFacts {
  uid: string;
  run: number;
  /** The directory the agent runs in (after any worktree). */
  workdir: string;
  /** The run's private workspace directory (0700). */
  workspace: string;
  /** The environment the agent will have: the base, what inheritEnv names, the Agent's and the session's env. */
  env: Record<string, string | undefined>;
  /** argv of `orchctl hook`, for agents that report through hooks. */
  hookCommand: string[];
}

export interface LaunchAdditions {
  /** Appended to the Agent's args. */
  args: string[];
  /** Files written into the workspace (0600, in 0700 subdirectories) before the launch: name → contents. */
  files: Record<string, string>;
  /** Variables the agent gets on top of the Agent's and the session's (through the private env files). */
  env?: Record<string, string>;
  /** The agent's own id for this run, if the driver fixes one. */
  sessionId?: string;
  /** Where the run's transcript will be, if known in advance. */
  transcript?: string;
  /** The directory the agent keeps its own records in (history, chats) for this run: see promptRecords. */
  records?: string;
}

/**
 * Where an agent writes down each prompt it accepted (its own history or chat file), so delivery
 * is confirmed by the agent's record of the prompt rather than by the screen moving: a TUI may take
 * an Enter that arrives with a paste as a newline, and the screen moves all the same.
 */
export interface PromptRecords {
  /** The append-only JSONL files that may receive the record now (they may not exist yet). */
  files(): string[];
  /** The prompt texts one parsed line records (none for lines that are not a submitted prompt). */
  texts(line: Record<string, unknown>): string[];
}

/**
 * How an agent writes a rate or usage limit into its transcript (agent-specific text, so it lives
 * with the driver; screen limits are the Agent's detection data).
 */
export interface LimitNotice {
  /** An assistant message that is the agent's limit notice (never text a person or orchctl typed). */
  message: RegExp;
  /** The reset as epoch seconds written into the notice (group 1), for agents that write one. */
  resetEpoch?: RegExp;
}

/** Turns an agent's transcript lines into events; its state is carried between lines of one run. */
export interface TranscriptReader<S = unknown> {
  /** Its limit notice, when the agent writes one there. */
  readonly limitNotice?: LimitNotice;
  newState(): S;
  events(line: Record<string, unknown>, run: number, state: S): NewEvent[];
  /** Counters kept in the log's cursors so a restarted controller continues the numbering. */
  counters(state: S): Record<string, number>;
  restore(state: S, counters: Record<string, number | undefined>, toolUses: NewEvent[]): void;
}

/**
 * Commands typed into an idle agent to shrink its context (docs/long-running.md): `compact` is
 * followed by the policy's focus; `clear` starts a new conversation (then the rehydrate prompt).
 */
export interface ContextCommands {
  compact?: string;
  clear?: string;
}

/** One set-up check of an agent (`orchctl doctor`): what it found and, when not ok, what to fix. */
export interface AgentCheck {
  check: string;
  ok: boolean;
  message: string;
}

export interface AgentDriver {
  readonly name: string;
  /** What the agent can do about a full context window; undefined: only a new run helps. */
  readonly context?: ContextCommands;
  launch(agent: AgentSpec, facts: LaunchFacts): LaunchAdditions;
  /**
   * Arguments that append `text` to the agent's own system prompt (how orchctl's report protocol
   * reaches an agent without a persona); undefined when the agent has no such flag.
   */
  appendSystemPrompt?(agent: AgentSpec, text: string): string[];
  /** The agent's records of submitted prompts, from the run's `records` dir and session id (LaunchAdditions). */
  promptRecords?(records: string, sessionId?: string): PromptRecords;
  /** Whether the agent's hooks report prompt submission (UserPromptSubmit) into the run's hook file. */
  hooks(agent: AgentSpec | undefined): boolean;
  /**
   * The run's transcript when its path is only known once the agent wrote it (Gemini CLI's chat
   * file: its project directory is the CLI's choice; Codex's rollout: named by a thread id it
   * picks), from the run's records dir, session id, workdir and start time.
   */
  locateTranscript?(run: {
    records?: string;
    sessionId?: string;
    workdir?: string;
    startTime?: string;
  }): string | undefined;
  /** Reads the agent's transcript, if it keeps one orchctl understands. */
  readonly transcript?: TranscriptReader;
  /** `orchctl doctor`'s checks of the agent's own set-up on this host (Claude Code: onboarding, base URL). */
  setupChecks?(agent: AgentSpec): Promise<AgentCheck[]>;
}

/** What every transcript reader counts: turns, and tool calls by id (to label their results). */
export interface TurnCounts {
  users: number;
  assistants: number;
  tools: Map<string, { tool: string; command?: string }>;
}

/** TranscriptReader.counters of a state that counts turns. */
export const turnCounters = (st: TurnCounts): Record<string, number> => ({
  users: st.users,
  assistants: st.assistants,
});

/** TranscriptReader.restore of a state that counts turns: from status's counters and the log's tool calls. */
export function restoreTurns(st: TurnCounts, counters: Record<string, number | undefined>, toolUses: NewEvent[]): void {
  st.users = counters.users ?? 0;
  st.assistants = counters.assistants ?? 0;
  for (const e of toolUses)
    if (e.type === 'tool_use' && e.toolUseId) st.tools.set(e.toolUseId, { tool: e.tool, command: e.command });
}
