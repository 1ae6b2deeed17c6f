/**
 * The assessment reconciler inside the real controller (bin/orchctl, real tmux, real SQLite):
 * an agent that writes what Claude Code writes (fake-agent.mjs: a transcript announced by the
 * SessionStart hook, Stop/PreToolUse/PostToolUse hooks) produces a long session that the
 * controller ingests into the event log and the detector consumes.
 *  - kill -9 of the controller twice mid-stream: in the end the counters, EMAs, interventions
 *    and checkpoints equal those of one pass over the final log — nothing counted twice or lost;
 *  - a breaker trip in a live session: the intervention text is pasted into the agent's pane
 *    through the verified send path and comes back as a user message in its transcript.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../../controller/api/kinds.js';
import { assessStep, newAssessmentState } from '../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import { checkpointsPath, readCheckpoints } from '../../controller/reconcilers/assessment/history.js';
import type { AssessmentStatus, BreakerStatus } from '../../controller/reconcilers/assessment/status.js';
import { eventLogPath, readEventLog } from '../../controller/store/eventlog.js';
import { toolOutput, TranscriptBuilder } from '../support/assessment-transcript.js';
import { makeHarness, shellSession, type Harness } from '../support/controller-harness.js';

const FAKE_AGENT = path.resolve(import.meta.dirname, '../fixtures/assessment/fake-agent.mjs');

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

type Assessed = {
  assessment?: AssessmentStatus;
  breaker?: BreakerStatus;
  detector?: {
    counts: Record<string, number>;
    events: number;
    messages: number;
    frustrationEma: number;
    successEma?: number;
    run: number;
  };
};

function policyDoc(spec: Record<string, unknown>) {
  return { apiVersion: 'orchctl.io/v1alpha1', kind: 'SessionPolicy', metadata: { name: 'default' }, spec };
}

function fakeAgentSession(name: string, script: string, workdir: string) {
  return shellSession(name, '', workdir, {}, { command: [process.execPath, FAKE_AGENT, script, '25', '100'] });
}

/** A long, mixed session: corrections, complaints, praise, failing and passing runs of several tools. */
function longSession(turns: number): { builder: TranscriptBuilder; failingRuns: number } {
  const b = new TranscriptBuilder(new Date().toISOString(), 1000).user(
    'Get the whole test suite green and keep the build clean.',
  );
  const runs: [string, string][] = [
    ['npx vitest run', 'vitest-fail'],
    ['python3 -m pytest -q', 'pytest-fail'],
    ['cargo test', 'cargo-test-fail'],
    ['npx tsc --noEmit -p .', 'tsc-fail'],
    ['npx vitest run', 'vitest-pass'],
    ['go test ./...', 'go-test-fail'],
    ['npx eslint src', 'eslint-fail'],
    ['npx jest', 'jest-pass'],
  ];
  const says = [
    "no, that's not what I asked",
    'try again',
    'Perfect, thanks!',
    'keep going',
    'why did you delete the fixture?',
    'ok',
  ];
  let failingRuns = 0;
  for (let i = 0; i < turns; i++) {
    if (i > 0) b.user(says[i % says.length]);
    for (let j = 0; j < 4; j++) {
      const [cmd, out] = runs[(i * 4 + j) % runs.length];
      if (
        out.includes('fail') &&
        (out.startsWith('vitest') ||
          out.startsWith('pytest') ||
          out.startsWith('cargo-test') ||
          out.startsWith('go-test'))
      )
        failingRuns++;
      b.bash(cmd, toolOutput(out));
    }
    if (i % 3 === 0) b.edit(`src/module${i}.ts`);
    if (i % 10 === 9)
      b.bash(`git commit -qam "step ${i}"`, {
        output: `[main ${(0x1000000 + i).toString(16)}] step ${i}`,
        exitCode: 0,
      });
    b.endTurn(`Turn ${i} done.`);
  }
  return { builder: b, failingRuns };
}

