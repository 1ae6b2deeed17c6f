/**
 * The lightweight detector on realistic input: real tool outputs (recorded from vitest, npm,
 * tsc, pytest, cargo, make; go test, jest and eslint in their documented formats), the
 * Claude Code 2.1.330 transcript fixture, and sessions built in that transcript shape.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import {
  detect,
  LAST_SIGNALS,
  newDetectorState,
  trajectoryPoints,
  TRAJECTORY,
  type Signal,
} from '../../../../controller/reconcilers/assessment/detector.js';
import { classifyToolResult } from '../../../../controller/reconcilers/assessment/tools.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';
import { outputNames, toEvents, toolOutput, TranscriptBuilder } from '../../../support/assessment-transcript.js';

const cfg = assessmentConfig(undefined).detector;

/** What each recorded output is, run as the command an agent would type. */
const EXPECTED: Record<string, { command: string; signal: Signal | undefined }> = {
  'vitest-fail': { command: 'npx vitest run', signal: 'TestFailure' },
  'vitest-pass': { command: 'npx vitest run', signal: 'TestSuccess' },
  'npm-test-fail': { command: 'npm test', signal: 'TestFailure' },
  'npm-test-pass': { command: 'npm test', signal: 'TestSuccess' },
  'npm-build-fail': { command: 'npm run build', signal: 'BuildFailure' },
  'tsc-fail': { command: 'npx tsc --noEmit -p .', signal: 'BuildFailure' },
  'tsc-pass': { command: 'npx tsc --noEmit -p .', signal: 'BuildSuccess' },
  'pytest-fail': { command: 'python3 -m pytest -q', signal: 'TestFailure' },
  'pytest-pass': { command: 'pytest -q', signal: 'TestSuccess' },
  'go-test-fail': { command: 'go test ./...', signal: 'TestFailure' },
  'go-test-pass': { command: 'go test ./...', signal: 'TestSuccess' },
  'go-build-fail': { command: 'go test ./...', signal: 'BuildFailure' },
  'cargo-test-fail': { command: 'cargo test', signal: 'TestFailure' },
  'cargo-test-pass': { command: 'cargo test', signal: 'TestSuccess' },
  'cargo-build-fail': { command: 'cargo build', signal: 'BuildFailure' },
  'cargo-build-pass': { command: 'cargo build', signal: 'BuildSuccess' },
  'jest-fail': { command: 'npx jest', signal: 'TestFailure' },
  'jest-pass': { command: 'npx jest', signal: 'TestSuccess' },
  'eslint-fail': { command: 'npx eslint src', signal: 'LintError' },
  'eslint-warn': { command: 'npx eslint src', signal: 'LintSuccess' },
  'eslint-pass': { command: 'npx eslint src', signal: 'LintSuccess' },
  'make-test-fail': { command: 'make test', signal: 'TestFailure' },
  'make-test-pass': { command: 'make test', signal: 'TestSuccess' },
  'make-build-fail': { command: 'make build', signal: 'BuildFailure' },
};

function signalsOf(events: AgentEvent[], state = newDetectorState(1)): Signal[] {
  return events.flatMap((e) => detect(state, e, cfg).signals);
}

function bashSession(command: string, out: { output: string; exitCode: number }): AgentEvent[] {
  return new TranscriptBuilder().user('make the tests pass').bash(command, out).events({ hooks: false });
}

