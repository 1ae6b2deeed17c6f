/**
 * The per-session event log (seed 001's event stream): an append-only JSONL file of normalised
 * agent events — user and assistant messages, tool use, tool results with exit status, hook
 * calls, pane signals — that consumers (agent state, the detector, the judge) read from a
 * position they commit together with what they derived from it.
 *
 * Exactly once, across kill -9:
 *  - Producers (the transcript and hook-file ingesters) pass the source cursor with each batch;
 *    the batch's last line carries it (`cur`), so the log itself records how far each source was
 *    read. On open, the cursors are recovered from a checkpoint file plus the lines after it, and
 *    a torn last line (a crash mid-write) is cut off. Nothing is appended twice or skipped.
 *  - Consumers keep a {@link LogPosition} in the same atomic write as their derived state (the
 *    session's status, for instance), and read on from it after a restart.
 *
 * One writer per log: the controller holding the lease. Readers in other processes (the CLI) see
 * whole lines only: a line without its newline is not yet an event.
 */
import fs from 'node:fs';
import path from 'node:path';

import { LOG_START, type LogPosition } from '../api/log-position.js';

// Consumers commit positions in status, so the type is part of the API.
export { LOG_START, type LogPosition };

export type EventSource = 'transcript' | 'hook' | 'pane' | 'controller';

interface Base {
  /** 1-based, dense within one log. */
  seq: number;
  /** When it happened (the source's own time when it has one). */
  ts: string;
  /** The session's run it belongs to. */
  run: number;
  source: EventSource;
  /** Source cursor committed with this event (ingesters only; see the module comment). */
  cur?: Record<string, number | string>;
}

/** A user turn: the task prompt, text sent with `orchctl send`, a breaker intervention, or typed by a person. */
export interface UserMessageEvent extends Base {
  type: 'user_message';
  text: string;
  /** Position among the session's user messages in this run, from 0 (interrupt markers have none). */
  index?: number;
  /** The agent's own marker that the user interrupted it (Esc), not a message a person wrote. */
  interrupt?: boolean;
}

/** Token usage an agent reports with a message. */
export interface EventUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
}

/**
 * What an event says about the model message it came from: one message may span several events
 * (one per content block, each repeating the message's usage), told apart by messageId.
 */
interface MessageFacts {
  /** Token use reported with the message (context window and cost), when the agent reports it. */
  usage?: EventUsage;
  messageId?: string;
  model?: string;
}

export interface AssistantMessageEvent extends Base, MessageFacts {
  type: 'assistant_message';
  text: string;
  index?: number;
  stopReason?: string;
}

export interface ToolUseEvent extends Base, MessageFacts {
  type: 'tool_use';
  tool: string;
  toolUseId?: string;
  /** The command for shell tools (Bash), else a short JSON rendering of the input. */
  command?: string;
  input?: unknown;
}

export interface ToolResultEvent extends Base {
  type: 'tool_result';
  tool?: string;
  toolUseId?: string;
  command?: string;
  isError: boolean;
  /** Exit status when the agent reports one (0 for a successful shell command). */
  exitCode?: number;
  /** stdout/stderr or the error text, bounded. */
  output: string;
  interrupted?: boolean;
}

/**
 * Token use an agent records apart from its messages (Codex's rollout: one token_usage_record per
 * model response, after the response's items), with the response's id as messageId.
 */
export interface UsageEvent extends Base, MessageFacts {
  type: 'usage';
}

/** A hook call from the agent (Claude Code hooks), payload bounded. */
export interface HookEvent extends Base {
  type: 'hook';
  hook: string;
  payload: Record<string, unknown>;
}

/** A change of what the pane shows (idle, busy, waiting, dialog, ...) as the pane classifier saw it. */
export interface PaneSignalEvent extends Base {
  type: 'pane_signal';
  state: string;
  detail?: string;
}

export type AgentEvent =
  | UserMessageEvent
  | AssistantMessageEvent
  | ToolUseEvent
  | ToolResultEvent
  | UsageEvent
  | HookEvent
  | PaneSignalEvent;
export type AgentEventType = AgentEvent['type'];
/** What a producer hands to append(): everything but seq. */
export type NewEvent = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, 'seq'> : never) : never;

interface Checkpoint {
  seq: number;
  offset: number;
  cursors: Record<string, number | string>;
}