describe('assessment in the real controller', () => {
  it('after kill -9 consumption resumes at its committed position: counts equal one pass over the log', async () => {
    h = await makeHarness();
    const harness = h;
    const { builder, failingRuns } = longSession(90);
    const script = path.join(harness.dir, 'session.script');
    fs.writeFileSync(script, builder.agentScript());
    const total = builder.agentScript().trim().split('\n').length;
    const policy = { selector: {}, autonomy: 'observe', breaker: { failureThreshold: 4, cooldown: '3m' } };
    await harness.apply([policyDoc(policy), fakeAgentSession('long', script, harness.repo)]);
    const file = eventLogPath(harness.home, 'default', 'long');
    const position = async () =>
      ((await harness.session('long'))?.status as Assessed | undefined)?.assessment?.position.seq ?? 0;
    const done = () => fs.existsSync(path.join(harness.home, 'sessions/default/long/1/fake-agent.done'));

    for (const at of [300, 1300]) {
      harness.start();
      await harness.waitFor(`the detector to have taken ${at} events`, async () => (await position()) >= at, 60_000);
      await harness.stopController('SIGKILL');
      expect(done(), 'the agent was still writing when the controller was killed').toBe(false);
    }
    harness.start();
    const transcriptEvents = builder.events({ hooks: false }).length;
    const last = await harness.waitFor(
      'the detector to catch up with the whole session',
      async () => {
        const log = readEventLog(file);
        if (!done() || log.events.filter((e) => e.source === 'transcript').length < transcriptEvents) return false;
        return (await position()) === log.next.seq && log.next.seq;
      },
      120_000,
    );
    expect(last).toBeGreaterThan(total);

    const st = (await harness.session('long'))!.status as Assessed;
    const events = readEventLog(file).events.filter((e) => e.seq <= last);
    const cfg = assessmentConfig({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'default', uid: 'replay', generation: 1 },
      spec: policy,
    } as SessionPolicy);
    const once = assessStep(newAssessmentState(), { events, from: { seq: 0, offset: 0 }, cfg, now: 0 });

    expect(st.detector!.counts.TestFailure).toBe(failingRuns);
    expect(st.detector!.counts).toEqual(once.state.detector.counts);
    expect(st.detector!.events).toBe(events.length);
    expect(st.detector!.messages).toBe(once.state.detector.messages);
    expect(st.detector!.frustrationEma).toBe(once.state.detector.frustrationEma);
    expect(st.detector!.successEma).toBe(once.state.detector.successEma);
    expect(st.breaker!.trips).toBe(once.state.breaker.context.trips);
    expect(st.breaker!.consecutiveFailures).toBe(once.state.breaker.context.consecutiveFailures);
    // Every intervention decided exactly once (recorded, not sent: autonomy observe).
    expect(once.interventions.length).toBeGreaterThan(1);
    expect(st.breaker!.interventions).toBe(once.interventions.length);
    expect(st.breaker!.history.map((x) => x.id)).toEqual(once.interventions.map((x) => x.id).slice(-10));
    // Recorded (autonomy observe); in a batch caught up after a restart an earlier trip is superseded by a later one.
    for (const x of st.breaker!.history) expect(['Observe', 'Superseded']).toContain(x.result);
    // Checkpoints: the same segments, each once.
    const cps = readCheckpoints(checkpointsPath(harness.home, 'default', 'long'));
    expect(cps.map((c) => c.seq)).toEqual(once.checkpoints.map((c) => c.seq));
    expect(cps.length).toBeGreaterThan(5);
  }, 300_000);

  it("a trip in a live session: the intervention arrives as a user message in the agent's transcript", async () => {
    h = await makeHarness();
    const harness = h;
    const b = new TranscriptBuilder(new Date().toISOString(), 500).user('Make pytest pass.');
    for (let i = 0; i < 5; i++) b.say('Running the tests.').bash('python3 -m pytest -q', toolOutput('pytest-fail'));
    const script = path.join(harness.dir, 'fail.script');
    fs.writeFileSync(script, b.agentScript());
    await harness.apply([policyDoc({ selector: {} }), fakeAgentSession('stuck', script, harness.repo)]);
    harness.start();
    const text = assessmentConfig(undefined).breaker.texts.ApproachPivot;
    const transcript = path.join(harness.home, 'sessions/default/stuck/1/transcript.jsonl');
    const st = await harness.waitFor(
      'the intervention to be delivered',
      async () => {
        const s = (await harness.session('stuck'))?.status as Assessed | undefined;
        return !!s?.breaker?.history?.[0]?.result && s;
      },
      90_000,
    );
    expect(st.breaker!.history[0]).toMatchObject({ type: 'ApproachPivot', delivered: true, result: 'Delivered' });
    expect(st.breaker!.interventions).toBe(1);
    // In the agent's own transcript, as a user message …
    await harness.waitFor('the text in the transcript', async () =>
      fs.readFileSync(transcript, 'utf8').includes(JSON.stringify(text)),
    );
    const users = fs
      .readFileSync(transcript, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === 'user' && typeof l.message.content === 'string');
    expect(users.map((u) => u.message.content)).toEqual(['Make pytest pass.', text]);
    // … and back in the event log, where the detector knows it for its own.
    const file = eventLogPath(harness.home, 'default', 'stuck');
    await harness.waitFor('the text in the event log', async () =>
      readEventLog(file).events.some((e) => e.type === 'user_message' && e.text === text),
    );
    const s2 = await harness.waitFor('the detector past it', async () => {
      const s = (await harness.session('stuck'))?.status as Assessed | undefined;
      return s?.assessment?.position.seq === readEventLog(file).next.seq && s;
    });
    expect(s2.detector!.counts.Frustration ?? 0).toBe(0);
    expect(s2.detector!.counts.TestFailure).toBe(5);
    const cond = (await harness.session('stuck'))!.status!.conditions!.find((c) => c.type === 'BreakerOpen');
    expect(cond).toMatchObject({ status: 'True', reason: 'ApproachPivot' });
    const reasons = (await harness.events('stuck')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['BreakerOpen', 'InterventionDelivered']));
  }, 180_000);
});