describe('tool signals from real outputs', () => {
  it('has an expectation for every recorded output', () => {
    expect(outputNames()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, { command, signal }] of Object.entries(EXPECTED)) {
    it(`${name}: ${command} → ${signal}`, () => {
      const out = toolOutput(name);
      // As Claude Code reports it, through the transcript normaliser ("Exit code N" on the first line of a failure).
      expect(signalsOf(bashSession(command, out))).toEqual(signal ? [signal] : []);
      // As an agent that reports the exit status reports it.
      const s = newDetectorState(1);
      const d = detect(
        s,
        {
          seq: 1,
          ts: '2026-11-22T03:00:00Z',
          run: 1,
          source: 'transcript',
          type: 'tool_result',
          tool: 'Bash',
          command,
          isError: out.exitCode !== 0,
          exitCode: out.exitCode,
          output: out.output,
        },
        cfg,
      );
      expect(d.signals).toEqual(signal ? [signal] : []);
    });
  }

  it('exit status first: a failing status with no summary in the text is still a failure', () => {
    expect(
      classifyToolResult({
        tool: 'Bash',
        command: 'npm test',
        isError: true,
        exitCode: 1,
        output: 'Error: Cannot find module vitest',
      }),
    ).toMatchObject({ kind: 'test', ok: false, exitCode: 1 });
    expect(
      classifyToolResult({ tool: 'Bash', command: 'cargo build', isError: false, exitCode: 0, output: '' }),
    ).toMatchObject({ kind: 'build', ok: true });
  });

  it("text second: behind a pipe the status is the last stage's, so the summary decides", () => {
    const fail = toolOutput('vitest-fail').output.split('\n').slice(-8).join('\n');
    expect(
      classifyToolResult({
        tool: 'Bash',
        command: 'npm test 2>&1 | tail -8',
        isError: false,
        exitCode: 0,
        output: fail,
      }),
    ).toMatchObject({ kind: 'test', ok: false });
    expect(
      classifyToolResult({
        tool: 'Bash',
        command: 'set -o pipefail; npm test 2>&1 | tail -8',
        isError: false,
        exitCode: 0,
        output: fail,
      }),
    ).toMatchObject({ ok: true });
    // Without an exit status at all (no exitCode, not an error) a failure summary still counts.
    expect(
      classifyToolResult({ tool: 'Bash', command: 'pytest', isError: false, output: toolOutput('pytest-fail').output }),
    ).toMatchObject({ kind: 'test', ok: false });
  });

  it('in a compound command the tool whose summary matches the outcome is named', () => {
    const out = `${toolOutput('vitest-pass').output}\n${toolOutput('tsc-fail').output}`;
    expect(
      classifyToolResult({
        tool: 'Bash',
        command: 'npx vitest run && npx tsc --noEmit',
        isError: true,
        exitCode: 2,
        output: out,
      }),
    ).toMatchObject({ kind: 'build', tool: 'tsc', ok: false });
  });

  it('a script the command does not name is recognised by its output', () => {
    expect(
      classifyToolResult({
        tool: 'Bash',
        command: './scripts/ci.sh',
        isError: true,
        output: `Exit code 1\n${toolOutput('cargo-test-fail').output}`,
      }),
    ).toMatchObject({ kind: 'test', tool: 'cargo', ok: false, exitCode: 1 });
  });

  it('text shown by a viewer is data, not a verdict', () => {
    const s = newDetectorState(1);
    const d = detect(
      s,
      {
        seq: 1,
        ts: '2026-11-22T03:00:00Z',
        run: 1,
        source: 'transcript',
        type: 'tool_result',
        tool: 'Bash',
        command: 'cat ci.log',
        isError: false,
        output: toolOutput('pytest-fail').output,
      },
      cfg,
    );
    expect(d.signals).toEqual([]);
  });

  it('other failing calls are ToolFailure; a refusal is ToolRejected', () => {
    const t = new TranscriptBuilder()
      .user('clean up')
      .bash('ls /nonexistent', { output: "ls: cannot access '/nonexistent': No such file or directory", exitCode: 2 })
      .rejected('rm -rf build');
    const s = newDetectorState(1);
    const evs = t.events({ hooks: false });
    expect(signalsOf(evs, s)).toEqual(['ToolFailure', 'ToolRejected']);
    expect(s.lastSignals.map((r) => r.detail)).toEqual(['exit 2', undefined]);
    // "[Request interrupted by user for tool use]" is a user message, but not scored.
    expect(s.userMessages).toBe(2);
  });
});

describe('the Claude Code 2.1.330 transcript fixture', () => {
  const file = path.join(import.meta.dirname, '../../../support/fixtures/claude-code/2.1.330/transcript.jsonl');
  const lines = fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const events = toEvents(lines)
    .flatMap((x) => x.events)
    .map((e, i) => ({ ...e, seq: i + 1 }) as AgentEvent);

  it('gives a Commit, a ToolFailure (exit 2) and a ToolRejected, and no linguistic signals', () => {
    const s = newDetectorState(1);
    const signals = events.flatMap((e) => detect(s, e, cfg).signals.map((sig) => ({ sig, seq: e.seq })));
    expect(signals.map((x) => x.sig)).toEqual(['Commit', 'ToolFailure', 'ToolRejected']);
    expect(s.counts).toEqual({ Commit: 1, ToolFailure: 1, ToolRejected: 1 });
    expect(s.lastSignals.find((r) => r.signal === 'ToolFailure')?.detail).toBe('exit 2');
    // Five prompts and the interruption notes are user messages; the task prompt opens the run.
    expect(s.userMessages).toBe(6);
    expect(s.frustrationEma).toBe(0);
  });
});

describe('user messages', () => {
  const said = (...texts: string[]) => {
    const t = new TranscriptBuilder().user('Add a farewell() function to greeter.ts with a test.');
    for (const x of texts) t.endTurn('Done.').user(x);
    const s = newDetectorState(1);
    const per = t
      .events({ hooks: false })
      .filter((e) => e.type === 'user_message')
      .map((e) => detect(s, e, cfg));
    return { s, per: per.slice(1).map((d) => d.signals) };
  };

  it('the task prompt is not scored, even when it sounds annoyed', () => {
    const t = new TranscriptBuilder().user("No, that's wrong: why did you remove the test? Try again.");
    const s = newDetectorState(1);
    expect(signalsOf(t.events({ hooks: false }), s)).toEqual([]);
    expect(s.frustrationEma).toBe(0);
  });

  it('finds frustration, satisfaction and corrections with the default patterns', () => {
    const { per } = said(
      "no, that's not what I asked for",
      'I already told you to keep the old API',
      'Perfect, thanks!',
      'use a map instead of the switch',
      'why did you delete the migration? wtf',
      'looks fine, carry on',
      'No worries, thanks',
    );
    expect(per).toEqual([
      ['Frustration', 'UserCorrection'],
      ['Frustration'],
      ['Satisfaction'],
      ['UserCorrection'],
      ['Frustration'],
      [],
      ['Satisfaction'],
    ]);
  });

  it('frustration EMA: 1 on a frustrated or correcting message, 0 otherwise, alpha 0.3', () => {
    const { s } = said("no, that's wrong", 'try again', 'still not working', 'ok');
    // 0.3, 0.51, 0.657, then a neutral message: 0.46
    expect(s.frustrationEma).toBe(0.46);
    expect(trajectoryPoints(s)).toEqual([0.3, 0.51, 0.657, 0.46]);
    // Success EMA: its first observation sets it (0 for a frustrated message).
    expect(s.successEma).toBe(0);
  });

  it('interventions coming back as user messages are not scored', () => {
    const text = assessmentConfig(undefined).breaker.texts.ApproachPivot;
    const { s, per } = said(text);
    expect(per).toEqual([[]]);
    expect(s.frustrationEma).toBe(0);
  });

  it('policy patterns replace the defaults', () => {
    const policy = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'p', uid: 'u1', generation: 1 },
      spec: {
        detector: {
          frustrationPatterns: [String.raw`\bnicht\b`],
          satisfactionPatterns: [],
          correctionPatterns: [String.raw`^falsch`],
          emaAlpha: 0.5,
        },
      },
    };
    const c = assessmentConfig(policy).detector;
    const s = newDetectorState(1);
    const evs = new TranscriptBuilder()
      .user('task')
      .endTurn('ok')
      .user('Das ist nicht gut')
      .user('Falsch!')
      .user('perfect')
      .events({ hooks: false });
    const got = evs.filter((e) => e.type === 'user_message').map((e) => detect(s, e, c).signals);
    expect(got).toEqual([[], ['Frustration'], ['UserCorrection'], []]);
    // 0.5, 0.75, then a message no pattern matches: 0.375
    expect(s.frustrationEma).toBe(0.375);
  });
});

