import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog, EventLogs, LOG_START, readEventLog, type NewEvent } from '../../../controller/store/eventlog.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-eventlog-'));
  file = path.join(dir, 'events.jsonl');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const hook = (i: number): NewEvent => ({
  ts: new Date(1_700_000_000_000 + i).toISOString(),
  run: 1,
  source: 'hook',
  type: 'hook',
  hook: 'Tick',
  payload: { i },
});

describe('EventLog', () => {
  it('numbers events densely and reads them from a position in pages', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2), hook(3)]);
    log.append([hook(4)]);
    expect(log.lastSeq).toBe(4);
    const first = log.read(LOG_START, 2);
    expect(first.events.map((e) => e.seq)).toEqual([1, 2]);
    const rest = log.read(first.next);
    expect(rest.events.map((e) => e.seq)).toEqual([3, 4]);
    expect(rest.next).toEqual(log.end);
    expect(log.read(log.end).events).toEqual([]);
    log.close();
  });

  it('keeps a source cursor with the batch that advanced it and recovers it on open', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2)], { 'hooks@1': 120 });
    log.append([hook(3)], { 'hooks@1': 180, 'pane@1': 'idle' });
    log.append([], { 'hooks@1': 999 }); // no event carries it: memory only
    expect(log.cursor('hooks@1')).toBe(999);
    // kill -9: no close(), no checkpoint
    const again = new EventLog(file);
    expect(again.lastSeq).toBe(3);
    expect(again.cursor('hooks@1')).toBe(180);
    expect(again.cursor('pane@1')).toBe('idle');
    again.close();
  });

  it('cuts a torn last line (a crash mid-append) and continues the numbering after the last whole event', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2)], { 'hooks@1': 50 });
    fs.appendFileSync(file, '{"seq":3,"ts":"2026-01-01T00:00:00Z","run":1,"sou');
    const again = new EventLog(file);
    expect(again.lastSeq).toBe(2);
    expect(again.cursor('hooks@1')).toBe(50);
    again.append([hook(3)]);
    const all = readEventLog(file).events;
    expect(all.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(all.every((e) => e.type === 'hook')).toBe(true);
    again.close();
  });

  it('recovers from its checkpoint plus the lines written after it', () => {
    const log = new EventLog(file);
    log.append([hook(1)], { 'hooks@1': 10 });
    log.checkpoint();
    log.append([hook(2)], { 'hooks@1': 20 });
    const again = new EventLog(file);
    expect(again.lastSeq).toBe(2);
    expect(again.cursor('hooks@1')).toBe(20);
    again.close();
  });

  it('rescans when the checkpoint points past the end of the file (the log was replaced)', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2), hook(3)], { 'hooks@1': 30 });
    log.close(); // writes a checkpoint at the end
    fs.writeFileSync(file, JSON.stringify({ seq: 1, ...hook(1), cur: { 'hooks@1': 7 } }) + '\n');
    const again = new EventLog(file);
    expect(again.lastSeq).toBe(1);
    expect(again.cursor('hooks@1')).toBe(7);
    again.close();
  });

  it('gives readers in other processes whole lines only', () => {
    const log = new EventLog(file);
    log.append([hook(1)]);
    fs.appendFileSync(file, '{"seq":2,"partial'); // what another process may see mid-write
    const r = readEventLog(file);
    expect(r.events.map((e) => e.seq)).toEqual([1]);
    expect(r.next.offset).toBe(fs.readFileSync(file, 'utf8').indexOf('\n') + 1);
    log.close();
  });

  it('passes over a line someone broke by hand instead of stopping there', () => {
    const log = new EventLog(file);
    log.append([hook(1)]);
    fs.appendFileSync(file, 'not json\n');
    const again = new EventLog(file);
    again.append([hook(2)]);
    expect(readEventLog(file).events.map((e) => e.seq)).toEqual([1, 2]);
    again.close();
  });

  it('tells listeners about appends', () => {
    const log = new EventLog(file);
    let n = 0;
    log.onAppend(() => n++);
    log.append([hook(1)]);
    log.append([]);
    expect(n).toBe(1);
    log.close();
  });

  it('lets its descriptor go on close and opens again, where it was, on the next append or read', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2)], { transcript: 7 });
    const fdsOpen = fs.readdirSync('/proc/self/fd').length;
    log.close();
    expect(log.isOpen).toBe(false);
    expect(fs.readdirSync('/proc/self/fd').length).toBe(fdsOpen - 1);
    expect(log.end).toEqual({ seq: 2, offset: fs.statSync(file).size });
    log.append([hook(3)]);
    expect(log.isOpen).toBe(true);
    expect(log.cursor('transcript')).toBe(7);
    expect(log.read(LOG_START).events.map((e) => e.seq)).toEqual([1, 2, 3]);
    log.close();
    log.close(); // twice is harmless
    expect(log.read(LOG_START).events.map((e) => e.seq)).toEqual([1, 2, 3]);
    log.close();
  });
});

