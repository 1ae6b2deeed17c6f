/** The judge's read of a session's event log (judge/sources.ts), on real files. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readEventTail } from '../../../../controller/reconcilers/judge/sources.js';
import { EventLog, type NewEvent } from '../../../../controller/store/eventlog.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-judge-sources-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const event = (i: number): NewEvent => ({
  ts: new Date(1_700_000_000_000 + i).toISOString(),
  run: 1,
  source: 'hook',
  type: 'hook',
  hook: 'Tick',
  payload: { i, pad: 'x'.repeat(100) },
});

it('reads the window at the end of a log cut by retention, not the whole file it kept', () => {
  const file = path.join(dir, 'events.jsonl');
  const log = new EventLog(file, { maxBytes: 8192 });
  for (let i = 1; i <= 100; i++) log.append([event(i)]);
  expect(log.base).toBeGreaterThan(0);
  const line = Math.ceil(
    (log.end.offset - log.base) / (log.lastSeq - log.read({ seq: 0, offset: 0 }).events[0]!.seq + 1),
  );
  const tail = readEventTail(file, 5 * line);
  // The window's worth of whole lines at the end (its partial first line passed over).
  expect(tail.map((e) => e.seq)).toEqual([96, 97, 98, 99, 100].slice(-tail.length));
  expect(tail.length).toBeGreaterThanOrEqual(4);
  log.close();
});
