/** What the session plan is given: desired state resolved, and what was observed (observe.ts fills it). */
import type { AgentSpec, SessionPolicy } from '../../api/kinds.js';
import type { DeliveryResult } from '../../agents/delivery.js';
import type { GitProgress } from '../../observers/git.js';
import type { HandoffReading, StatuslineReading } from '../../observers/context-files.js';
import type { HostSnapshot } from '../../observers/host.js';
import type { ReportReading } from '../../observers/report.js';
import type { HandoffFileReading } from '../../observers/handoff.js';
import type { PaneInfo } from '../../observers/tmux.js';
import type { AgentEvent, LogPosition } from '../../store/eventlog.js';
import type { ScreenReading } from './agent-state.js';
import type { Effective, PaneState } from './decide.js';

/** A referenced object or path that is not there (yet): the session waits in Pending. */
export interface Problem {
  reason: string;
  message: string;
  fatal: boolean;
}

/** Desired state with its references resolved. */
export interface Resolved {
  agent?: AgentSpec;
  workdir?: string;
  problem?: Problem;
  policy?: SessionPolicy;
  effective: Effective;
}

/** What the agent's sources said since status.agent's position (observers/agent-feed.ts fills the log). */
export interface AgentFacts {
  run: number;
  screen?: ScreenReading;
  screenChangedAt?: number;
  events: AgentEvent[];
  next: LogPosition;
}

export interface Observed {
  /** The current run's pane (or the launch wrapper's exit-code record, which wins). */
  pane: PaneState;
  paneInfo?: PaneInfo;
  /** A live pane of a newer run, launched by a controller that died before recording it. */
  adopt?: { pane: PaneInfo; workspace: string; state: Record<string, unknown> };
  /** The run was on a lost node and this node starts the next one (epoch.ts): the new run's note. */
  moved?: { note: string };
  /** Whether tmux holds any session of this object (a launch must clear the name first). */
  hasPanes: boolean;
  /** Live sessions of this object tagged with another store identity: ours now. */
  retag: string[];
  /** For admission: sessions under the same policy that run or are admitted, and the host. */
  admission?: { activeUnderPolicy: number; host: HostSnapshot; nodeUnschedulable: boolean };
  /** The run's output tail when its log grew. */
  outputTail?: string;
  agent?: AgentFacts;
  /** git progress since headBefore (no process unless the repository changed), for `gitKey`. */
  git?: GitProgress;
  gitKey?: string;
  /** The run's status.json when it changed since status.report.stamp (`run`: whose workspace). */
  report?: ReportReading & { run: number };
  /** A background prompt delivery of the current run that finished. */
  delivery?: DeliveryResult;
  /** Context handling's files (context.ts): the statusline when it changed; during a step, the handoff. */
  context?: { statusline?: StatuslineReading; handoff?: HandoffReading; checkpointSummary?: string };
  /** A paused run's continue message that finished (pause.ts). */
  resumed?: DeliveryResult;
  /** The run's handoff.md when it changed since status.handoff.stamp (`run`: whose workspace). */
  handoff?: HandoffFileReading & { run: number };
  /** The message being delivered (messages.ts): 'pending', its result, or nothing known (a lost outcome). */
  message?: { id: string; result: DeliveryResult | 'pending' | undefined };
}