describe('EventLog files made only when there is something to keep', () => {
  it('a log nothing was appended to makes no file, reads as empty; its first append makes it and its folder', () => {
    const deep = path.join(dir, 'sessions', 'default', 's', 'events.jsonl');
    const log = new EventLog(deep);
    expect(log.end).toEqual(LOG_START);
    expect(log.read(LOG_START)).toEqual({ events: [], next: LOG_START });
    log.close();
    expect(fs.existsSync(path.join(dir, 'sessions'))).toBe(false);
    expect(log.append([hook(1)]).map((e) => e.seq)).toEqual([1]);
    expect(readEventLog(deep).events.map((e) => e.seq)).toEqual([1]);
    log.close();
    expect(new EventLog(deep).lastSeq).toBe(1);
  });

  it('close writes no checkpoint when nothing changed since the last one; a missing one means the start', () => {
    const log = new EventLog(file);
    log.append([hook(1), hook(2)], { 'hooks@1': 20 });
    log.close();
    const cp = `${file}.checkpoint`;
    const written = fs.statSync(cp).mtimeMs;
    fs.utimesSync(cp, 0, 0);
    const again = new EventLog(file);
    again.read(LOG_START);
    again.close(); // nothing new: the checkpoint stays as it was
    expect(fs.statSync(cp).mtimeMs).toBe(0);
    expect(written).toBeGreaterThan(0);
    fs.rmSync(cp);
    const fromStart = new EventLog(file); // no checkpoint: recovered by reading the log from its start
    expect(fromStart.lastSeq).toBe(2);
    expect(fromStart.cursor('hooks@1')).toBe(20);
    fromStart.close(); // it scanned: a checkpoint now saves the next open that scan
    expect(JSON.parse(fs.readFileSync(cp, 'utf8'))).toMatchObject({ seq: 2, cursors: { 'hooks@1': 20 } });
  });

  it('a cursor moved with no event is kept by close, in a checkpoint at the start, even with no log file', () => {
    const log = new EventLog(file);
    log.append([], { 'transcript@1': 512 });
    log.close();
    expect(fs.existsSync(file)).toBe(false);
    expect(new EventLog(file).cursor('transcript@1')).toBe(512);
  });
});

describe('EventLogs', () => {
  it('holds a descriptor only for logs in use: release lets one go, the next use opens it again', () => {
    const home = path.join(dir, 'home');
    const logs = new EventLogs(home);
    let woken = 0;
    logs.onAppend(() => woken++);
    for (let i = 0; i < 5; i++) logs.get('default', `s-${i}`).append([hook(i)]);
    expect(logs.openCount).toBe(5);
    for (let i = 0; i < 4; i++) logs.release('default', `s-${i}`);
    expect(logs.openCount).toBe(1);
    // The same object, still wired to the listeners, numbering on.
    const again = logs.get('default', 's-0');
    expect(again.append([hook(9)]).map((e) => e.seq)).toEqual([2]);
    expect(woken).toBe(6);
    expect(logs.openCount).toBe(2);
    logs.forget('default', 's-0');
    expect(logs.openCount).toBe(1);
    logs.closeAll();
    expect(logs.openCount).toBe(0);
  });
});

