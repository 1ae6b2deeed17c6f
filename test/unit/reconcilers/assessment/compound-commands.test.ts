/**
 * Tool calls read as a shell runs them (issue 24 item 2): compound commands of the kind Claude
 * Code issues, each with the exit status and output the agent saw, through the detector; the
 * list is data (test/fixtures/commands/compound.json) so the labelled corpus can use it too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assessStep, newAssessmentState } from '../../../../controller/reconcilers/assessment/assess.js';
import type { SessionPolicy } from '../../../../controller/api/kinds.js';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import { detect, newDetectorState, type Signal } from '../../../../controller/reconcilers/assessment/detector.js';
import { simpleCommands } from '../../../../controller/reconcilers/assessment/shell.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';
import { toolOutput, TranscriptBuilder } from '../../../support/assessment-transcript.js';

interface Case {
  command: string;
  exitCode: number;
  output?: string;
  outputFile?: string;
  signals: Signal[];
  note?: string;
}

const FILE = path.join(import.meta.dirname, '../../../fixtures/commands/compound.json');
const CASES = (JSON.parse(fs.readFileSync(FILE, 'utf8')) as { commands: Case[] }).commands;
const cfg = assessmentConfig(undefined);

const outputOf = (c: Case) => (c.outputFile ? toolOutput(c.outputFile).output : (c.output ?? ''));

describe('compound commands: each simple command classified, any of them carrying a signal', () => {
  it('the list has at least 40 commands, each compound or wrapped', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    for (const c of CASES)
      expect(/&&|\|\||;|\||\n|\$\(|<<|^\S+=|\b(sh|bash|timeout|env|uv|pnpm)\b/.test(c.command)).toBe(true);
  });

  for (const c of CASES) {
    it(`${JSON.stringify(c.command)} (exit ${c.exitCode}) → ${c.signals.join(', ') || 'nothing'}`, () => {
      // As Claude Code reports it: through its transcript ("Exit code N" on a failure's first line).
      const events = new TranscriptBuilder()
        .user('make it work')
        .bash(c.command, { output: outputOf(c), exitCode: c.exitCode })
        .events({ hooks: false });
      const s = newDetectorState(1);
      expect(events.flatMap((e) => detect(s, e, cfg.detector).signals)).toEqual(c.signals);
    });
  }
});

describe('where a compound command exits', () => {
  const exposed = (cmd: string) =>
    simpleCommands(cmd)
      .filter((c) => c.exposed)
      .map((c) => c.argv.join(' '));
  it.each([
    ['a && b && c', ['a', 'b', 'c']],
    ['a; b', ['b']],
    ['a || b', ['b']],
    ['a && b || c', ['c']],
    ['a | b', ['b']],
    ['set -o pipefail; a | b', ['a', 'b']],
    ['set -e; a; b', ['a', 'b']],
    ['(a && b) || c', ['c']],
    ['{ a; b; } && c', ['b', 'c']],
    ['sh -c "a; b" && c', ['b', 'c']],
    ['bash -ec "a; b"', ['a', 'b']],
    ['a &\nb\n', ['b']],
    ['x=$(a) && b', ['b']],
  ])('%j: a failure of %j is the exit status', (cmd, expected) => {
    expect(exposed(cmd)).toEqual(expected);
  });

  it('wrappers, assignments and redirections are not the program', () => {
    expect(simpleCommands('FOO=1 timeout -k 5 60 env CI=1 npx -y vitest run 2>&1 >out.log').map((c) => c.argv)).toEqual(
      [['vitest', 'run']],
    );
    expect(simpleCommands('uv run pytest -q < /dev/null; nice -n 5 make -j4 test').map((c) => c.argv)).toEqual([
      ['pytest', '-q'],
      ['make', '-j4', 'test'],
    ]);
  });

  it('deeply nested substitutions are split to a bounded depth, without running out of stack', () => {
    expect(simpleCommands(`${'x=$('.repeat(20000)}npm test`)).toEqual([]);
    const nested = simpleCommands(`${'echo $('.repeat(5000)}npm test${')'.repeat(5000)} && cargo test`);
    expect(nested.filter((c) => c.exposed).map((c) => c.argv)).toEqual([
      ['echo', '$(…)'],
      ['cargo', 'test'],
    ]);
  });

  it('heredoc bodies and comments are not commands; a comment ends at its line', () => {
    const cmd = "cat > notes.md <<'EOF'\nnpm test && git commit -m x\nEOF\n# run them\nnpm test # all\n";
    expect(simpleCommands(cmd).map((c) => c.argv)).toEqual([['cat'], ['npm', 'test']]);
  });
});

// Consecutive failures only: the no-progress trip (these turns write nothing) is off.
const failuresOnly = assessmentConfig({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'failures-only', uid: 'uid-failures-only', generation: 1 },
  spec: { breaker: { noProgressTurns: 0 } },
} as SessionPolicy);

/** Six tool calls of `command` with the given result, each its own turn, through the assessment step. */
function sixTimes(command: string, result: { output: string; exitCode: number }) {
  const t = new TranscriptBuilder().user('make the tests pass');
  for (let i = 0; i < 6; i++) t.bash(command, result).endTurn('Still failing.').user('keep going');
  const events = t.events();
  return assessStep(newAssessmentState(1), {
    events,
    from: { seq: 0, offset: 0 },
    cfg: failuresOnly,
    now: Date.parse(events[events.length - 1].ts),
  });
}

