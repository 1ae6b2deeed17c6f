/**
 * The circuit breaker driven by realistic sessions (Claude Code transcript shape, real tool
 * outputs) through the pure assessment step, as the reconciler drives it.
 */
import { describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../../../../controller/api/kinds.js';
import {
  assessStep,
  newAssessmentState,
  type AssessmentState,
  type StepResult,
} from '../../../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig, type AssessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';
import { toolOutput, TranscriptBuilder } from '../../../support/assessment-transcript.js';

const policy = (spec: Record<string, unknown>, gen = 1): SessionPolicy =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name: 'test', uid: `uid-${JSON.stringify(spec)}`, generation: gen },
    spec,
  }) as SessionPolicy;

/** Runs events through the step in batches (as the reconciler does), collecting everything. */
function run(
  events: AgentEvent[],
  cfg: AssessmentConfig = assessmentConfig(undefined),
  opts: { batch?: number; now?: number; state?: AssessmentState; git?: (i: number) => string | undefined } = {},
) {
  let state = opts.state ?? newAssessmentState();
  const all: Omit<StepResult, 'state'> = { signals: [], interventions: [], transitions: [], checkpoints: [] };
  const batch = opts.batch ?? 7;
  for (let i = 0; i < events.length; i += batch) {
    const chunk = events.slice(i, i + batch);
    const now = opts.now ?? Date.parse(chunk.at(-1)!.ts);
    const r = assessStep(state, { events: chunk, from: { seq: i, offset: i * 100 }, cfg, now, git: opts.git?.(i) });
    state = r.state;
    all.signals.push(...r.signals);
    all.interventions.push(...r.interventions);
    all.transitions.push(...r.transitions);
    all.checkpoints.push(...r.checkpoints);
  }
  return { state, ...all };
}

const failingTests = ['vitest-fail', 'pytest-fail', 'cargo-test-fail', 'go-test-fail', 'jest-fail'];

describe('correction storm', () => {
  it('three corrections within five minutes open the breaker with ClarificationPause', () => {
    const t = new TranscriptBuilder('2026-11-22T03:00:00.000Z', 20_000)
      .user('Rename the config loader to loadSettings and update the callers.')
      .edit('src/config.ts')
      .endTurn('Renamed it to loadConfigFile.')
      .user("No, that's not what I asked. loadSettings.")
      .edit('src/config.ts')
      .endTurn('Renamed to loadSettings; I also changed the return type.')
      .user("Don't change the return type. Revert that.")
      .edit('src/config.ts')
      .endTurn('Reverted the return type, and moved the file to lib/.')
      .user('I said only the name. Undo the move.');
    const r = run(t.events());
    expect(r.state.detector.counts.UserCorrection).toBe(3);
    expect(r.interventions).toHaveLength(1);
    expect(r.interventions[0]).toMatchObject({
      type: 'ClarificationPause',
      why: 'correction storm: 3 corrections within 5m (threshold 3)',
    });
    expect(r.state.breaker.state).toBe('Open');
    expect(r.transitions.map((x) => `${x.from}→${x.to}`)).toEqual(['Closed→Open']);
    // The trip is the last user message's event.
    const last = t
      .events()
      .filter((e) => e.type === 'user_message')
      .at(-1)!;
    expect(r.interventions[0].seq).toBe(last.seq);
    expect(r.interventions[0].id).toBe(`1-${last.seq}`);
  });

  it('corrections spread over more than the window do not', () => {
    const t = new TranscriptBuilder('2026-11-22T03:00:00.000Z', 20_000).user('Rename the config loader.');
    for (const msg of ["No, that's wrong", 'I said loadSettings', 'not what I asked'])
      t.wait(3 * 60_000)
        .edit('src/config.ts')
        .endTurn('Done.')
        .user(msg);
    const r = run(t.events());
    expect(r.state.detector.counts.UserCorrection).toBe(3);
    expect(r.interventions.filter((i) => i.type === 'ClarificationPause')).toEqual([]);
  });

  it('refused tool calls count as corrections', () => {
    const t = new TranscriptBuilder()
      .user('tidy the repo')
      .rejected('rm -rf build')
      .rejected('git clean -fdx')
      .rejected('rm -rf node_modules');
    const r = run(t.events());
    expect(r.interventions.map((i) => i.type)).toEqual(['ClarificationPause']);
  });
});

