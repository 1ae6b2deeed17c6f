/**
 * The lightweight detector (issue #6) on a large real-shaped event stream: Claude Code 2.1.330
 * transcript lines (user prompts — some frustrated, correcting or pleased —, assistant text,
 * Bash calls whose results are the tool outputs recorded from vitest, npm, tsc, pytest, cargo,
 * make and the go/jest/eslint formats, Edit calls, end_turn answers) and the hooks Claude Code
 * fires with them, normalised by the controller's own transcript normaliser (outputs bounded to
 * 8 KiB as it bounds them). Measures the mean time per event of the detector alone and of the
 * whole assessment step (detector + circuit breaker + checkpoints, in the reconciler's batches
 * of 500), the mean per event type, and the slowest events. Goal: ≤ 20 µs mean per event
 * (seed 001: < 10 ms).
 */
import fs from 'node:fs';
import path from 'node:path';
import { newTranscriptState, transcriptEvents } from '../../controller/agents/claude-code.js';
import { assessStep, newAssessmentState } from '../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import { detect, newDetectorState } from '../../controller/reconcilers/assessment/detector.js';
import type { AgentEvent, NewEvent } from '../../controller/store/eventlog.js';
import { percentile, ROOT } from '../lib.js';
import type { Bench } from '../types.js';

const EVENTS = 100_000;
const ROUNDS = 5;

const OUTPUTS = path.join(ROOT, 'test/fixtures/assessment/outputs');
const RUNS: [string, string][] = [
  ['npx vitest run', 'vitest-fail'],
  ['npm test 2>&1 | tail -40', 'npm-test-fail'],
  ['npx tsc --noEmit -p .', 'tsc-fail'],
  ['python3 -m pytest -q', 'pytest-fail'],
  ['cargo test', 'cargo-test-fail'],
  ['go test ./...', 'go-test-fail'],
  ['npx jest', 'jest-fail'],
  ['npx eslint src', 'eslint-fail'],
  ['make test', 'make-test-fail'],
  ['cargo build', 'cargo-build-pass'],
  ['npx vitest run', 'vitest-pass'],
  ['python3 -m pytest -q', 'pytest-pass'],
  ['go test ./...', 'go-test-pass'],
  ['git status --short', ''],
  ['ls src', ''],
];
const SAYS = [
  'keep going',
  "no, that's not what I asked",
  'try again, the test still fails',
  'Perfect, thanks!',
  'why did you change the fixture?',
  'ok, now the README',
  'looks good',
];

/** Claude Code transcript lines and hook events for `turns` turns, normalised into log events. */
function stream(n: number): AgentEvent[] {
  const out: NewEvent[] = [];
  const st = newTranscriptState();
  let t = Date.parse('2026-11-22T03:00:00.000Z');
  let tool = 0;
  const line = (o: Record<string, unknown>) => {
    t += 2000;
    out.push(
      ...transcriptEvents({ ...o, timestamp: new Date(t).toISOString(), sessionId: 's', version: '2.1.330' }, 1, st),
    );
  };
  const hook = (name: string, extra: Record<string, unknown> = {}) =>
    out.push({
      ts: new Date(t).toISOString(),
      run: 1,
      source: 'hook',
      type: 'hook',
      hook: name,
      payload: { session_id: 's', hook_event_name: name, ...extra },
    });
  const outputs = new Map(
    RUNS.map(([, f]) => [
      f,
      f
        ? {
            text: fs.readFileSync(path.join(OUTPUTS, `${f}.txt`), 'utf8'),
            code: Number(fs.readFileSync(path.join(OUTPUTS, `${f}.exit`), 'utf8')),
          }
        : { text: ' M src/a.ts\n?? src/b.ts', code: 0 },
    ]),
  );
  for (let turn = 0; out.length < n; turn++) {
    const text = turn === 0 ? 'Get the test suite green and keep the build clean.' : SAYS[turn % SAYS.length];
    line({ type: 'user', message: { role: 'user', content: text } });
    hook('UserPromptSubmit', { prompt: text });
    line({
      type: 'assistant',
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: 'Let me run the checks.' }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 14000, output_tokens: 60 },
      },
    });
    for (let j = 0; j < 4; j++) {
      const [command, f] = RUNS[(turn * 4 + j) % RUNS.length];
      const o = outputs.get(f)!;
      const id = `toolu_${++tool}`;
      line({
        type: 'assistant',
        message: {
          role: 'assistant',
          content: [{ type: 'tool_use', id, name: 'Bash', input: { command } }],
          stop_reason: 'tool_use',
        },
      });
      hook('PreToolUse', { tool_name: 'Bash', tool_input: { command } });
      const failed = o.code !== 0;
      const content = failed ? `Exit code ${o.code}\n${o.text}` : o.text;
      line({
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content, is_error: failed }] },
        toolUseResult: failed ? `Error: ${content}` : { stdout: o.text, stderr: '', interrupted: false },
      });
      hook(failed ? 'PostToolUseFailure' : 'PostToolUse', { tool_name: 'Bash' });
    }
    const id = `toolu_${++tool}`;
    line({
      type: 'assistant',
      message: {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id,
            name: 'Edit',
            input: { file_path: '/p/src/a.ts', old_string: 'a - b', new_string: 'a + b' },
          },
        ],
        stop_reason: 'tool_use',
      },
    });
    line({
      type: 'user',
      message: {
        role: 'user',
        content: [
          { tool_use_id: id, type: 'tool_result', content: 'The file /p/src/a.ts has been updated successfully.' },
        ],
      },
    });
    line({
      type: 'assistant',
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: `Turn ${turn}: fixed one failure, others remain.` }],
        stop_reason: 'end_turn',
      },
    });
    hook('Stop', { stop_hook_active: false });
  }
  return out.slice(0, n).map((e, i) => ({ ...e, seq: i + 1 }) as AgentEvent);
}