export class EventLog {
  private fd = -1;
  private seqNo = 0;
  private size = 0;
  private readonly cursors: Record<string, number | string> = {};
  private sinceCheckpoint = 0;
  private readonly listeners = new Set<() => void>();

  /** Opens (creating) the log at `file`, repairing a torn tail and recovering the source cursors. */
  constructor(readonly file: string) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.open();
  }

  /** Whether the log holds an open file descriptor now (it is let go between runs; see close). */
  get isOpen(): boolean {
    return this.fd >= 0;
  }

  /** The descriptor, opened again (and recovered from the checkpoint close wrote) when let go. */
  private descriptor(): number {
    if (this.fd < 0) this.open();
    return this.fd;
  }

  private open(): void {
    this.fd = fs.openSync(this.file, 'a+', 0o600);
    this.recover();
  }

  private get checkpointFile(): string {
    return `${this.file}.checkpoint`;
  }

  private recover(): void {
    let cp: Checkpoint = { seq: 0, offset: 0, cursors: {} };
    try {
      cp = JSON.parse(fs.readFileSync(this.checkpointFile, 'utf8')) as Checkpoint;
    } catch {
      /* none yet */
    }
    const total = fs.fstatSync(this.fd).size;
    if (cp.offset > total) cp = { seq: 0, offset: 0, cursors: {} }; // the log was replaced: rescan
    Object.assign(this.cursors, cp.cursors);
    this.seqNo = cp.seq;
    let good = cp.offset;
    for (const { event, end } of scan(this.fd, cp.offset, total)) {
      good = end;
      if (!event) continue;
      this.seqNo = event.seq;
      if (event.cur) Object.assign(this.cursors, event.cur);
    }
    if (good < total) fs.ftruncateSync(this.fd, good); // a torn line from a crash mid-append
    this.size = good;
  }

  /** Number of the last event appended. */
  get lastSeq(): number {
    return this.seqNo;
  }

  /** Byte length of the log (the position after the last event). */
  get end(): LogPosition {
    return { seq: this.seqNo, offset: this.size };
  }

  /** How far a producer's source has been taken into the log (undefined: not yet). */
  cursor(name: string): number | string | undefined {
    return this.cursors[name];
  }

  /**
   * Appends events in one write. `cursor` (source name → position in that source) is stored on
   * the last event, so events and the cursor that produced them land together or not at all.
   * A cursor with no events to carry it is kept in memory and in the next checkpoint only.
   */
  append(events: NewEvent[], cursor?: Record<string, number | string>): AgentEvent[] {
    if (!events.length) {
      if (cursor) Object.assign(this.cursors, cursor);
      return [];
    }
    const out: AgentEvent[] = [];
    let text = '';
    events.forEach((e, i) => {
      const ev = { seq: this.seqNo + i + 1, ...e } as AgentEvent;
      if (i === events.length - 1 && cursor) ev.cur = { ...(ev.cur ?? {}), ...cursor };
      out.push(ev);
      text += JSON.stringify(ev) + '\n';
    });
    const buf = Buffer.from(text, 'utf8');
    fs.writeSync(this.descriptor(), buf, 0, buf.length, this.size);
    this.size += buf.length;
    this.seqNo += events.length;
    if (cursor) Object.assign(this.cursors, cursor);
    this.sinceCheckpoint += events.length;
    if (this.sinceCheckpoint >= 256) this.checkpoint();
    for (const l of this.listeners) l();
    return out;
  }

  /** Records where the cursors stand so the next open need not scan the whole log. */
  checkpoint(): void {
    const cp: Checkpoint = { seq: this.seqNo, offset: this.size, cursors: this.cursors };
    const tmp = `${this.checkpointFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, JSON.stringify(cp), { mode: 0o600 });
      fs.renameSync(tmp, this.checkpointFile);
      this.sinceCheckpoint = 0;
    } catch {
      /* a checkpoint only saves work on the next open */
    }
  }

  /** Events after `from`, at most `max`; `next` is the position to read on from. */
  read(from: LogPosition = LOG_START, max = Infinity): { events: AgentEvent[]; next: LogPosition } {
    return readLog(this.descriptor(), from, max, this.size);
  }

  /** Called after every append (the controller uses it to wake the consumers). */
  onAppend(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Lets the descriptor go, after a checkpoint. The log stays usable: the next append or read opens
   * it again, from that checkpoint (nothing to scan). Ended runs are let go so that a controller
   * holds a descriptor per running session, not per session that ever ran.
   */
  close(): void {
    if (this.fd < 0) return;
    this.checkpoint();
    try {
      fs.closeSync(this.fd);
    } catch {
      /* already closed */
    }
    this.fd = -1;
  }
}

/** Reads events after `from` from a log file (for readers in other processes, e.g. the CLI). */
export function readEventLog(
  file: string,
  from: LogPosition = LOG_START,
  max = Infinity,
): { events: AgentEvent[]; next: LogPosition } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { events: [], next: from };
  }
  try {
    return readLog(fd, from, max, fs.fstatSync(fd).size);
  } finally {
    fs.closeSync(fd);
  }
}

function readLog(
  fd: number,
  from: LogPosition,
  max: number,
  size: number,
): { events: AgentEvent[]; next: LogPosition } {
  const events: AgentEvent[] = [];
  let next = from;
  if (max <= 0) return { events, next };
  for (const { event, end } of scan(fd, from.offset, size)) {
    if (!event) {
      next = { seq: next.seq, offset: end };
      continue;
    }
    events.push(event);
    next = { seq: event.seq, offset: end };
    if (events.length >= max) break;
  }
  return { events, next };
}

/**
 * Whole lines between two offsets (a last line without its newline is not yet written). A line
 * that does not parse — only possible if someone edited the file — is passed over as undefined.
 */
function* scan(fd: number, start: number, stop: number): Generator<{ event: AgentEvent | undefined; end: number }> {
  const chunk = Buffer.allocUnsafe(1 << 20);
  let pos = start;
  let carry = Buffer.alloc(0);
  let carryStart = start;
  while (pos < stop) {
    const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, stop - pos), pos);
    if (n <= 0) break;
    pos += n;
    const data = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    let lineStart = 0;
    for (;;) {
      const nl = data.indexOf(10, lineStart);
      if (nl < 0) break;
      let event: AgentEvent | undefined;
      try {
        event = JSON.parse(data.toString('utf8', lineStart, nl)) as AgentEvent;
      } catch {
        event = undefined;
      }
      yield { event, end: carryStart + nl + 1 };
      lineStart = nl + 1;
    }
    carry = Buffer.from(data.subarray(lineStart));
    carryStart += lineStart;
  }
}

/** The log of one session: $ORCHCTL_HOME/sessions/<ns>/<name>/events.jsonl (shared by its runs). */
export function eventLogPath(home: string, namespace: string, name: string): string {
  return path.join(home, 'sessions', namespace, name, 'events.jsonl');
}

/** One open log per session, shared by the reconcilers of one controller process. */
export class EventLogs {
  private readonly open = new Map<string, EventLog>();
  private readonly appendListeners = new Set<(key: string) => void>();

  constructor(private readonly home: string) {}

  /** The log of session `namespace/name` (opened on first use). */
  get(namespace: string, name: string): EventLog {
    const key = `${namespace}/${name}`;
    let log = this.open.get(key);
    if (!log) {
      log = new EventLog(eventLogPath(this.home, namespace, name));
      log.onAppend(() => {
        for (const l of this.appendListeners) l(key);
      });
      this.open.set(key, log);
    }
    return log;
  }

  /** `fn(sessionKey)` after each append to any log. */
  onAppend(fn: (key: string) => void): void {
    this.appendListeners.add(fn);
  }

  /**
   * Lets the descriptor of a session's log go (its run ended; nothing appends until the next one,
   * which opens it again). Without this every finished session kept one: hundreds in a soak.
   */
  release(namespace: string, name: string): void {
    this.open.get(`${namespace}/${name}`)?.close();
  }

  /** How many logs hold a descriptor now. */
  get openCount(): number {
    let n = 0;
    for (const l of this.open.values()) if (l.isOpen) n++;
    return n;
  }

  /** Closes a session's log and drops it (when the object is deleted). */
  forget(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    this.open.get(key)?.close();
    this.open.delete(key);
  }

  closeAll(): void {
    for (const l of this.open.values()) l.close();
    this.open.clear();
  }
}
