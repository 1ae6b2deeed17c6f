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
 *
 * Bounded (docs/store.md, "Retention"): positions are logical byte offsets that never move. A log
 * grown past its limit is cut to its newest half (and what its consumer has not read) in one atomic
 * rename: the new file's first line is a header `{"base","seq","cur"}` (the logical offset of the
 * first kept event, the seq before it, the source cursors; no event line has "base"), the kept lines
 * follow unchanged. Readers map
 * logical to physical offsets through the header (a file without one has base 0); a read from
 * below the base starts at the base (those events are gone, by retention). The header makes the
 * file complete on its own, so a kill -9 at any step recovers: before the rename the old file
 * stands; after it, a checkpoint from before the cut is either still valid (logical offsets) or
 * below the base and passed over for the header.
 */
import fs from 'node:fs';
import path from 'node:path';

import { LOG_START, type LogPosition } from '../api/log-position.js';
import { DEFAULT_RETENTION } from '../api/retention.js';

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
  /** Logical. */
  offset: number;
  cursors: Record<string, number | string>;
}

/** A compacted log's first line (see the module comment), and its length in the file. */
interface Head {
  base: number;
  seq: number;
  cur: Record<string, number | string>;
  len: number;
}

const NO_HEAD: Head = { base: 0, seq: 0, cur: {}, len: 0 };
const HEAD_PREFIX = Buffer.from('{"base":');

/** The header of the log open at `fd`, or NO_HEAD for a log that was never compacted. */
function readHead(fd: number, size: number): Head {
  const probe = Buffer.alloc(Math.min(size, HEAD_PREFIX.length));
  fs.readSync(fd, probe, 0, probe.length, 0);
  if (!probe.equals(HEAD_PREFIX)) return NO_HEAD;
  for (const { event, end } of scan(fd, 0, size)) {
    const h = event as unknown as Partial<Head> | undefined;
    if (!h || typeof h.base !== 'number' || typeof h.seq !== 'number') return NO_HEAD;
    return { base: h.base, seq: h.seq, cur: h.cur ?? {}, len: end };
  }
  return NO_HEAD; // no whole first line: not a header the writer made (it writes one whole, then renames)
}

/** Logical minus physical offset. */
const shiftOf = (h: Head) => h.base - h.len;

export interface EventLogOptions {
  /** Cut the log to its newest half once it is larger than this (bytes); unset: never. */
  maxBytes?: number;
}

export class EventLog {
  private fd = -1;
  private seqNo = 0;
  /** Physical length of the file. */
  private size = 0;
  private head: Head = NO_HEAD;
  /** Compaction is tried again only past this size after a failed or too small attempt. */
  private retryAt = 0;
  /** The position the agent-state consumer committed (logical), which a cut keeps if it can. */
  private floor: number | undefined;
  private readonly cursors: Record<string, number | string> = {};
  private sinceCheckpoint = 0;
  /** What a reopen would recover differs from the checkpoint on disk: a checkpoint would save work. */
  private unsaved = false;
  /** No file at the path when last looked: this writer makes it, so reads need not ask the disk again. */
  private absent = false;
  private readonly listeners = new Set<() => void>();

  /**
   * Opens the log at `file`, repairing a torn tail and recovering the source cursors. A log that does
   * not exist yet is made by its first append, not here: a session whose agent never reports costs no
   * file (in a launch burst, each file made was kernel time on the controller's thread).
   */
  constructor(
    readonly file: string,
    private readonly opts: EventLogOptions = {},
  ) {
    fs.rmSync(this.compactFile, { force: true }); // a cut a crash interrupted before its rename
    if (!this.open(false)) this.recover();
  }

  /** Whether the log holds an open file descriptor now (it is let go between runs; see close). */
  get isOpen(): boolean {
    return this.fd >= 0;
  }

  /** The descriptor, opened again (and recovered from the checkpoint close wrote) when let go. */
  private descriptor(): number {
    if (this.fd < 0) this.open(true);
    return this.fd;
  }

  /** Opens the file and recovers from it; one that does not exist is made (and its directory) only if `create`. */
  private open(create: boolean): boolean {
    try {
      this.fd = fs.openSync(this.file, fs.constants.O_RDWR | fs.constants.O_APPEND);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      if (!create) {
        this.absent = true;
        return false;
      }
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      this.fd = fs.openSync(this.file, 'a+', 0o600);
    }
    this.absent = false;
    this.recover();
    return true;
  }

  private get checkpointFile(): string {
    return `${this.file}.checkpoint`;
  }

  private get compactFile(): string {
    return `${this.file}.compact.tmp`;
  }

