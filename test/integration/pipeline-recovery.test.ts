/**
 * Pipelines when things go wrong (issue 15 item 3, seed 003's signals), with the real controller,
 * tmux and the simulated agent:
 *  - phase_blocked: a phase reporting `blocked` stops the pipeline with its blocker as the reason
 *    (the next phase is not started) until `orchctl pipeline resume --message`, whose message is
 *    delivered into the blocked agent's pane (the agent says so in its own report) and the
 *    pipeline goes on;
 *  - session_died: a phase whose tmux session is killed gets one recovery run, with a note in its
 *    prompt; killed again, the phase and the pipeline fail and no third run starts;
 *  - the controller killed -9 between creating a phase's session and writing the pipeline's
 *    status (a failpoint), and again mid-pipeline: no phase is started twice.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../controller/api/session.js';
import { makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';
import {
  phaseOfPipeline,
  pipelineEvents,
  pipelineOf,
  pipelineWhen,
  promptOf,
  simAgent,
  workspaceOf,
} from '../support/pipeline.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const sessionIn = (name: string, run: number, phase: string) =>
  h.waitFor(`${name} run ${run} ${phase}`, async () => {
    const s = await h.session(name);
    return s?.status?.run === run && phaseOf(s) === phase && s;
  });

/** Kills a run's tmux session from outside orchctl (as a crash of tmux or a person would). */
async function killTmux(s: AgentSession): Promise<void> {
  const name = s.status?.tmuxSession ?? '';
  await h.waitFor(`tmux session ${name}`, async () => (await h.tmuxSessions()).some((t) => t.name === name));
  const r = await execa('tmux', ['-L', h.socket, 'kill-session', '-t', `=${name}`], { reject: false });
  expect(r.exitCode, r.stderr).toBe(0);
}