describe('EventLog past its size limit (retention)', () => {
  const MAX = 4096;
  /** A run's event with a payload of about `bytes`. */
  const sized = (i: number, run: number, bytes = 100): NewEvent =>
    ({
      ...hook(i),
      run,
      payload: { i, pad: 'x'.repeat(bytes) },
    }) as NewEvent;
  const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('keeps committed positions valid: a consumer reads on from its position with exactly the events after it', () => {
    const log = new EventLog(file, { maxBytes: MAX });
    for (let i = 1; i <= 20; i++) log.append([sized(i, 1)]);
    const committed = log.end; // what a consumer wrote to status before the cut
    for (let i = 21; i <= 24; i++) log.append([sized(i, 1)]);
    expect(log.base).toBeGreaterThan(0); // a cut happened...
    expect(log.base).toBeLessThan(committed.offset); // ...that kept what the consumer had not read
    expect(fs.statSync(file).size).toBeLessThan(committed.offset);
    expect(fs.readFileSync(file, 'utf8').startsWith('{"base":')).toBe(true);
    for (const r of [log.read(committed), readEventLog(file, committed)]) {
      expect(seqs(r.events)).toEqual([21, 22, 23, 24]);
      expect(r.next).toEqual(log.end);
    }
    // A position taken after the cut reads on the same way.
    const later = log.end;
    log.append([sized(25, 1)]);
    expect(seqs(readEventLog(file, later).events)).toEqual([25]);
    log.close();
  });

  it('reads from below the base start at the oldest event kept', () => {
    const log = new EventLog(file, { maxBytes: MAX });
    for (let i = 1; i <= 60; i++) log.append([sized(i, 1)]);
    const all = readEventLog(file, LOG_START);
    const first = all.events[0]!.seq;
    expect(first).toBeGreaterThan(1); // the oldest ones went by retention
    expect(seqs(all.events)).toEqual(range(first, 60));
    expect(all.next).toEqual(log.end);
    expect(seqs(log.read({ seq: 3, offset: 300 }).events)).toEqual(range(first, 60));
    // With nothing after the base, the position comes to the base and the seq before it.
    expect(log.read({ seq: 1, offset: 10 }, 0).next).toEqual({ seq: first - 1, offset: log.base });
    log.close();
  });

  it('a cut killed before its rename (temp file left) recovers: the old log stands, nothing lost or doubled', () => {
    const log = new EventLog(file);
    for (let i = 1; i <= 60; i++) log.append([sized(i, 1)], { 'hooks@1': i * 10 });
    log.close();
    const before = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(`${file}.compact.tmp`, '{"base":3000,"seq":30,"cur":{"hooks@1":3'); // torn mid-write
    const again = new EventLog(file, { maxBytes: 1 << 20 });
    expect(fs.existsSync(`${file}.compact.tmp`)).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(again.lastSeq).toBe(60);
    expect(again.cursor('hooks@1')).toBe(600);
    again.append([sized(61, 1)]);
    expect(seqs(readEventLog(file).events)).toEqual(range(1, 61));
    again.close();
  });

  it('a cut killed after its rename, before the checkpoint, recovers from the header: nothing lost or doubled', () => {
    const cpFile = `${file}.checkpoint`;
    const log = new EventLog(file, { maxBytes: MAX });
    // The hook cursor moves only with the early events: after the cut it is known from the header alone.
    log.append([sized(1, 1)], { 'hooks@1': 77 });
    log.checkpoint();
    const stale = fs.readFileSync(cpFile, 'utf8'); // taken before the cut, below its base
    for (let i = 2; i <= 60; i++) log.append([sized(i, 1)], { 'transcript@1': i });
    expect(log.base).toBeGreaterThan(JSON.parse(stale).offset);
    const end = log.end;
    // kill -9 right after the rename: the checkpoint is the old one (or none at all).
    for (const cp of [stale, undefined]) {
      if (cp === undefined) fs.rmSync(cpFile);
      else fs.writeFileSync(cpFile, cp);
      const again = new EventLog(file, { maxBytes: MAX });
      expect(again.end).toEqual(end);
      expect(again.cursor('hooks@1')).toBe(77);
      expect(again.cursor('transcript@1')).toBe(60);
      again.close();
    }
    const again = new EventLog(file, { maxBytes: MAX });
    again.append([sized(61, 1)]);
    const all = seqs(readEventLog(file).events);
    expect(all).toEqual(range(all[0]!, 61));
    again.close();
  });

  it('stays under the limit plus one run across many runs, every kept event readable in order', () => {
    const log = new EventLog(file, { maxBytes: MAX });
    let seq = 0;
    let largestRun = 0;
    for (let run = 1; run <= 80; run++) {
      const start = log.end.offset;
      const n = 1 + (run % 7);
      for (let i = 0; i < n; i++) {
        log.append([sized(++seq, run, 50 + 40 * (run % 5))]);
        expect(fs.statSync(file).size).toBeLessThanOrEqual(MAX + largestRun + 200);
      }
      largestRun = Math.max(largestRun, log.end.offset - start);
    }
    expect(log.end.offset).toBeGreaterThan(10 * MAX); // it did outgrow the limit many times over
    const kept = seqs(readEventLog(file).events);
    expect(kept).toEqual(range(kept[0]!, seq));
    // The newest half of the limit is always there.
    expect(log.end.offset - log.base).toBeGreaterThanOrEqual(MAX / 2 - 400);
    log.close();
  });

  it('EventLogs cut their logs at the limit they were given', () => {
    const logs = new EventLogs(path.join(dir, 'home'), { maxBytes: MAX });
    const log = logs.get('default', 's');
    for (let i = 1; i <= 60; i++) log.append([sized(i, 1)]);
    expect(log.base).toBeGreaterThan(0);
    expect(fs.statSync(log.file).size).toBeLessThanOrEqual(MAX);
    logs.closeAll();
  });
});