  /** From the open file, or (no descriptor) as the empty log a file not made yet is. */
  private recover(): void {
    const total = this.fd >= 0 ? fs.fstatSync(this.fd).size : 0;
    this.head = total ? readHead(this.fd, total) : NO_HEAD;
    const shift = shiftOf(this.head);
    let cp: Checkpoint = { seq: this.head.seq, offset: this.head.base, cursors: this.head.cur };
    let stale = false;
    try {
      const saved = JSON.parse(fs.readFileSync(this.checkpointFile, 'utf8')) as Checkpoint;
      // Past the end: the log was replaced; below the base: taken before a cut. Either way, rescan.
      if (saved.offset >= this.head.base && saved.offset <= total + shift) cp = saved;
      else stale = true;
    } catch {
      /* none yet */
    }
    Object.assign(this.cursors, cp.cursors);
    this.seqNo = cp.seq;
    let good = cp.offset - shift;
    for (const { event, end } of scan(this.fd, good, total)) {
      good = end;
      if (!event) continue;
      this.seqNo = event.seq;
      if (event.cur) Object.assign(this.cursors, event.cur);
    }
    if (good < total) fs.ftruncateSync(this.fd, good); // a torn line from a crash mid-append
    // Lines scanned past the checkpoint (one at close saves the next open that scan), or one to replace.
    this.unsaved = stale || good !== cp.offset - shift;
    this.size = good;
  }

  /** Number of the last event appended. */
  get lastSeq(): number {
    return this.seqNo;
  }

  /** The position after the last event (a logical offset: what was cut still counts). */
  get end(): LogPosition {
    return { seq: this.seqNo, offset: this.size + shiftOf(this.head) };
  }

  /**
   * Source bytes a producer should take in one pass: a quarter of the limit, so that a backlog
   * (after a restart) comes in in slices its consumer reads between, never a batch a cut would have
   * to drop unread (compactIfOver keeps at most twice the limit).
   */
  get appendBudget(): number {
    return this.opts.maxBytes ? Math.max(1 << 16, Math.floor(this.opts.maxBytes / 4)) : Number.POSITIVE_INFINITY;
  }

  /** Logical offset of the oldest event still in the log (0 until a cut). */
  get base(): number {
    return this.head.base;
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
      if (cursor && Object.entries(cursor).some(([k, v]) => this.cursors[k] !== v)) {
        Object.assign(this.cursors, cursor);
        this.unsaved = true;
      }
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
    this.unsaved = true;
    this.sinceCheckpoint += events.length;
    if (this.sinceCheckpoint >= 256) this.checkpoint();
    this.compactIfOver();
    for (const l of this.listeners) l();
    return out;
  }

