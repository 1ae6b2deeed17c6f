/**
 * What the session plan asks the world to do (effects) and what the world answers (outcomes).
 * The plan (plan.ts) is pure and only returns these as data; the actuator (actuator.ts) performs
 * them — tmux, files, git, the store — and hands the outcomes back as facts for the next plan step.
 */
import type { AgentSession, AgentSessionStatus, AgentSpec, MessageDeliveryStatus } from '../../api/kinds.js';
import type { MessageRequest } from '../../api/message.js';
import type { EventNote, EventType } from '../../client/events.js';
import type { AuditRecord } from '../../observers/audit.js';
import type { GitProgress } from '../../observers/git.js';
import type { LaunchSpec } from '../../observers/tmux.js';
import type { LogPosition, AgentEvent } from '../../store/eventlog.js';
import type { Phase } from './machine.js';

export type Level = 'INFO' | 'WARN' | 'ERROR';

export type Effect =
  /**
   * Everything a run needs before tmux: worktree, workspace, prompt file, env, driver files.
   * Outcome: Prepared | StartFailed.
   */
  /**
   * `note`: the restart note (orchctl.io/restart-note) when a restart annotation started this run;
   * `handoffFrom`: then, the run whose handoff.md (if any) goes into the prompt (rehydrate.ts).
   */
  | {
      type: 'PrepareRun';
      run: number;
      agent: AgentSpec;
      workdir: string;
      note?: string;
      handoffFrom?: number;
      /** The governing SessionPolicy's inheritEnv (the Agent's is in `agent`). */
      inheritEnv?: string[];
    }
  /**
   * Records the run in status (so a controller that dies now adopts it), then starts tmux.
   * `events`: the pass's Events so far, written with the record (the reconciler adds them).
   * Outcome: Launched | StartFailed.
   */
  | {
      type: 'Launch';
      record: AgentSessionStatus;
      launch: LaunchSpec;
      outputLog: string;
      clearFirst: boolean;
      events?: EventNote[];
    }
  /** Verified delivery of the run's prompt, beside the loop; its result comes back as an observation. */
  | { type: 'Deliver'; run: number; target: string; agent: AgentSpec; promptFile: string }
  /** Verified delivery of a context message (context.ts), beside the loop; confirmed through the agent's events. */
  | { type: 'DeliverText'; run: number; text: string }
  /** Answers a dialog (or a permission prompt) the Agent opted in to, beside the loop. */
  | { type: 'AutoAnswer'; paneId: string; agent: AgentSpec; dialog: string; keys: string[] }
  /** `literal`: typed first (the input line cleared before), beside the loop — a command such as /compact. */
  | { type: 'SendKeys'; paneId: string; keys: string[]; literal?: string }
  /** A new run through the restart annotation (and its note), as a person or the autopilot would ask. */
  | { type: 'RequestRestart'; note: string }
  /** A paused run's continue message (pause.ts), verified delivery beside the loop; its result comes back observed. */
  | { type: 'SendContinue'; run: number; text: string }
  /** The continue message's outcome is in status: the actuator may forget it. */
  | { type: 'ResumeRecorded'; run: number }
  /**
   * A message (messages.ts): `record` (Delivering) written to status first, then typed by verified
   * delivery beside the loop; its outcome comes back observed.
   */
  | { type: 'DeliverMessage'; run: number; request: MessageRequest; record: MessageDeliveryStatus }
  /** The message's outcome is in status: the actuator may forget it. */
  | { type: 'MessageRecorded'; id: string }
  /** A pause began (for the pauses counter). */
  | { type: 'Paused'; reason: string }
  | { type: 'Kill'; tmuxSession: string }
  /** Outcome: Captured. */
  | { type: 'Capture'; paneId: string }
  /** The last of a run that ended: events, screen or log tail, result file, git. Outcome: Settled. */
  | {
      type: 'SettleRun';
      run: number;
      workspace?: string;
      paneId?: string;
      /** No pane to capture and no output yet: read the tail of the output log. */
      readTail: boolean;
      /** Where the run's events not yet in status.agent start, and its transcript. */
      from: LogPosition;
      transcript?: string;
      /** Its driver reads the transcript. */
      agent?: AgentSpec;
      workdir?: string;
      headBefore?: string;
    }
  | { type: 'TagStore'; tmuxSession: string }
  /**
   * An Event of the transition this pass makes: the reconciler holds it until the status write that
   * records the transition (the Launch's record, the pass's one write, the finalizer's removal) and
   * writes it in the same transaction (client/status.ts), so a crash never loses it nor tells it twice.
   */
  | { type: 'RecordEvent'; eventType: EventType; reason: string; message: string }
  | { type: 'Audit'; entry: AuditRecord }
  | { type: 'Log'; level: Level; message: string }
  /** A line in the run's own log (workspace/orchctl.log). */
  | { type: 'WorkspaceLog'; run: number; level: Level; message: string }
  /** The run's state.json in its workspace (read by people and by adoption). */
  | { type: 'WriteState'; run: number; state: Record<string, unknown> }
  | { type: 'RunEnded'; run: number; phase: Phase; seconds: number }
  /** Wake the session when these files change (its hook file, its transcript). */
  | { type: 'Watch'; files: string[] }
  /** A finished delivery is now in status: the actuator may forget it. */
  | { type: 'DeliveryRecorded'; run: number }
  /** The run is over: drop per-run memory (screen cache, output tail, transcript reader). */
  | { type: 'ForgetRun'; run: number; workspace?: string }
  | { type: 'RemoveWorktree'; projectPath: string; worktree: string }
  /** Deletion is done: the finalizer comes off and the store removes the object; `events` with it. */
  | { type: 'RemoveFinalizer'; events?: EventNote[] };

export interface PreparedRun {
  workdir: string;
  workspace: string;
  promptFile: string;
  outputLog: string;
  headBefore?: string;
  /** Event-log position the run's agent observation starts from. */
  position: LogPosition;
  sessionId?: string;
  transcript?: string;
  records?: string;
  launch: LaunchSpec;
}

export interface SettledRun {
  /** Events of the run not yet folded into status.agent, read after a last ingest. */
  events?: AgentEvent[];
  next?: LogPosition;
  /** The pane's last screen, or the output log's tail. */
  lastOutput?: string;
  result?: Record<string, unknown>;
  git?: GitProgress;
}

export type Outcome =
  | { type: 'Prepared'; run: PreparedRun }
  | { type: 'StartFailed'; reason: string; message: string }
  | { type: 'Launched'; obj: AgentSession }
  | { type: 'Captured'; text: string }
  | { type: 'Settled'; run: SettledRun };

/** Performs effects in order; returns the outcomes of those that have one. */
export interface Actuator {
  run(key: string, obj: AgentSession, effects: Effect[]): Promise<Outcome[]>;
}
