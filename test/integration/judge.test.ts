/**
 * The judge in the real controller process (bin/orchctl controller), with real tmux, a real git
 * repository and the store file:
 *  - end to end: the quickstart's simulated agent finishes a run, its Evaluation appears with a
 *    heuristic verdict, `orchctl get evaluations` lists it, a spec change starts run 2 whose
 *    prompt.md carries the assessment, a follow-up session in the same project gets it too,
 *    `orchctl judge --wait` prints an OnDemand verdict, and /metrics counts the evaluations;
 *  - crash safety: the controller is killed (SIGKILL) while its judge request to a fake
 *    OpenAI-compatible server hangs; after a restart the run has exactly one Evaluation with one
 *    verdict, obtained by a second request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../controller/api/kinds.js';
import type { Evaluation } from '../../controller/reconcilers/judge/types.js';
import { ROOT } from '../support/cli.js';
import { parseExposition } from '../support/prom-text.js';
import { GOOD_VERDICT } from '../support/fake-judge-server.js';
import { FakeOpenAI, openai } from '../support/fake-openai.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';
import { freePort, httpGet } from '../support/metrics-helpers.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');

let h: Harness;
let fake: FakeOpenAI | undefined;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
  await fake?.close();
  fake = undefined;
});

const policy = (judge: object) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'default' },
  spec: { judge },
});
const evaluations = async () => (await h.store.list('Evaluation', { namespace: 'default' })).items as Evaluation[];
const evaluation = async (name: string) =>
  (await h.store.get({ kind: 'Evaluation', namespace: 'default', name })) as Evaluation | undefined;
const judged = (name: string) => async () => {
  const e = await evaluation(name);
  return typeof e?.status?.score === 'number' && e;
};

function simSession(name: string, prompt: string): object {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name },
    spec: { agentRef: 'sim', projectRef: 'greeter', prompt },
  };
}

describe('judge in the controller', () => {
  it('end to end: a run ends, is judged, and the next run (and a follow-up session) is told how it went', async () => {
    const port = await freePort();
    await h.apply([
      policy({ backend: 'heuristic' }),
      { apiVersion: 'orchctl.io/v1alpha1', kind: 'Project', metadata: { name: 'greeter' }, spec: { path: h.repo } },
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'Agent',
        metadata: { name: 'sim' },
        spec: {
          command: [process.execPath, SIM_AGENT],
          promptDelivery: 'argument',
          env: [{ name: 'SIM_AGENT_STEP_MS', value: '0' }],
        },
      },
      simSession('add-farewell', 'Add a farewell() function to the greeter, with tests. [commits:2] [fast]'),
    ]);
    h.start(['--metrics-addr', `127.0.0.1:${port}`]);

    // Run 1 ends; its Evaluation appears, owned by the session, with a verdict.
    const ev1 = await h.waitFor('run 1 judged', judged('add-farewell-run-1'), 45_000);
    const s1 = (await h.session('add-farewell'))!;
    expect(phaseOf(s1)).toBe('Succeeded');
    expect(ev1.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'AgentSession',
      name: 'add-farewell',
      uid: s1.metadata.uid,
    });
    expect(ev1.spec).toMatchObject({
      sessionRef: 'add-farewell',
      run: 1,
      trigger: 'SessionEnded',
      projectRef: 'greeter',
      evidence: {
        phase: 'Succeeded',
        exitCode: 0,
        git: { commits: 2 },
        tests: { signal: 'passing' },
        result: { status: 'success' },
      },
    });
    expect(ev1.spec?.evidence?.outputTail).not.toMatch(/\x1b/);
    expect(ev1.status).toMatchObject({
      phase: 'Judged',
      score: 5,
      outcome: 'success',
      recommendation: 'complete',
      backend: 'heuristic',
    });
    await h.waitFor(
      'lastEvaluation in the session status',
      async () => (await h.session('add-farewell'))?.status?.lastEvaluation,
    );
    expect((await h.session('add-farewell'))!.status!.lastEvaluation).toEqual({
      name: 'add-farewell-run-1',
      run: 1,
      score: 5,
      recommendation: 'complete',
      outcome: 'success',
      evaluatedAt: ev1.status!.evaluatedAt,
    });

    const table = await h.orchctl(['get', 'evaluations']);
    expect(table.exitCode).toBe(0);
    expect(table.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'SESSION',
      'RUN',
      'PHASE',
      'SCORE',
      'RECOMMENDATION',
      'OUTCOME',
      'AGE',
    ]);
    expect(table.stdout).toMatch(/add-farewell-run-1\s+add-farewell\s+1\s+Judged\s+5\s+complete\s+success/);
    const wide = await h.orchctl(['get', 'evals', '-o', 'wide']);
    expect(wide.stdout).toMatch(/SessionEnded\s+Judged\s+5\s+complete\s+success\s+heuristic/);

    // A spec change starts run 2; its prompt carries the assessment of run 1, before the task.
    await h.apply([
      policy({ backend: 'heuristic' }),
      simSession('add-farewell', 'Now also add a goodbye() alias for farewell(), with a test. [commits:1] [fast]'),
    ]);
    await h.waitFor('run 2 judged', judged('add-farewell-run-2'), 45_000);
    const prompt2 = fs.readFileSync(path.join(h.home, 'sessions/default/add-farewell/2/prompt.md'), 'utf8');
    expect(prompt2).toContain('## Previous run assessment');
    expect(prompt2).toContain(
      'Run 1 of this session was judged 5/5 (outcome: success; recommendation: complete) ' +
        'by the heuristic judge (Evaluation add-farewell-run-1).',
    );
    expect(prompt2).toMatch(/Accomplished:\n- 2 commits/);
    expect(prompt2.indexOf('Previous run assessment')).toBeLessThan(prompt2.indexOf('Now also add a goodbye()'));
    const prompt1 = fs.readFileSync(path.join(h.home, 'sessions/default/add-farewell/1/prompt.md'), 'utf8');
    expect(prompt1).not.toContain('Previous run assessment');

    // A follow-up session in the same project starts from the project's latest assessment.
    await h.apply([simSession('polish-greeter', 'Polish the greeter README. [commits:1] [fast]')]);
    await h.waitFor('follow-up judged', judged('polish-greeter-run-1'), 45_000);
    const prompt3 = fs.readFileSync(path.join(h.home, 'sessions/default/polish-greeter/1/prompt.md'), 'utf8');
    expect(prompt3).toContain('The latest run in project greeter (session add-farewell, run 2) was judged');

    // On demand, waiting for the verdict; a second call while it is pending would reuse it.
    const od = await h.orchctl(['judge', 'add-farewell', '--wait', '--timeout', '60s']);
    expect(od.stderr).toBe('');
    expect(od.exitCode).toBe(0);
    expect(od.stdout).toContain('evaluation.orchctl.io/add-farewell-run-2-ondemand-1 created');
    expect(od.stdout).toMatch(/add-farewell-run-2-ondemand-1: run 2 of add-farewell scored \d\/5/);
    const again = await h.orchctl(['judge', 'add-farewell']);
    expect(again.stdout).toContain('add-farewell-run-2-ondemand-2 created'); // the first one has its verdict
    const missing = await h.orchctl(['judge', 'no-such-session']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toBe('error: agentsessions "no-such-session" not found in namespace default');

    // One Evaluation per ended run, plus the two on-demand ones.
    await h.waitFor('all judged', async () => (await evaluations()).every((e) => typeof e.status?.score === 'number'));
    expect((await evaluations()).map((e) => e.metadata.name).sort()).toEqual([
      'add-farewell-run-1',
      'add-farewell-run-2',
      'add-farewell-run-2-ondemand-1',
      'add-farewell-run-2-ondemand-2',
      'polish-greeter-run-1',
    ]);

    // Metrics: the verdicts by backend and recommendation, latency, no failures.
    const x = parseExposition((await httpGet(port, '/metrics')).body);
    const total = x.find('orchctl_judge_evaluations_total', { backend: 'heuristic' }).reduce((a, s) => a + s.value, 0);
    expect(total).toBe(5);
    expect(x.value('orchctl_judge_duration_seconds_count', { backend: 'heuristic' })).toBe(5);
    expect(x.value('orchctl_judge_score_count', { backend: 'heuristic' })).toBe(5);
    expect(x.find('orchctl_judge_failures_total').reduce((a, s) => a + s.value, 0)).toBe(0);
    expect(x.value('orchctl_judge_in_flight')).toBe(0);
    expect(x.value('orchctl_llm_requests_total', { backend: 'heuristic', purpose: 'judge', result: 'success' })).toBe(
      5,
    );

    // Deleting the session deletes its Evaluations (ownerReferences).
    expect((await h.orchctl(['delete', 'session', 'add-farewell', '--wait'])).exitCode).toBe(0);
    expect((await evaluations()).map((e) => e.metadata.name)).toEqual(['polish-greeter-run-1']);
  });

  it('kill -9 mid-judgement: still one Evaluation and one verdict, judged again after the restart', async () => {
    fake = await FakeOpenAI.start(() => openai.answer(GOOD_VERDICT));
    fake.script(openai.hang()); // the first request never gets an answer
    await h.apply([
      policy({ backend: 'openai', endpoint: fake.endpoint, model: 'fake-judge', timeout: '5m', maxRetries: 0 }),
      shellSession('crash', 'echo working; exit 0', h.repo),
    ]);
    h.start();
    await h.waitFor('the judge request in flight', async () => fake!.requests.length >= 1, 45_000);
    const during = (await evaluation('crash-run-1'))!;
    expect(during.status).toMatchObject({ phase: 'Judging', attempts: 1 });
    expect(during.status?.score).toBeUndefined();

    await h.stopController('SIGKILL');
    h.start();
    const ev = await h.waitFor('judged after the restart', judged('crash-run-1'), 45_000);
    expect(ev.status).toMatchObject({
      phase: 'Judged',
      attempts: 2,
      score: GOOD_VERDICT.score,
      recommendation: GOOD_VERDICT.recommendation,
      backend: 'openai',
      model: 'fake-judge-1',
    });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1].body.messages[1].content).toContain('run 1 of session default/crash');

    // Let the controller look again (resync every 3 s): nothing more is created or asked.
    const before = ev.metadata.resourceVersion;
    await h.waitFor('another judge pass', async () => {
      const s = (await h.session('crash')) as AgentSession;
      return s.status?.lastEvaluation && (await h.store.revision()) > Number(before) + 2;
    });
    await new Promise((r) => setTimeout(r, 3500));
    const runs = (await evaluations()).filter((e) => e.spec?.sessionRef === 'crash');
    expect(runs.map((e) => e.metadata.name)).toEqual(['crash-run-1']);
    expect(runs[0].metadata.resourceVersion).toBe(before);
    expect(fake.requests).toHaveLength(2);
    expect((await h.session('crash'))!.status!.lastEvaluation).toMatchObject({
      name: 'crash-run-1',
      score: GOOD_VERDICT.score,
    });
  });
});
