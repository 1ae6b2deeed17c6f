/**
 * Ingestion into the session event log: the hook file the `orchctl hook` entry point appends to,
 * the agent's transcript (read by its driver's TranscriptReader), and pane-state changes. Each source is read
 * incrementally from the cursor the log itself committed with the last batch, so after a kill -9
 * the controller continues exactly where the log says, without re-adding or skipping a line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { boundPayload } from '../agents/bound.js';
import type { TranscriptReader } from '../agents/driver.js';
import { HOOKS_FILE } from '../agents/hook-entry.js';
import { LOG_START, type EventLog, type NewEvent } from '../store/eventlog.js';

export interface FeedSources {
  run: number;
  workspace: string;
  /**
   * Where the transcript should be (Claude Code: derived from --session-id); the SessionStart
   * hook's transcript_path wins.
   */
  transcript?: string;
  /** The agent driver's transcript reader; without one the transcript is not read. */
  reader?: TranscriptReader;
  /** The pane's current state as classified now (state plus dialog name), if a pane is live. */
  pane?: { state: string; detail?: string };
}

/** Largest slice of a source read in one pass; the rest waits for the next pass. */
const MAX_READ = 4 * 1024 * 1024;

/**
 * Complete lines of `file` after `offset`, within `budget` bytes (at least one line, at most
 * MAX_READ bytes); `end` is the offset after the last.
 */
export function readLines(
  file: string,
  offset: number,
  budget = MAX_READ,
): { lines: string[]; end: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= offset) return { lines: [], end: size < offset ? 0 : offset }; // end 0: the file was replaced
    // The budget's worth first; a line longer than the budget still goes (read again up to MAX_READ).
    let len = Math.min(size - offset, budget, MAX_READ);
    let buf = Buffer.allocUnsafe(len);
    let n = fs.readSync(fd, buf, 0, len, offset);
    let last = buf.lastIndexOf(10, n - 1);
    if (last < 0 && len < Math.min(size - offset, MAX_READ)) {
      len = Math.min(size - offset, MAX_READ);
      buf = Buffer.allocUnsafe(len);
      n = fs.readSync(fd, buf, 0, len, offset);
      last = buf.subarray(0, n).indexOf(10);
    }
    if (last < 0) return { lines: [], end: offset };
    return { lines: buf.toString('utf8', 0, last).split('\n'), end: offset + last + 1 };
  } finally {
    fs.closeSync(fd);
  }
}

export class AgentFeed {
  /** Per log file and run: the transcript normaliser's memory (tool names by id). */
  private readonly transcripts = new Map<string, unknown>();

  /** Appends what is new in every source; returns how many events were added. */
  ingest(log: EventLog, src: FeedSources): number {
    return this.hooks(log, src) + this.transcript(log, src) + this.pane(log, src);
  }

  private hooks(log: EventLog, src: FeedSources): number {
    const name = `hooks@${src.run}`;
    const from = Number(log.cursor(name) ?? 0);
    const r = readLines(path.join(src.workspace, HOOKS_FILE), from, log.appendBudget);
    if (!r || r.end === from) return 0;
    const events: NewEvent[] = [];
    const cursor: Record<string, number | string> = { [name]: r.end };
    for (const line of r.lines) {
      let rec: { t?: number; payload?: Record<string, unknown> };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue; // the hook writes whole lines; anything else is not ours to interpret
      }
      const p = rec.payload;
      if (!p || typeof p !== 'object') continue;
      const hook = typeof p.hook_event_name === 'string' ? p.hook_event_name : 'Unknown';
      if (typeof p.transcript_path === 'string' && path.isAbsolute(p.transcript_path)) {
        const pathKey = `transcript@${src.run}:path`;
        const known = cursor[pathKey] ?? log.cursor(pathKey);
        // /clear starts a new conversation in a new transcript file: read it from its start.
        if (known !== undefined && known !== p.transcript_path) cursor[`transcript@${src.run}`] = 0;
        cursor[pathKey] = p.transcript_path;
      }
      events.push({
        ts: new Date(typeof rec.t === 'number' ? rec.t : Date.now()).toISOString(),
        run: src.run,
        source: 'hook',
        type: 'hook',
        hook,
        payload: boundPayload(p),
      });
    }
    return log.append(events, cursor).length;
  }

  private transcript(log: EventLog, src: FeedSources): number {
    const file = (log.cursor(`transcript@${src.run}:path`) as string | undefined) ?? src.transcript;
    const reader = src.reader;
    if (!file || !reader) return 0;
    const name = `transcript@${src.run}`;
    const from = Number(log.cursor(name) ?? 0);
    const r = readLines(file, from, log.appendBudget);
    if (!r || r.end === from) return 0;
    const st = this.state(log, src.run, reader);
    const events: NewEvent[] = [];
    for (const line of r.lines) {
      if (!line) continue;
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      events.push(...reader.events(obj, src.run, st));
    }
    const counters = Object.fromEntries(Object.entries(reader.counters(st)).map(([k, v]) => [`${name}:${k}`, v]));
    return log.append(events, { [name]: r.end, ...counters }).length;
  }

  private pane(log: EventLog, src: FeedSources): number {
    if (!src.pane) return 0;
    const name = `pane@${src.run}`;
    const value = src.pane.detail ? `${src.pane.state}:${src.pane.detail}` : src.pane.state;
    if (log.cursor(name) === value) return 0;
    return log.append(
      [
        {
          ts: new Date().toISOString(),
          run: src.run,
          source: 'pane',
          type: 'pane_signal',
          state: src.pane.state,
          ...(src.pane.detail ? { detail: src.pane.detail } : {}),
        },
      ],
      { [name]: value },
    ).length;
  }

  /**
   * The reader's state for a run; after a restart its counters come from the log's cursors, tool
   * names from the log.
   */
  private state(log: EventLog, run: number, reader: TranscriptReader): unknown {
    const key = `${log.file}@${run}`;
    if (this.transcripts.has(key)) return this.transcripts.get(key);
    const st = reader.newState();
    const prefix = `transcript@${run}:`;
    const counters: Record<string, number | undefined> = {};
    for (const k of Object.keys(reader.counters(st))) {
      const v = log.cursor(prefix + k);
      counters[k] = v === undefined ? undefined : Number(v);
    }
    const resumed = log.cursor(`transcript@${run}`) !== undefined;
    const toolUses = resumed ? log.read(LOG_START).events.filter((e) => e.type === 'tool_use' && e.run === run) : [];
    reader.restore(st, counters, toolUses);
    this.transcripts.set(key, st);
    return st;
  }

  /** Drops the memory of a run that ended. */
  forget(log: EventLog, run: number): void {
    this.transcripts.delete(`${log.file}@${run}`);
  }
}