describe('status bounds', () => {
  it('keeps the last signals with seq and message index, and counts all of them', () => {
    const t = new TranscriptBuilder().user('fix the build');
    for (let i = 0; i < 30; i++) t.bash('npx tsc --noEmit', toolOutput('tsc-fail'));
    const s = newDetectorState(1);
    const evs = t.events({ hooks: false });
    signalsOf(evs, s);
    expect(s.counts.BuildFailure).toBe(30);
    expect(s.lastSignals).toHaveLength(LAST_SIGNALS);
    const last = s.lastSignals.at(-1)!;
    expect(last).toMatchObject({ signal: 'BuildFailure', seq: evs.at(-1)!.seq, msg: 31, detail: 'tsc (exit 1)' });
  });

  it('compacts the frustration trajectory to at most 64 points covering the whole run', () => {
    const t = new TranscriptBuilder().user('task');
    for (let i = 0; i < 200; i++) t.user(i % 10 === 0 ? 'try again' : 'ok');
    const s = newDetectorState(1);
    signalsOf(t.events({ hooks: false }), s);
    const pts = trajectoryPoints(s);
    expect(pts.length).toBeLessThanOrEqual(TRAJECTORY);
    expect(s.trajectory.stride).toBe(4);
    expect(pts.length).toBe(Math.ceil(200 / 4));
    // Each point is the max over its stride: every point covering a "try again" shows it (0.3 +
    // what is left of the last one).
    expect(pts.filter((p) => p >= 0.3)).toHaveLength(20);
    expect(Math.max(...pts)).toBeLessThan(0.31);
  });
});
