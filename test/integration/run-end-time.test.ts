/**
 * When a run ended, not when it was noticed (issue 23 item 4): the real controller process, real
 * tmux (a socket per test), real SQLite. A run that ends while the controller is stopped gets the
 * time it ended as status.completionTime (the launch wrapper's exit-code file, tmux's
 * pane_dead_time), not the time the restarted controller saw it; a pipeline phase's finishedAt and
 * the pipeline's completionTime likewise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Tmux } from '../../controller/observers/tmux.js';
import { API_VERSION } from '../../controller/api/types.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';
import { getPipeline, phaseOfPipeline, pipelineWhen, workspaceOf } from '../support/pipeline.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** A shell agent that runs until `gate` exists, then exits with `code`. */
const gated = (gate: string, code: number) => `while [ ! -e '${gate}' ]; do sleep 0.05; done; exit ${code}`;

/** Opens the gate with the controller stopped; returns the window in which the run ended, and the restart time. */
async function endWhileStopped(gate: string, exitFile: string): Promise<{ from: number; to: number; restart: number }> {
  await h.stopController();
  const from = Date.now();
  fs.writeFileSync(gate, '');
  await h.waitFor('the run ended (exit-code file)', async () => fs.existsSync(exitFile));
  const to = Date.now();
  // The controller is down a while longer: its restart is clearly later than the end.
  await new Promise((r) => setTimeout(r, 1500));
  const restart = Date.now();
  h.start();
  return { from, to, restart };
}

it('a run that ends while the controller is stopped gets completionTime = when it ended, not its restart', async () => {
  const gate = path.join(h.dir, 'go');
  await h.apply([shellSession('offline', gated(gate, 3), h.repo)]);
  h.start();
  await h.waitFor('Running', async () => phaseOf(await h.session('offline')) === 'Running', 30_000);
  const exitFile = path.join(workspaceOf(h, 'offline', 1), 'exit-code');
  const { from, to, restart } = await endWhileStopped(gate, exitFile);

  const s = await h.waitFor('Failed', async () => {
    const x = await h.session('offline');
    return phaseOf(x) === 'Failed' && x;
  });
  expect(s.status!.exitCode).toBe(3);
  const completed = Date.parse(s.status!.completionTime!);
  expect(completed).toBeLessThan(restart);
  expect(completed).toBeGreaterThanOrEqual(from - 1000); // mtimes may be a clock tick coarser than Date.now()
  expect(completed).toBeLessThanOrEqual(to);
  expect(s.status!.completionTime).toBe(new Date(fs.statSync(exitFile).mtimeMs).toISOString());
  // The run's state.json says the same.
  const state = JSON.parse(fs.readFileSync(path.join(workspaceOf(h, 'offline', 1), 'state.json'), 'utf8'));
  expect(state.completedTime).toBe(s.status!.completionTime);
});

it('a pipeline phase whose run ends while the controller is stopped gets that time as finishedAt', async () => {
  const gate = path.join(h.dir, 'go');
  const template = { agent: { command: ['sh', '-c', gated(gate, 0)], promptDelivery: 'none' }, workdir: h.repo };
  await h.apply([
    {
      apiVersion: API_VERSION,
      kind: 'Pipeline',
      metadata: { name: 'rel' },
      spec: { phases: [{ name: 'only', template }] },
    },
  ]);
  h.start();
  await h.waitFor('the phase session Running', async () => phaseOf(await h.session('rel-only')) === 'Running', 30_000);
  const exitFile = path.join(workspaceOf(h, 'rel-only', 1), 'exit-code');
  const { from, to, restart } = await endWhileStopped(gate, exitFile);

  const p = await pipelineWhen(h, 'rel', 'the pipeline Succeeded', (x) => x.status?.phase === 'Succeeded');
  const phase = phaseOfPipeline(p, 'only')!;
  expect(phase).toMatchObject({ state: 'Succeeded', reason: 'RunSucceeded' });
  const finished = Date.parse(phase.finishedAt!);
  expect(finished).toBeLessThan(restart);
  expect(finished).toBeGreaterThanOrEqual(from - 1000);
  expect(finished).toBeLessThanOrEqual(to);
  expect(phase.finishedAt).toBe((await h.session('rel-only'))!.status!.completionTime);
  expect((await getPipeline(h, 'rel'))!.status!.completionTime).toBe(phase.finishedAt);
});

it('tmux says when a pane died (pane_dead_time), the fallback when no exit-code file was written', async () => {
  const tmux = new Tmux(h.socket);
  const before = Math.floor(Date.now() / 1000);
  await tmux.launch({
    session: 'dies',
    cwd: h.dir,
    argv: ['sh', '-c', 'exit 4'],
    env: {},
    tags: { uid: 'u-1', key: 'default/dies#1' },
  });
  const pane = await h.waitFor('the pane dead', async () => {
    const { panes } = await tmux.listPanes();
    return panes.find((x) => x.session === 'dies' && x.dead && x.exitStatus !== undefined);
  });
  const after = Math.ceil(Date.now() / 1000);
  expect(pane.exitStatus).toBe(4);
  expect(pane.deadAt).toBeGreaterThanOrEqual(before);
  expect(pane.deadAt).toBeLessThanOrEqual(after);
});