describe('EventLog cursors across cuts', () => {
  it('a cut drops the cursors of runs two before its oldest kept event, so they do not grow with runs', () => {
    const log = new EventLog(file, { maxBytes: 4096 });
    let i = 0;
    for (let run = 1; run <= 50; run++)
      for (let k = 0; k < 3; k++)
        log.append([{ ...hook(++i), run, payload: { i, pad: 'x'.repeat(100) } } as NewEvent], {
          [`hooks@${run}`]: k,
          [`transcript@${run}:path`]: '/t',
        });
    const oldest = readEventLog(file).events[0]!.run;
    expect(log.cursor('hooks@50')).toBe(2);
    expect(log.cursor(`hooks@${oldest - 1}`)).toBe(2);
    expect(log.cursor('hooks@1')).toBeUndefined();
    expect(log.cursor('transcript@1:path')).toBeUndefined();
    log.close();
    const [first, second] = fs.readFileSync(file, 'utf8').split('\n');
    const header = JSON.parse(first!) as { cur: object };
    const runs = Object.keys(header.cur).map((k) => Number(/@(\d+)/.exec(k)![1]));
    expect(Math.min(...runs)).toBe((JSON.parse(second!) as { run: number }).run - 1);
  });
});

describe('EventLog cut and its consumer', () => {
  const MAX = 4096;
  const sized = (i: number): NewEvent => ({ ...hook(i), payload: { i, pad: 'x'.repeat(100) } }) as NewEvent;

  it('keeps the events after the position its consumer retained (a backlog caught up after a restart)', () => {
    const log = new EventLog(file, { maxBytes: MAX });
    for (let i = 1; i <= 10; i++) log.append([sized(i)]);
    const committed = log.end;
    log.retain(committed);
    // One batch larger than half the limit: the newest half alone would drop its first events.
    const batch = log.append(Array.from({ length: 20 }, (_, k) => sized(11 + k)));
    expect(log.base).toBeGreaterThan(0);
    expect(log.read(committed).events.map((e) => e.seq)).toEqual(batch.map((e) => e.seq));
    log.close();
  });

  it('stays within twice the limit and a quarter when its consumer stays far behind', () => {
    const log = new EventLog(file, { maxBytes: MAX });
    log.retain(LOG_START);
    for (let i = 1; i <= 300; i++) {
      log.append([sized(i)]);
      expect(fs.statSync(file).size).toBeLessThanOrEqual(2.25 * MAX + 400);
    }
    expect(log.base).toBeGreaterThan(0);
    log.close();
  });
});