describe('consecutive failures', () => {
  it('five failing test runs open the breaker with ApproachPivot', () => {
    const t = new TranscriptBuilder().user('Make the test suite pass.');
    for (const name of failingTests)
      t.say('Running the tests again.').bash(
        name === 'go-test-fail'
          ? 'go test ./...'
          : name.startsWith('cargo')
            ? 'cargo test'
            : name.startsWith('pytest')
              ? 'python3 -m pytest -q'
              : name.startsWith('jest')
                ? 'npx jest'
                : 'npx vitest run',
        toolOutput(name),
      );
    const r = run(t.events());
    expect(r.state.detector.counts.TestFailure).toBe(5);
    expect(r.interventions).toHaveLength(1);
    expect(r.interventions[0]).toMatchObject({
      type: 'ApproachPivot',
      why: '5 consecutive failures (threshold 5), the last a TestFailure',
    });
    expect(r.state.breaker.context.consecutiveFailures).toBe(5);
  });

  it('a passing run resets consecutive failures', () => {
    const t = new TranscriptBuilder().user('Make the test suite pass.');
    for (let i = 0; i < 4; i++) t.bash('npx vitest run', toolOutput('vitest-fail'));
    t.edit('src/math.ts').bash('npx vitest run', toolOutput('vitest-pass'));
    for (let i = 0; i < 4; i++) t.bash('npx vitest run', toolOutput('vitest-fail'));
    const r = run(t.events());
    expect(r.state.detector.counts.TestFailure).toBe(8);
    expect(r.state.breaker.context.consecutiveFailures).toBe(4);
    expect(r.interventions).toEqual([]);
    expect(r.state.breaker.state).toBe('Closed');
  });

  it('the threshold comes from the policy', () => {
    const t = new TranscriptBuilder().user('Fix the build.');
    for (let i = 0; i < 2; i++) t.bash('cargo build', toolOutput('cargo-build-fail'));
    expect(
      run(t.events(), assessmentConfig(policy({ breaker: { failureThreshold: 2 } }))).interventions.map((i) => i.type),
    ).toEqual(['ApproachPivot']);
    expect(run(t.events()).interventions).toEqual([]);
  });
});

describe('frustration EMA', () => {
  it('reaching the threshold on a frustrated message opens with ExplicitCheckIn', () => {
    const t = new TranscriptBuilder('2026-11-22T03:00:00.000Z', 120_000).user('Add pagination to the list endpoint.');
    for (const msg of [
      'why did you add a new dependency for this',
      'still not paginating the second page',
      'this sucks, try again',
      'why are you ignoring the cursor??',
    ])
      t.edit('src/api.ts').endTurn('Implemented.').user(msg);
    const r = run(t.events());
    expect(r.state.detector.frustrationEma).toBeGreaterThanOrEqual(0.7);
    expect(r.interventions.map((i) => i.type)).toEqual(['ExplicitCheckIn']);
    expect(r.interventions[0].why).toMatch(/^frustration EMA 0\.76 reached the threshold 0\.70$/);
  });
});

