/**
 * Checkpoints (seed 001 §4): the session's history is cut into segments at logical boundaries,
 * and each segment gets a short summary.
 *
 * Triggers, checked on every event of a run: `message-count` (messageThreshold messages in
 * the segment: user and assistant messages, tool calls included), `task-boundary` (a user message matching a boundary
 * pattern: "done", "next", "moving on", ...), `git-commit` (a tool call that committed),
 * `time` (the segment is older than `interval` by event time), `session-end` (the SessionEnd
 * hook) and `run-end` (the first event of the next run closes the last segment of the previous).
 *
 * This module decides and describes; the reconciler reads the segment's events back from the
 * log, asks the summariser and appends the record to checkpoints.jsonl.
 */
import type { CheckpointState, CheckpointTrigger } from '../../api/assessment.js';
import type { AgentEvent, LogPosition } from '../../store/eventlog.js';
import type { CheckpointConfig } from './config.js';
import { detect, newDetectorState, type Detection, type DetectorConfig, type Signal } from './detector.js';

// status.assessment.checkpoints and the history's records are API types (the CLI reads them).
export type { CheckpointState, CheckpointTrigger };

/** A checkpoint decided: the segment [fromSeq, seq] of `run`. */
export interface CheckpointDue {
  run: number;
  trigger: CheckpointTrigger;
  seq: number;
  at: string;
  from: LogPosition;
  fromSeq: number;
  firstMsg: number;
  lastMsg: number;
}

export function newCheckpointState(from: LogPosition, startSeq: number, firstMsg = 1, count = 0): CheckpointState {
  return { count, segmentFrom: from, segmentStartSeq: startSeq, segmentMessages: 0, segmentFirstMsg: firstMsg };
}

/** Accounts one event to the open segment and says whether it closes it. */
export function checkpointTrigger(
  s: CheckpointState,
  e: AgentEvent,
  d: Detection,
  cfg: CheckpointConfig,
): CheckpointTrigger | undefined {
  s.segmentStartTime ??= e.ts;
  const isMessage = e.type === 'user_message' || e.type === 'assistant_message' || e.type === 'tool_use';
  if (isMessage) s.segmentMessages++;
  if (!cfg.enabled) return undefined;
  if (e.type === 'hook' && e.hook === 'SessionEnd') return 'session-end';
  if (cfg.onCommit && d.tool?.commit) return 'git-commit';
  if (e.type === 'user_message' && d.scoredUserMessage && cfg.taskBoundary.some((r) => r.test(e.text.slice(0, 4000))))
    return 'task-boundary';
  if (s.segmentMessages >= cfg.messageThreshold) return 'message-count';
  const started = Date.parse(s.segmentStartTime);
  if (Date.parse(e.ts) - started >= cfg.intervalMs) return 'time';
  return undefined;
}

/** Starts the next segment after a checkpoint at event `e`. */
export function nextSegment(s: CheckpointState, due: CheckpointDue, from: LogPosition): void {
  s.count++;
  s.lastSeq = due.seq;
  s.lastTime = due.at;
  s.segmentFrom = from;
  s.segmentStartSeq = due.seq + 1;
  delete s.segmentStartTime;
  s.segmentMessages = 0;
  s.segmentFirstMsg = due.lastMsg + 1;
}

/** What the summariser gets: a digest of the segment's events (bounded, no raw transcript). */
export interface SegmentEvidence {
  run: number;
  trigger: CheckpointTrigger;
  fromSeq: number;
  toSeq: number;
  firstMsg: number;
  lastMsg: number;
  startTime?: string;
  endTime?: string;
  /** User requests in the segment (first line, shortened). */
  requests: string[];
  /** The agent's last words in the segment (first line, shortened). */
  lastAssistant?: string;
  /** Tool calls by tool name. */
  tools: Record<string, number>;
  /** Signals in the segment by name, with the tool that produced them where known. */
  signals: Partial<Record<Signal, number>>;
  failedTools: string[];
  passedTools: string[];
  /** Subjects of the commits made. */
  commits: string[];
}

const firstLine = (s: string, max = 100) => {
  const line = (s.split('\n').find((l) => l.trim()) ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

const COMMIT_SUBJECT_OUT = /^\[[^\]\s]+(?: \(root-commit\))? [0-9a-f]{7,40}\] (.+)$/m;
const COMMIT_SUBJECT_CMD = /\bcommit\b[^\n]*?\s-[a-zA-Z]*m\s+(?:"([^"]+)"|'([^']+)'|(\S+))/;

/**
 * Builds the evidence from the segment's events (read back from the log), running the detector
 * over them again on scratch state: the same signals, without touching the session's.
 */
export function segmentEvidence(due: CheckpointDue, events: AgentEvent[], cfg: DetectorConfig): SegmentEvidence {
  const scratch = newDetectorState(due.run);
  if (due.firstMsg > 1) scratch.userMessages = 1; // the task prompt is behind us: score what follows
  const detections = new Map<number, Detection>();
  for (const e of events) detections.set(e.seq, detect(scratch, e, cfg));
  const ev: SegmentEvidence = {
    run: due.run,
    trigger: due.trigger,
    fromSeq: due.fromSeq,
    toSeq: due.seq,
    firstMsg: due.firstMsg,
    lastMsg: due.lastMsg,
    requests: [],
    tools: {},
    signals: {},
    failedTools: [],
    passedTools: [],
    commits: [],
  };
  const addOnce = (list: string[], v: string | undefined) => v && !list.includes(v) && list.length < 8 && list.push(v);
  for (const e of events) {
    ev.startTime ??= e.ts;
    ev.endTime = e.ts;
    const d = detections.get(e.seq);
    if (e.type === 'user_message' && d && !d.intervention && e.text && !e.text.startsWith('[Request interrupted')) {
      if (ev.requests.length < 5) ev.requests.push(firstLine(e.text));
    } else if (e.type === 'assistant_message' && e.text?.trim()) ev.lastAssistant = firstLine(e.text, 160);
    else if (e.type === 'tool_use') ev.tools[e.tool] = (ev.tools[e.tool] ?? 0) + 1;
    else if (e.type === 'tool_result' && d?.tool) {
      const t = d.tool;
      if (t.kind && t.tool) addOnce(t.ok ? ev.passedTools : ev.failedTools, `${t.tool} ${t.kind}`);
      if (t.commit) {
        const m = COMMIT_SUBJECT_OUT.exec(e.output ?? '') ?? COMMIT_SUBJECT_CMD.exec(e.command ?? '');
        const subject = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
        if (ev.commits.length < 8) ev.commits.push(subject ? firstLine(subject, 80) : '(commit)');
      }
    }
    for (const s of d?.signals ?? []) ev.signals[s] = (ev.signals[s] ?? 0) + 1;
  }
  return ev;
}
