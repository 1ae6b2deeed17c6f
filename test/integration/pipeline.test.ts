/**
 * Pipelines end to end (issue 15 item 3): the real controller process, real tmux and git, the
 * quickstart's simulated agent. Three phases complete in order, each offered the handoff of the
 * one before (its handoff.md and report notes in the next phase's prompt.md); a phase that reports
 * complete while its agent still runs is stopped; `get` and `describe` show it; deleting the
 * pipeline deletes its sessions and their tmux sessions. A phase whose status.json turns corrupt,
 * oversized or hostile gives the pipeline a warning Event each and changes nothing else.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PHASE_LABEL, PIPELINE_LABEL } from '../../controller/api/pipeline.js';
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

describe('pipeline', () => {
  it('three phases complete in order, each handed the handoff of the one before', async () => {
    await h.apply([
      simAgent,
      pipelineOf('rel', h.repo, [
        // Reports complete, then waits at its prompt as an interactive agent does: the pipeline stops it.
        ['design', 'Task: design the greeter [report] [idle]'],
        ['build', 'Task: build the greeter [report]'],
        // No report at all: its run succeeding completes it.
        ['docs', 'Task: document the greeter'],
      ]),
    ]);
    h.start();
    const done = await pipelineWhen(h, 'rel', 'the pipeline Succeeded', (p) => p.status?.phase === 'Succeeded', 60_000);
    expect(done.status).toMatchObject({ current: '3/3', completed: 3, total: 3, reason: 'AllPhasesCompleted' });
    expect(done.status?.phases?.map((x) => [x.name, x.state, x.session, x.run, x.reason])).toEqual([
      ['design', 'Succeeded', 'rel-design', 1, 'ReportedComplete'],
      ['build', 'Succeeded', 'rel-build', 1, 'ReportedComplete'],
      ['docs', 'Succeeded', 'rel-docs', 1, 'RunSucceeded'],
    ]);

    // The handoff of each phase is in the next phase's prompt, as the agent wrote it.
    const designHandoff = fs.readFileSync(path.join(workspaceOf(h, 'rel-design', 1), 'handoff.md'), 'utf8').trim();
    expect(designHandoff).toMatch(/^# Handoff: design the greeter/);
    const buildPrompt = promptOf(h, 'rel-build', 1);
    expect(buildPrompt).toContain(
      `Task: build the greeter [report]\n\n## Handoff from phase design\n\n${designHandoff}`,
    );
    expect(buildPrompt).toMatch(/Notes from its progress report: design the greeter — \d commit/);
    const buildHandoff = fs.readFileSync(path.join(workspaceOf(h, 'rel-build', 1), 'handoff.md'), 'utf8').trim();
    expect(promptOf(h, 'rel-docs', 1)).toContain(`## Handoff from phase build\n\n${buildHandoff}`);
    expect(promptOf(h, 'rel-docs', 1)).not.toContain('Handoff from phase design');
    expect(promptOf(h, 'rel-design', 1)).not.toContain('## Handoff');

    // Owned and labelled; the phase that completed while its agent ran was stopped by the pipeline.
    const design = await h.waitFor('the design session stopped', async () => {
      const s = await h.session('rel-design');
      return phaseOf(s) === 'Killed' && s;
    });
    expect(design?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Pipeline', name: 'rel', uid: done.metadata.uid, controller: true }),
    ]);
    expect(design?.metadata.labels).toMatchObject({ [PIPELINE_LABEL]: 'rel', [PHASE_LABEL]: 'design' });
    expect(design?.spec?.desiredState).toBe('Stopped');
    expect(design?.status).toMatchObject({ phase: 'Killed', reason: 'Stopped', report: { status: 'complete' } });
    expect((await h.session('rel-docs'))?.status).toMatchObject({ phase: 'Succeeded', run: 1 });

    // Each once (Events of one second have no order between them).
    const events = (await pipelineEvents(h, 'rel')).map((e) => [e.reason, e.message, e.count]);
    expect(events).toHaveLength(7);
    expect(events).toEqual(
      expect.arrayContaining([
        ['PhaseStarted', 'phase design started: session rel-design', 1],
        ['PhaseSucceeded', 'phase design completed: the agent reported complete (3/3 tasks)', 1],
        ['PhaseStarted', 'phase build started: session rel-build', 1],
        ['PhaseSucceeded', 'phase build completed: the agent reported complete (3/3 tasks)', 1],
        ['PhaseStarted', 'phase docs started: session rel-docs', 1],
        ['PhaseSucceeded', 'phase docs completed: run 1 Succeeded (no report)', 1],
        ['Succeeded', 'all 3 phases completed', 1],
      ]),
    );

    const get = await h.orchctl(['get', 'pipelines']);
    expect(get.stdout).toMatch(/^NAME\s+PHASE\s+STATUS\s+AGE\nrel\s+3\/3\s+Succeeded\s+\d+s$/);
    const describe = await h.orchctl(['describe', 'pl', 'rel']);
    expect(describe.stdout).toMatch(/Status:\s+Succeeded\nPhase:\s+3\/3/);
    expect(describe.stdout).toMatch(/Name\s+State\s+Depends On\s+Session\s+Run\s+Recoveries\s+Age\s+Why/);
    expect(describe.stdout).toMatch(/build\s+Succeeded\s+design\s+rel-build\s+1\s+0\s+\d+s\s+ReportedComplete/);
  }, 90_000);

  it('deleting a pipeline deletes its sessions and stops their runs', async () => {
    await h.apply([simAgent, pipelineOf('gone', h.repo, [['only', 'Task: wait around [idle]']])]);
    h.start();
    const s = await h.waitFor('the phase running', async () => {
      const s = await h.session('gone-only');
      return phaseOf(s) === 'Running' && s;
    });
    await h.waitFor('its tmux session', async () =>
      (await h.tmuxSessions()).some((t) => t.name === s.status?.tmuxSession),
    );
    const r = await h.orchctl(['delete', 'pipeline', 'gone']);
    expect(r.exitCode, r.stderr).toBe(0);
    await h.waitFor('the session deleted', async () => !(await h.session('gone-only')));
    await h.waitFor(
      'its tmux session gone',
      async () => !(await h.tmuxSessions()).some((t) => t.name === s.status?.tmuxSession),
    );
  }, 60_000);

  it('a corrupt, oversized or hostile status.json: a warning Event each, nothing else changes', async () => {
    // A script phase: a good report, then three bad ones (each waiting for the test), then complete.
    const ws = '"$ORCHCTL_WORKSPACE"';
    const write = (text: string) => `printf '%s' '${text}' > ${ws}/t.json; mv ${ws}/t.json ${ws}/status.json`;
    const wait = (f: string) => `while [ ! -f ${f} ]; do sleep 0.1; done`;
    const good = (status: string) =>
      JSON.stringify({
        status,
        tasks: [{ id: '1', subject: 'one', state: status === 'complete' ? 'done' : 'in_progress' }],
      });
    const script = [
      write(good('executing')),
      wait('go1'),
      write('{"status": "exec'),
      wait('go2'),
      `head -c 300000 /dev/zero | tr '\\0' ' ' > ${ws}/t.json; mv ${ws}/t.json ${ws}/status.json`,
      wait('go3'),
      // Hostile: an escape sequence and a status outside the schema (a forged "complete" is not read).
      write('{"status": "complete\\u001b[2J", "blocker": "\\u001b]0;pwned\\u0007"}'),
      wait('go4'),
      write(good('complete')),
    ].join('; ');
    const shell = { command: ['sh', '-c', script], promptDelivery: 'none' };
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'Pipeline',
        metadata: { name: 'rep' },
        spec: {
          phases: [
            { name: 'work', template: { agent: shell, workdir: h.repo, prompt: 'report' } },
            {
              name: 'after',
              template: { agent: { command: ['true'], promptDelivery: 'none' }, workdir: h.repo, prompt: 'x' },
            },
          ],
        },
      },
    ]);
    h.start();
    const base = await pipelineWhen(h, 'rep', 'the phase running with its report', (p) =>
      /1 tasks/.test(phaseOfPipeline(p, 'work')?.message ?? ''),
    );
    const stable = (p: typeof base) => ({
      phase: p.status?.phase,
      current: p.status?.current,
      work: { ...phaseOfPipeline(p, 'work'), reportProblem: undefined },
      after: phaseOfPipeline(p, 'after'),
    });
    const expected = stable(base);
    expect(expected).toMatchObject({ phase: 'Running', current: '1/2', work: { state: 'Running' } });
    const problems: string[] = [];
    for (const [go, pattern] of [
      ['go1', /^status\.json is not valid JSON/],
      ['go2', /^status\.json is 300000 bytes, over the 256 KiB limit/],
      ['go3', /^status\.json does not match the report schema/],
    ] as const) {
      fs.writeFileSync(path.join(h.repo, go), '');
      const p = await pipelineWhen(h, 'rep', `the problem after ${go}`, (p) =>
        pattern.test(phaseOfPipeline(p, 'work')?.reportProblem ?? ''),
      );
      problems.push(phaseOfPipeline(p, 'work')!.reportProblem!);
      expect(stable(p)).toEqual(expected);
      expect(await h.session('rep-after')).toBeUndefined();
    }
    expect(problems.join('')).not.toMatch(/[\u0000-\u001f]/);
    const warnings = (await pipelineEvents(h, 'rep')).filter((e) => e.reason === 'InvalidReport');
    expect(warnings.map((e) => [e.type, e.count, e.message])).toEqual(
      problems.map((m) => ['Warning', 1, `phase work: ${m}`]),
    );

    fs.writeFileSync(path.join(h.repo, 'go4'), '');
    const done = await pipelineWhen(h, 'rep', 'the pipeline Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(phaseOfPipeline(done, 'work')).toMatchObject({ state: 'Succeeded', reason: 'ReportedComplete' });
  }, 90_000);
});