describe('no progress', () => {
  it('N turns with no commit, file written or git change open it (ApproachPivot); progress resets the count', () => {
    const cfg = assessmentConfig(policy({ breaker: { noProgressTurns: 3 } }));
    const t = new TranscriptBuilder().user('Investigate the flaky test.');
    t.bash('git log --oneline -5', { output: 'abc123 fix\n', exitCode: 0 }).endTurn('Looked at the log.');
    t.user('go on').edit('test/flaky.test.ts').endTurn('Added a retry.');
    t.user('go on').bash('cat test/flaky.test.ts', { output: 'it(...)', exitCode: 0 }).endTurn('Read the test.');
    t.user('go on').bash('grep -rn sleep test', { output: '', exitCode: 1 }).endTurn('Nothing.');
    expect(run(t.events(), cfg).interventions).toEqual([]);
    t.user('go on').endTurn('Thinking about it.');
    const r = run(t.events(), cfg);
    expect(r.interventions.map((i) => [i.type, i.why])).toEqual([
      ['ApproachPivot', '3 turns without progress (no commit, no file written; threshold 3)'],
    ]);
  });

  it('a change of status.git between turns is progress', () => {
    const cfg = assessmentConfig(policy({ breaker: { noProgressTurns: 2 } }));
    const t = new TranscriptBuilder().user('Work on it.');
    for (let i = 0; i < 4; i++) t.user('continue').endTurn('Working.');
    // Batches of 3 events: each pass sees a different git state.
    expect(run(t.events(), cfg, { batch: 3, git: (i) => `head${i}:${i}` }).interventions).toEqual([]);
    expect(run(t.events(), cfg, { batch: 3, git: () => 'same' }).interventions.map((i) => i.type)).toEqual([
      'ApproachPivot',
    ]);
  });

  it('a turn is counted once whether the Stop hook, the end_turn message or both mark it', () => {
    const t = new TranscriptBuilder()
      .user('one')
      .endTurn('a')
      .user('two')
      .bash('ls', { output: 'x', exitCode: 0 })
      .endTurn('b')
      .user('three')
      .endTurn('c');
    expect(run(t.events({ hooks: true })).state.turn.count).toBe(3);
    expect(run(t.events({ hooks: false })).state.turn.count).toBe(3);
    // The Stop hook may be ingested before the transcript's last line: still once.
    const evs = t.events({ hooks: true });
    const swapped: AgentEvent[] = [];
    for (let i = 0; i < evs.length; i++) {
      const e = evs[i];
      const n = evs[i + 1];
      if (e.type === 'assistant_message' && e.stopReason === 'end_turn' && n?.type === 'hook' && n.hook === 'Stop') {
        swapped.push(n, e);
        i++;
      } else swapped.push(e);
    }
    expect(run(swapped.map((e, i) => ({ ...e, seq: i + 1 }))).state.turn.count).toBe(3);
  });
});

describe('cooldown and half-open', () => {
  const cfg = assessmentConfig(policy({ breaker: { failureThreshold: 3, cooldown: '10m' } }));
  const failing = (t: TranscriptBuilder, n: number) => {
    for (let i = 0; i < n; i++) t.bash('python3 -m pytest -q', toolOutput('pytest-fail'));
    return t;
  };

  it('the cooldown suppresses a second intervention', () => {
    const t = failing(new TranscriptBuilder('2026-11-22T03:00:00.000Z', 10_000).user('Make pytest pass.'), 3);
    t.endTurn('Still failing.').user('keep going');
    failing(t, 6); // well past the threshold again, within the cooldown
    const r = run(t.events(), cfg);
    expect(r.state.detector.counts.TestFailure).toBe(9);
    expect(r.interventions).toHaveLength(1);
    expect(r.state.breaker.state).toBe('Open');
    expect(r.state.breaker.context.consecutiveFailures).toBe(9);
  });

  it('after the cooldown the breaker is half-open; a healthy turn closes it and resets the counters', () => {
    const t = failing(new TranscriptBuilder('2026-11-22T03:00:00.000Z', 10_000).user('Make pytest pass.'), 3).endTurn(
      'Stuck.',
    );
    t.wait(11 * 60_000)
      .user('Try a different approach: fix calc.mul.')
      .edit('calc.py')
      .bash('python3 -m pytest -q', toolOutput('pytest-pass'))
      .endTurn('All tests pass now.');
    const r = run(t.events(), cfg);
    expect(r.transitions.map((x) => `${x.from}→${x.to}`)).toEqual(['Closed→Open', 'Open→HalfOpen', 'HalfOpen→Closed']);
    expect(r.state.breaker.state).toBe('Closed');
    expect(r.state.breaker.context).toMatchObject({ consecutiveFailures: 0, corrections: [], noProgressTurns: 0 });
    expect(r.interventions).toHaveLength(1);
  });

  it('a failure while half-open opens it again with a new intervention', () => {
    const t = failing(new TranscriptBuilder('2026-11-22T03:00:00.000Z', 10_000).user('Make pytest pass.'), 3).endTurn(
      'Stuck.',
    );
    failing(t.wait(11 * 60_000).user('Try again differently.'), 1);
    const r = run(t.events(), cfg);
    expect(r.transitions.map((x) => `${x.from}→${x.to}`)).toEqual(['Closed→Open', 'Open→HalfOpen', 'HalfOpen→Open']);
    expect(r.interventions).toHaveLength(2);
    expect(r.interventions[1].id).not.toBe(r.interventions[0].id);
  });

  it('a quiet log moves Open to HalfOpen on the reconciler clock', () => {
    const t = failing(new TranscriptBuilder('2026-11-22T03:00:00.000Z', 10_000).user('Make pytest pass.'), 3);
    const evs = t.events();
    const opened = run(evs, cfg);
    expect(opened.state.breaker.state).toBe('Open');
    const later = assessStep(opened.state, {
      events: [],
      from: { seq: 0, offset: 0 },
      cfg,
      now: Date.parse(evs.at(-1)!.ts) + 9 * 60_000,
    });
    expect(later.state.breaker.state).toBe('Open');
    const after = assessStep(opened.state, {
      events: [],
      from: { seq: 0, offset: 0 },
      cfg,
      now: Date.parse(evs.at(-1)!.ts) + 10 * 60_000,
    });
    expect(after.state.breaker.state).toBe('HalfOpen');
    expect(after.transitions.map((x) => x.to)).toEqual(['HalfOpen']);
  });
});

