/**
 * Event ingestion (issue #5): how fast a large Claude Code transcript goes into a session's event
 * log — read incrementally, parsed, normalised, appended with its cursor — and how fast the agent
 * state consumer folds the result. The transcript is the one recorded from the real CLI
 * (test/support/fixtures/claude-code/<pin>/transcript.jsonl), repeated with fresh tool ids to
 * LINES lines. Goal: ≥ 20 000 lines/s. Also the `orchctl hook` entry point's wall time per call
 * as an agent runs it (a new node process each time; goal: exits within 100 ms). And the ingest into
 * a log bounded at --event-log-max-bytes' lower bound (1 MiB) against an unbounded one, alternated (A/B).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { claudeCodeDriver } from '../../controller/agents/claude-code.js';
import { AgentFeed } from '../../controller/observers/agent-feed.js';
import { foldEvents, newObservation } from '../../controller/reconcilers/session/agent-state.js';
import { RETENTION_BOUNDS } from '../../controller/api/retention.js';
import { EventLog, LOG_START } from '../../controller/store/eventlog.js';
import { ORCHCTL, ROOT, stats, tempDir } from '../lib.js';
import type { Bench } from '../types.js';

const LINES = 100_000;
const HOOK_CALLS = 40;

function bigTranscript(file: string): { lines: number; bytes: number } {
  const pin = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/claude-code/pin.json'), 'utf8')) as { version: string }
  ).version;
  const src = fs
    .readFileSync(path.join(ROOT, 'test/support/fixtures/claude-code', pin, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  const out = fs.openSync(file, 'w');
  let n = 0;
  let bytes = 0;
  for (let rep = 0; n < LINES; rep++) {
    const chunk = src.map((l) => l.replace(/toolu_fake(\w+)/g, `toolu_r${rep}_$1`)).slice(0, LINES - n);
    const text = chunk.join('\n') + '\n';
    fs.writeSync(out, text);
    n += chunk.length;
    bytes += Buffer.byteLength(text);
  }
  fs.closeSync(out);
  return { lines: n, bytes };
}

/** Ingests the whole transcript into a fresh log (cut past `maxBytes` when given): seconds, passes, the log. */
function ingestAll(dir: string, name: string, ws: string, transcript: string, bytes: number, maxBytes?: number) {
  const log = new EventLog(path.join(dir, name), { maxBytes });
  const feed = new AgentFeed();
  const t0 = process.hrtime.bigint();
  let passes = 0;
  const reader = claudeCodeDriver.transcript;
  while (
    feed.ingest(log, { run: 1, workspace: ws, transcript, reader }) > 0 ||
    Number(log.cursor('transcript@1')) < bytes
  )
    passes++;
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, passes, log };
}

/** The same ingest into a log bounded at --event-log-max-bytes' lower bound, A/B alternated with an unbounded one. */
function boundedAB(dir: string, ws: string, transcript: string, bytes: number) {
  const max = RETENTION_BOUNDS.eventLogMaxBytes.min; // the most frequent cuts
  const times = { unbounded: [] as number[], bounded: [] as number[] };
  let fileBytes = 0;
  let logicalBytes = 0;
  for (let i = 0; i < 3; i++)
    for (const which of ['unbounded', 'bounded'] as const) {
      const name = `ab-${which}-${i}.jsonl`;
      const r = ingestAll(dir, name, ws, transcript, bytes, which === 'bounded' ? max : undefined);
      times[which].push(r.seconds);
      if (which === 'bounded') [fileBytes, logicalBytes] = [fs.statSync(r.log.file).size, r.log.end.offset];
      r.log.close();
      fs.rmSync(path.join(dir, name));
    }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  return {
    maxBytes: max,
    fileBytes,
    logicalBytes,
    ratio: Math.round((median(times.bounded) / median(times.unbounded)) * 100) / 100,
  };
}

export const eventIngestBench: Bench = {
  name: 'event-ingest',
  description: `Claude Code transcript → event log (${LINES} real-shaped lines), consumer fold, orchctl hook wall time`,
  async run() {
    const dir = tempDir('ingest');
    try {
      const transcript = path.join(dir, 'transcript.jsonl');
      const ws = path.join(dir, 'ws');
      fs.mkdirSync(ws);
      const { lines, bytes } = bigTranscript(transcript);
      const { seconds: ingestS, passes, log } = ingestAll(dir, 'events.jsonl', ws, transcript, bytes);
      const events = log.lastSeq;

      const t1 = process.hrtime.bigint();
      let obs = newObservation(1, LOG_START);
      for (let pos = LOG_START; ; ) {
        const r = log.read(pos, 5000);
        if (!r.events.length) break;
        obs = foldEvents(obs, r.events, r.next);
        pos = r.next;
      }
      const foldS = Number(process.hrtime.bigint() - t1) / 1e9;
      log.close();
      const bounded = boundedAB(dir, ws, transcript, bytes);

      const hookMs: number[] = [];
      const payload =
        JSON.stringify({
          session_id: 'bench',
          hook_event_name: 'PostToolUse',
          tool_name: 'Bash',
          tool_response: { stdout: 'x'.repeat(2000) },
        }) + '\n';
      for (let i = 0; i < HOOK_CALLS; i++) {
        const h0 = process.hrtime.bigint();
        const r = spawnSync(process.execPath, [ORCHCTL, 'hook'], {
          input: payload,
          env: { PATH: process.env.PATH, ORCHCTL_WORKSPACE: ws },
        });
        hookMs.push(Number(process.hrtime.bigint() - h0) / 1e6);
        if (r.status !== 0) throw new Error(`orchctl hook exited ${r.status}`);
      }
      const nodeMs: number[] = [];
      for (let i = 0; i < 10; i++) {
        const h0 = process.hrtime.bigint();
        spawnSync(process.execPath, ['-e', '0']);
        nodeMs.push(Number(process.hrtime.bigint() - h0) / 1e6);
      }
      const linesPerSecond = Math.round(lines / ingestS);
      const hook = stats(hookMs);
      const bare = stats(nodeMs);
      return {
        transcriptLines: lines,
        transcriptMB: Math.round(bytes / 1048576),
        eventsAppended: events,
        passes,
        ingestSeconds: Math.round(ingestS * 1000) / 1000,
        linesPerSecond,
        goalLinesPerSecond: 20_000,
        foldEventsPerSecond: Math.round(events / foldS),
        bounded,
        consumerCounts: obs.counts,
        hookCallMs: hook,
        bareNodeStartMs: bare,
        hookGoalMs: 100,
        summary:
          `${linesPerSecond} transcript lines/s ` +
          `(goal ≥ 20000; ${events} events from ${lines} lines, ${Math.round(bytes / 1048576)} MB), ` +
          `fold ${Math.round(events / foldS)} events/s; bounded at ${bounded.maxBytes >> 20} MiB: ` +
          `file ${bounded.fileBytes >> 10} KiB of ${bounded.logicalBytes >> 20} MiB, ingest ×${bounded.ratio}; ` +
          `orchctl hook median ${hook.median} ms p99 ${hook.p99} ms ` +
          `(bare node ${bare.median} ms; goal ≤ 100 ms)`,
      };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