describe('the breaker sees the same signals however the command is written', () => {
  const echoed = { output: 'test result: FAILED. 1 failed', exitCode: 1 };

  it('six `echo "test result: FAILED…"; exit 1` are six ToolFailures and no consecutive failures', () => {
    const r = sixTimes("echo 'test result: FAILED. 1 failed' ; exit 1", echoed);
    expect(r.state.detector.counts).toMatchObject({ ToolFailure: 6 });
    expect(r.state.detector.counts.TestFailure).toBeUndefined();
    expect(r.state.breaker.context.consecutiveFailures).toBe(0);
    expect(r.state.breaker.state).toBe('Closed');
  });

  it('the same through `sh -c "…"` is the same', () => {
    const r = sixTimes('sh -c "echo \'test result: FAILED. 1 failed\'; exit 1"', echoed);
    expect(r.state.detector.counts).toMatchObject({ ToolFailure: 6 });
    expect(r.state.detector.counts.TestFailure).toBeUndefined();
    expect(r.state.breaker.state).toBe('Closed');
  });

  it('a failing cargo test inside `bash -lc "cd … && cargo test | tail"` counts; the breaker opens at five', () => {
    const r = sixTimes('bash -lc "cd crate && cargo test 2>&1 | tail -20"', {
      output: toolOutput('cargo-test-fail').output,
      exitCode: 0,
    });
    expect(r.state.detector.counts).toMatchObject({ TestFailure: 6 });
    expect(r.state.breaker.state).toBe('Open');
    expect(r.interventions[0]).toMatchObject({
      type: 'ApproachPivot',
      why: '5 consecutive failures (threshold 5), the last a TestFailure',
    });
  });

  it('a commit after a leading echo is a Commit (and progress for the turn)', () => {
    const events: AgentEvent[] = new TranscriptBuilder()
      .user('commit it')
      .bash('echo x > a.txt && git add a.txt && git commit -m x', {
        output: '[main 3f2a1bc] x\n 1 file changed, 1 insertion(+)',
        exitCode: 0,
      })
      .endTurn('Committed.')
      .events();
    const r = assessStep(newAssessmentState(1), { events, from: { seq: 0, offset: 0 }, cfg, now: 0 });
    expect(r.signals.map((s) => s.signal)).toEqual(['Commit']);
    expect(r.state.breaker.context.noProgressTurns).toBe(0);
  });
});
