/** Ingestion of hook files and transcripts into the event log: incremental, exactly once across a crash. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentFeed, readLines } from '../../../controller/observers/agent-feed.js';
import { EventLog, readEventLog } from '../../../controller/store/eventlog.js';
import { fixturesDir } from '../../support/claude-code.js';
import { claudeCodeDriver } from '../../../controller/agents/claude-code.js';

const reader = claudeCodeDriver.transcript;

let dir: string;
let ws: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-feed-'));
  ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const hookLine = (p: Record<string, unknown>, t = 1_795_000_000_000) => JSON.stringify({ t, payload: p }) + '\n';

describe('AgentFeed', () => {
  it('ingests hook lines once, ignoring a line still being written', () => {
    const log = new EventLog(path.join(dir, 'events.jsonl'));
    const feed = new AgentFeed();
    const hooks = path.join(ws, 'hooks.jsonl');
    fs.writeFileSync(
      hooks,
      hookLine({ hook_event_name: 'SessionStart', transcript_path: '/x/t.jsonl' }) + '{"t":1,"payl',
    );
    expect(feed.ingest(log, { run: 1, workspace: ws })).toBe(1);
    expect(feed.ingest(log, { run: 1, workspace: ws })).toBe(0);
    fs.appendFileSync(hooks, 'oad":{"hook_event_name":"Stop"}}\n');
    expect(feed.ingest(log, { run: 1, workspace: ws })).toBe(1);
    const events = readEventLog(log.file).events;
    expect(events.map((e) => (e.type === 'hook' ? e.hook : e.type))).toEqual(['SessionStart', 'Stop']);
    expect(log.cursor('transcript@1:path')).toBe('/x/t.jsonl');
    log.close();
  });

  it('ingests a transcript incrementally; after a crash it continues from the logged cursor without duplicates', () => {
    const src = fs.readFileSync(path.join(fixturesDir(), 'transcript.jsonl'), 'utf8');
    const transcript = path.join(dir, 't.jsonl');
    const cut = src.indexOf('\n', Math.floor(src.length / 2)) + 1;
    fs.writeFileSync(transcript, src.slice(0, cut));
    const file = path.join(dir, 'events.jsonl');
    const log = new EventLog(file);
    new AgentFeed().ingest(log, { run: 1, workspace: ws, transcript, reader });
    const firstHalf = log.lastSeq;
    expect(firstHalf).toBeGreaterThan(0);
    // kill -9: the log is not closed; a new process opens it and a new feed has no memory.
    fs.writeFileSync(transcript, src);
    const again = new EventLog(file);
    new AgentFeed().ingest(again, { run: 1, workspace: ws, transcript, reader });
    const all = readEventLog(file).events;
    // The same transcript ingested in one go gives the same events.
    const oneGo = new EventLog(path.join(dir, 'one.jsonl'));
    new AgentFeed().ingest(oneGo, { run: 1, workspace: ws, transcript, reader });
    const strip = (e: object) => {
      const { seq: _s, cur: _c, ...rest } = e as Record<string, unknown>;
      return rest;
    };
    expect(all.map(strip)).toEqual(readEventLog(oneGo.file).events.map(strip));
    // tool names survive the restart (recovered from the log)
    const failed = all.find((e) => e.type === 'tool_result' && e.isError);
    expect(failed).toMatchObject({ tool: 'Bash', command: 'ls /nonexistent-orchctl-spike', exitCode: 2 });
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    again.close();
    oneGo.close();
  });

  it('records pane changes, not every reading', () => {
    const log = new EventLog(path.join(dir, 'events.jsonl'));
    const feed = new AgentFeed();
    feed.ingest(log, { run: 1, workspace: ws, pane: { state: 'dialog', detail: 'workspace-trust' } });
    feed.ingest(log, { run: 1, workspace: ws, pane: { state: 'dialog', detail: 'workspace-trust' } });
    feed.ingest(log, { run: 1, workspace: ws, pane: { state: 'idle' } });
    const states = readEventLog(log.file).events.map((e) =>
      e.type === 'pane_signal' ? `${e.state}${e.detail ? `:${e.detail}` : ''}` : '',
    );
    expect(states).toEqual(['dialog:workspace-trust', 'idle']);
    log.close();
  });
});

describe('reading a source within a budget (a bounded log takes a backlog in slices)', () => {
  it('takes whole lines up to the budget, and a line longer than the budget whole', () => {
    const file = path.join(dir, 'source.jsonl');
    const line = (c: string, n: number) => `${c.repeat(n)}\n`;
    fs.writeFileSync(file, line('a', 99) + line('b', 99) + line('c', 99) + line('d', 999) + line('e', 9));
    expect(readLines(file, 0, 250)).toEqual({ lines: ['a'.repeat(99), 'b'.repeat(99)], end: 200 });
    expect(readLines(file, 200, 250)).toEqual({ lines: ['c'.repeat(99)], end: 300 });
    expect(readLines(file, 300, 250)).toEqual({ lines: ['d'.repeat(999)], end: 1300 });
    expect(readLines(file, 1300, 250)).toEqual({ lines: ['e'.repeat(9)], end: 1310 });
  });

  it('a feed into a bounded log takes at most a quarter of its limit of a source per pass', () => {
    const log = new EventLog(path.join(dir, 'events.jsonl'), { maxBytes: 1 << 20 });
    const hooks = path.join(ws, 'hooks.jsonl');
    const rec = (i: number) =>
      `${JSON.stringify({ t: 1, payload: { hook_event_name: 'Tick', i, pad: 'x'.repeat(900) } })}\n`;
    fs.writeFileSync(hooks, Array.from({ length: 1000 }, (_, i) => rec(i)).join(''));
    const feed = new AgentFeed();
    const first = feed.ingest(log, { run: 1, workspace: ws });
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1000);
    expect(Number(log.cursor('hooks@1'))).toBeLessThanOrEqual(log.appendBudget);
    let passes = 1;
    while (feed.ingest(log, { run: 1, workspace: ws }) > 0) passes++;
    expect(passes).toBeGreaterThanOrEqual(4);
    // Every line once and in order (the log was cut meanwhile: its newest events are kept).
    const seen = readEventLog(log.file).events.map((e) => (e.type === 'hook' ? (e.payload.i as number) : -1));
    expect(seen).toEqual(seen.map((_, k) => 1000 - seen.length + k));
    log.close();
  });
});