describe('batches and runs', () => {
  it('the result does not depend on how events are batched (what makes a replay after a crash exact)', () => {
    const t = new TranscriptBuilder('2026-11-22T03:00:00.000Z', 15_000).user('Fix the cart total.');
    for (const n of ['jest-fail', 'jest-fail', 'jest-pass']) t.bash('npx jest', toolOutput(n));
    t.endTurn('Fixed.').user('perfect, thanks').user("no, that's wrong, the tax is missing").user('try again');
    for (let i = 0; i < 5; i++) t.bash('npx jest', toolOutput('jest-fail'));
    const evs = t.events();
    const a = run(evs, undefined, { batch: 1 });
    const b = run(evs, undefined, { batch: 1000 });
    const c = run(evs, undefined, { batch: 4 });
    for (const x of [b, c]) {
      expect(x.state.detector).toEqual(a.state.detector);
      expect(x.state.breaker).toEqual(a.state.breaker);
      expect(x.interventions).toEqual(a.interventions);
      expect(x.signals).toEqual(a.signals);
    }
  });

  it('a new run starts the detector and the breaker afresh', () => {
    const t = new TranscriptBuilder().user('Make the tests pass.');
    for (let i = 0; i < 5; i++) t.bash('npx vitest run', toolOutput('vitest-fail'));
    const first = t.events({ run: 1 });
    const second = new TranscriptBuilder('2026-11-22T04:00:00.000Z')
      .user('Make the tests pass.')
      .bash('npx vitest run', toolOutput('vitest-fail'))
      .events({ run: 2, startSeq: first.length + 1 });
    const r = run([...first, ...second]);
    expect(r.state.detector.run).toBe(2);
    expect(r.state.detector.counts).toEqual({ TestFailure: 1 });
    expect(r.state.breaker.state).toBe('Closed');
    expect(r.state.breaker.context.consecutiveFailures).toBe(1);
    // The previous run's open segment became a run-end checkpoint.
    expect(r.checkpoints.map((c) => [c.run, c.trigger])).toContainEqual([1, 'run-end']);
  });

  it('a disabled breaker counts signals but never trips', () => {
    const t = new TranscriptBuilder().user('Make the tests pass.');
    for (let i = 0; i < 8; i++) t.bash('npx vitest run', toolOutput('vitest-fail'));
    const r = run(t.events(), assessmentConfig(policy({ breaker: { enabled: false } })));
    expect(r.state.detector.counts.TestFailure).toBe(8);
    expect(r.interventions).toEqual([]);
    expect(r.state.breaker.state).toBe('Closed');
  });
});