  /** Records where the cursors stand so the next open need not scan the whole log. */
  checkpoint(): void {
    const cp: Checkpoint = { seq: this.seqNo, offset: this.end.offset, cursors: this.cursors };
    const tmp = `${this.checkpointFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, JSON.stringify(cp), { mode: 0o600 });
      fs.renameSync(tmp, this.checkpointFile);
      this.sinceCheckpoint = 0;
      this.unsaved = false;
    } catch {
      /* a checkpoint only saves work on the next open */
    }
  }

  /** Events after `from`, at most `max`; `next` is the position to read on from. */
  read(from: LogPosition = LOG_START, max = Infinity): { events: AgentEvent[]; next: LogPosition } {
    if (this.fd < 0 && (this.absent || !this.open(false))) return { events: [], next: from }; // not made yet
    return readLog(this.fd, from, max, this.size, this.head);
  }

  /**
   * Past its limit, the log keeps its newest half: the lines from the first that starts at or
   * after size - max/2 go to a new file behind a header, fsynced, renamed over the log. Positions
   * do not move (logical offsets). The events after the retained position stay too, as long as the
   * file stays within twice the limit: a consumer catching up on a backlog (a restart) loses none,
   * one more than that behind finds its oldest events gone. A cut frees at least a quarter of the
   * limit or waits until it can, so each byte is copied at most a few times.
   */
  private compactIfOver(): void {
    const max = this.opts.maxBytes;
    if (!max || this.size <= max || this.size < this.retryAt) return;
    const shift = shiftOf(this.head);
    let from = this.size - Math.floor(max / 2);
    if (this.floor !== undefined) from = Math.max(Math.min(from, this.floor - shift), this.size - 2 * max);
    const keep = lineAfter(this.fd, Math.max(this.head.len, from), this.size);
    if (keep - this.head.len < max / 4) {
      this.retryAt = this.size + Math.floor(max / 4); // too little to free now
      return;
    }
    let seqBefore = this.seqNo;
    for (const { event } of scan(this.fd, keep, this.size))
      if (event) {
        seqBefore = event.seq - 1;
        pruneCursors(this.cursors, event.run - 1);
        break;
      }
    const head = { base: keep + shift, seq: seqBefore, cur: this.cursors };
    try {
      writeCompacted(this.fd, this.compactFile, JSON.stringify(head) + '\n', keep, this.size);
      fs.renameSync(this.compactFile, this.file);
      fsyncDir(path.dirname(this.file));
    } catch {
      fs.rmSync(this.compactFile, { force: true });
      this.retryAt = this.size + Math.floor(max / 2);
      return;
    }
    this.retryAt = 0;
    this.checkpoint(); // same logical end: valid for the old file and the new one
    fs.closeSync(this.fd);
    this.open(true);
  }

  /**
   * Tells the log where its consumer stands (the position it committed in status), before the
   * producers append: a cut then keeps the events after it, up to twice the limit (compactIfOver).
   */
  retain(pos: LogPosition): void {
    this.floor = pos.offset;
  }

  /** Called after every append (the controller uses it to wake the consumers). */
  onAppend(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Lets the descriptor go, after a checkpoint when one would save work (none for a log that holds
   * nothing new since the last: a missing checkpoint means "from the start of the log"). The log stays
   * usable: the next append or read opens it again, from that checkpoint (nothing to scan). Ended runs
   * are let go so that a controller holds a descriptor per running session, not per session that ever ran.
   */
  close(): void {
    if (this.unsaved) this.checkpoint();
    if (this.fd < 0) return;
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
    const size = fs.fstatSync(fd).size;
    return readLog(fd, from, max, size, readHead(fd, size));
  } finally {
    fs.closeSync(fd);
  }
}

/** The logical offset after the last whole line of a log file (undefined: no log). */
export function eventLogEnd(file: string): number | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    return size + shiftOf(readHead(fd, size));
  } finally {
    fs.closeSync(fd);
  }
}

function readLog(
  fd: number,
  from: LogPosition,
  max: number,
  size: number,
  head: Head,
): { events: AgentEvent[]; next: LogPosition } {
  const events: AgentEvent[] = [];
  // Below the base: what was there is gone (retention); read on from the oldest event kept.
  if (from.offset < head.base) from = { seq: head.seq, offset: head.base };
  let next = from;
  if (max <= 0) return { events, next };
  const shift = shiftOf(head);
  for (const { event, end } of scan(fd, from.offset - shift, size)) {
    if (!event) {
      next = { seq: next.seq, offset: end + shift };
      continue;
    }
    events.push(event);
    next = { seq: event.seq, offset: end + shift };
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

/**
 * Drops the cursors of runs before `oldest` (keys `source@run` and `source@run:detail`): only the
 * current run is fed, and after a cut it has events at or after the first kept one, so a run two
 * before that is over. Without this the cursors, in the header and the checkpoint, grow with runs.
 */
function pruneCursors(cursors: Record<string, number | string>, oldest: number): void {
  for (const k of Object.keys(cursors)) {
    const run = /@(\d+)(?::|$)/.exec(k)?.[1];
    if (run !== undefined && Number(run) < oldest) delete cursors[k];
  }
}

/** The physical offset of the first line that starts at or after `at` (`stop` if none does). */
function lineAfter(fd: number, at: number, stop: number): number {
  if (at <= 0) return 0;
  const chunk = Buffer.allocUnsafe(1 << 16);
  for (let pos = at - 1; pos < stop; ) {
    const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, stop - pos), pos);
    if (n <= 0) break;
    const nl = chunk.subarray(0, n).indexOf(10);
    if (nl >= 0) return pos + nl + 1;
    pos += n;
  }
  return stop;
}

/** Writes `header` and the bytes [from, to) of `fd` to `tmp`, fsynced (a crash leaves it whole or unused). */
function writeCompacted(fd: number, tmp: string, header: string, from: number, to: number): void {
  const out = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(out, header);
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let pos = from; pos < to; ) {
      const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, to - pos), pos);
      if (n <= 0) throw new Error(`${tmp}: the log ended at ${pos}, before ${to}`);
      fs.writeSync(out, chunk, 0, n);
      pos += n;
    }
    fs.fsyncSync(out);
  } finally {
    fs.closeSync(out);
  }
}

/** Makes a rename in `dir` durable (best effort: not every filesystem lets a directory be fsynced). */
function fsyncDir(dir: string): void {
  try {
    const d = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(d);
    } finally {
      fs.closeSync(d);
    }
  } catch {
    /* durability only */
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

  constructor(
    private readonly home: string,
    private readonly opts: EventLogOptions = { maxBytes: DEFAULT_RETENTION.eventLogMaxBytes },
  ) {}

  /** The log of session `namespace/name` (opened on first use). */
  get(namespace: string, name: string): EventLog {
    const key = `${namespace}/${name}`;
    let log = this.open.get(key);
    if (!log) {
      log = new EventLog(eventLogPath(this.home, namespace, name), this.opts);
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