describe('pipeline recovery', () => {
  it('a blocked phase stops the pipeline with its reason until resume delivers the message', async () => {
    await h.apply([
      simAgent,
      pipelineOf('ship', h.repo, [
        ['stage', 'Task: deploy to staging [block:Need the staging credentials]'],
        ['prod', 'Task: deploy to production [report]'],
      ]),
    ]);
    h.start();
    const blocked = await pipelineWhen(h, 'ship', 'the pipeline Blocked', (p) => p.status?.phase === 'Blocked');
    expect(blocked.status).toMatchObject({
      reason: 'PhaseBlocked',
      message: 'phase stage: Need the staging credentials',
      current: '1/2',
      active: ['stage'],
    });
    expect(phaseOfPipeline(blocked, 'stage')).toMatchObject({ state: 'Blocked', reason: 'AgentBlocked' });
    expect(blocked.status?.conditions?.find((c) => c.type === 'Blocked')).toMatchObject({ status: 'True' });
    const get = await h.orchctl(['get', 'pipelines', '-o', 'wide']);
    expect(get.stdout).toMatch(/ship\s+1\/2\s+Blocked\s+stage\s+phase stage: Need the staging credentials/);

    // Blocked stays blocked: the agent waits, the next phase is not started.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await pipelineWhen(h, 'ship', 'still Blocked', () => true)).status?.phase).toBe('Blocked');
    expect(await h.session('ship-prod')).toBeUndefined();
    expect(phaseOf(await h.session('ship-stage'))).toBe('Running');

    const msg = 'The credentials are in vault at ops/staging';
    const r = await h.orchctl(['pipeline', 'resume', 'ship', '--message', msg, '--wait']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pipeline\.orchctl\.io\/ship resume requested\nDelivered: stage: Confirmed: /);

    const done = await pipelineWhen(
      h,
      'ship',
      'the pipeline Succeeded',
      (p) => p.status?.phase === 'Succeeded',
      60_000,
    );
    expect(done.status?.resume).toMatchObject({ state: 'Delivered', phases: ['stage'] });
    expect(phaseOfPipeline(done, 'stage')).toMatchObject({ state: 'Succeeded', run: 1, resumedAt: expect.any(String) });
    // The agent got it in its pane: it says so in its report's notes, which the next phase is handed.
    expect(promptOf(h, 'ship-prod', 1)).toContain(`resumed after: ${msg}`);
    const output = fs.readFileSync(path.join(workspaceOf(h, 'ship-stage', 1), 'output.log'), 'utf8');
    expect(output).toContain(`Message received: ${msg}`);
    const reasons = (await pipelineEvents(h, 'ship')).map((e) => e.reason);
    expect(reasons.filter((x) => x === 'PhaseBlocked')).toHaveLength(1);
    expect(reasons.filter((x) => x === 'Resumed')).toHaveLength(1);

    // A second resume with nothing blocked is taken up once and ignored.
    const again = await h.orchctl(['pipeline', 'resume', 'ship', '--wait']);
    expect(again.stderr).toMatch(/no blocked phase/);
    expect(again.stdout).toMatch(/Ignored: no phase was blocked/);
  }, 90_000);

  it('a phase whose tmux session is killed recovers once and fails on the second kill', async () => {
    await h.apply([
      simAgent,
      pipelineOf('rec', h.repo, [
        ['long', 'Task: a long job [idle]'],
        ['next', 'Task: never reached'],
      ]),
    ]);
    h.start();
    const run1 = await sessionIn('rec-long', 1, 'Running');
    await killTmux(run1);
    const run2 = await sessionIn('rec-long', 2, 'Running');
    // The recovery is a new run, not a restart-policy restart: RUN 2, RESTARTS 0, and it says why.
    expect(run2.status).toMatchObject({ restarts: 0, lastStart: { run: 2, reason: 'Recovery' } });
    expect(run2.status!.lastStart!.message).toMatch(/^the pipeline's recovery of run 1 \(orchctl\.io\/restartedAt=/);
    const recovering = await pipelineWhen(h, 'rec', 'attempts 1', (p) => phaseOfPipeline(p, 'long')?.attempts === 1);
    expect(recovering.status?.phase).toBe('Running');
    expect(phaseOfPipeline(recovering, 'long')).toMatchObject({ state: 'Running', session: 'rec-long' });
    const prompt2 = promptOf(h, 'rec-long', 2);
    expect(prompt2).toMatch(/## Why this run was restarted\n\nRun 1 of phase "long" of pipeline rec ended/);
    expect(prompt2).toContain('recovery attempt 1 of 1');

    await killTmux(run2);
    const failed = await pipelineWhen(h, 'rec', 'the pipeline Failed', (p) => p.status?.phase === 'Failed');
    expect(phaseOfPipeline(failed, 'long')).toMatchObject({
      state: 'Failed',
      reason: 'SessionDied',
      run: 2,
      attempts: 1,
    });
    expect(failed.status?.message).toMatch(/^phase long: SessionDied: the tmux session died again in run 2/);
    expect(failed.status?.conditions?.find((c) => c.type === 'Failed')).toMatchObject({ status: 'True' });

    // No third run and no next phase, through several passes (the resync is 3 s in the harness).
    await new Promise((r) => setTimeout(r, 4000));
    const s = await h.session('rec-long');
    expect(s?.status).toMatchObject({ run: 2, phase: 'Killed', reason: 'TmuxSessionLost' });
    expect(await h.session('rec-next')).toBeUndefined();
    const reasons = (await pipelineEvents(h, 'rec')).map((e) => [e.reason, e.count]);
    expect(reasons.filter(([x]) => x === 'PhaseRecovering')).toEqual([['PhaseRecovering', 1]]);
    expect(reasons.filter(([x]) => x === 'PhaseFailed')).toEqual([['PhaseFailed', 1]]);
  }, 90_000);

  it('kill -9 of the controller mid-pipeline starts no phase twice', async () => {
    // Each phase's session as first seen: it must stay that object (one create) on run 1 (one start).
    const seen = new Map<string, string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const phase of ['a', 'b', 'c']) {
          const s = await h.session(`k9-${phase}`);
          if (!s) continue;
          const id = `${s.metadata.uid}`;
          if (!seen.has(phase)) seen.set(phase, id);
          expect(seen.get(phase), `${phase} was created again`).toBe(id);
          expect(s.status?.run ?? 0, `${phase} was started twice`).toBeLessThanOrEqual(1);
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await h.apply([
      simAgent,
      pipelineOf('k9', h.repo, [
        ['a', 'Task: first [report]'],
        ['b', 'Task: second [report] [slow]'],
        ['c', 'Task: third [report]'],
      ]),
    ]);
    // 1. Killed right after creating phase a's session, before the pipeline's status says so.
    h.env.ORCHCTL_FAILPOINTS = 'pipeline-after-create';
    const first = h.start();
    delete h.env.ORCHCTL_FAILPOINTS;
    await first;
    h.controller = undefined;
    expect((await first).signal).toBe('SIGKILL');
    expect(await h.session('k9-a')).toBeDefined();
    expect((await pipelineWhen(h, 'k9', 'the pipeline', () => true)).status?.phases).toBeUndefined();

    // 2. Restarted: it finds a's session (no second), goes on; killed again while b runs.
    h.start();
    await sessionIn('k9-b', 1, 'Running');
    await h.stopController('SIGKILL');
    // b goes on without a controller (tmux keeps it), and reports complete meanwhile.
    await new Promise((r) => setTimeout(r, 1500));

    // 3. Restarted once more: b's completion is seen, c starts, the pipeline completes.
    h.start();
    const done = await pipelineWhen(h, 'k9', 'the pipeline Succeeded', (p) => p.status?.phase === 'Succeeded', 60_000);
    watching = false;
    await watcher;
    expect(done.status?.phases?.map((x) => [x.name, x.state, x.run])).toEqual([
      ['a', 'Succeeded', 1],
      ['b', 'Succeeded', 1],
      ['c', 'Succeeded', 1],
    ]);
    expect([...seen.keys()].sort()).toEqual(['a', 'b', 'c']);
    for (const phase of ['a', 'b', 'c']) {
      const s = await h.session(`k9-${phase}`);
      expect(s?.metadata.uid).toBe(seen.get(phase));
      expect(s?.status).toMatchObject({ run: 1, restarts: 0 });
    }
    // The phases' starts were each told once, whichever controller told them.
    const started = (await pipelineEvents(h, 'k9')).filter((e) => e.reason === 'PhaseStarted');
    expect(started.map((e) => [e.message, e.count]).sort()).toEqual([
      ['phase a started: session k9-a', 1],
      ['phase b started: session k9-b', 1],
      ['phase c started: session k9-c', 1],
    ]);
  }, 120_000);
});