const us = (ns: bigint, n: number) => Math.round((Number(ns) / 1000 / n) * 100) / 100;

export const detectorBench: Bench = {
  name: 'detector',
  description: `lightweight detector and assessment step per event, ${EVENTS} real-shaped events (goal ≤ 20 µs mean)`,
  async run() {
    const events = stream(EVENTS);
    const cfg = assessmentConfig(undefined);
    const byType = new Map<string, AgentEvent[]>();
    for (const e of events) byType.set(e.type, [...(byType.get(e.type) ?? []), e]);

    // Warm-up (JIT), then ROUNDS timed passes of the detector over the whole stream.
    for (let i = 0; i < 2; i++) {
      const s = newDetectorState(1);
      for (const e of events) detect(s, e, cfg.detector);
    }
    const detectorMeans: number[] = [];
    let signals = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const s = newDetectorState(1);
      const t0 = process.hrtime.bigint();
      for (const e of events) signals += detect(s, e, cfg.detector).signals.length;
      detectorMeans.push(us(process.hrtime.bigint() - t0, events.length));
    }
    signals /= ROUNDS;

    // Per event type: the same events, timed per type (state continues as in a session).
    const perType: Record<string, { events: number; meanUs: number }> = {};
    for (const [type, list] of byType) {
      const s = newDetectorState(1);
      s.userMessages = 1; // past the task prompt: every user message is scored
      const t0 = process.hrtime.bigint();
      for (let r = 0; r < ROUNDS; r++) for (const e of list) detect(s, e, cfg.detector);
      perType[type] = { events: list.length, meanUs: us(process.hrtime.bigint() - t0, list.length * ROUNDS) };
    }

    // The slowest single events (tool results and user messages, timed one by one).
    const singles: number[] = [];
    {
      const s = newDetectorState(1);
      for (const e of events) {
        if (e.type !== 'tool_result' && e.type !== 'user_message') continue;
        const t0 = process.hrtime.bigint();
        detect(s, e, cfg.detector);
        singles.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
    }

    // The whole step as the reconciler runs it: batches of 500, state cloned per batch.
    const stepMeans: number[] = [];
    let interventions = 0;
    let checkpoints = 0;
    for (let r = 0; r < ROUNDS; r++) {
      let state = newAssessmentState();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < events.length; i += 500) {
        const res = assessStep(state, { events: events.slice(i, i + 500), from: { seq: i, offset: 0 }, cfg, now: 0 });
        state = res.state;
        if (r === 0) {
          interventions += res.interventions.length;
          checkpoints += res.checkpoints.length;
        }
      }
      stepMeans.push(us(process.hrtime.bigint() - t0, events.length));
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const detectorMean = median(detectorMeans);
    const stepMean = median(stepMeans);
    const round = (x: number) => Math.round(x * 100) / 100;
    return {
      events: events.length,
      types: Object.fromEntries([...byType].map(([k, v]) => [k, v.length])),
      signalsPerPass: signals,
      interventions,
      checkpoints,
      detectorMeanUs: detectorMean,
      detectorMeansUs: detectorMeans,
      stepMeanUs: stepMean,
      stepMeansUs: stepMeans,
      perTypeMeanUs: perType,
      singleEventUs: {
        p50: round(percentile(singles, 50)),
        p99: round(percentile(singles, 99)),
        max: round(Math.max(...singles)),
      },
      goalUs: 20,
      seedGoalMs: 10,
      summary:
        `detector ${detectorMean} µs/event, full step ${stepMean} µs/event (goal ≤ 20 µs); ` +
        `tool_result ${perType.tool_result?.meanUs} µs, user_message ${perType.user_message?.meanUs} µs; ` +
        `slowest event ${round(Math.max(...singles))} µs`,
    };
  },
};
