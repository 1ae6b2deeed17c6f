/**
 * The restart annotation (orchctl.io/restartedAt) in the real controller process, with real tmux
 * (a socket per test), a real git repository, the store file and the quickstart's simulated
 * agent: a Running session stamped with it is stopped with its stop keys and gets run 2 from the
 * current spec; a Failed session with restartPolicy Never gets run 2; the same value again does
 * nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESTARTED_AT_ANNOTATION } from '../../controller/api/autopilot.js';
import type { AgentSession } from '../../controller/api/kinds.js';
import { ROOT } from '../support/cli.js';
import { makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
  await h.apply([
    { apiVersion: 'orchctl.io/v1alpha1', kind: 'Project', metadata: { name: 'greeter' }, spec: { path: h.repo } },
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Agent',
      metadata: { name: 'sim' },
      spec: { command: [process.execPath, SIM_AGENT], promptDelivery: 'argument' },
    },
  ]);
});
afterEach(async () => {
  await h.cleanup();
});

function simSession(name: string, prompt: string, spec: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name },
    spec: { agentRef: 'sim', projectRef: 'greeter', prompt, ...spec },
  };
}

/** Stamps the annotation (and any spec change) in one compare-and-swap write, as the autopilot does. */
async function stamp(name: string, value: string, spec: Record<string, unknown> = {}): Promise<void> {
  const s = (await h.session(name))!;
  const annotations = { ...s.metadata.annotations, [RESTARTED_AT_ANNOTATION]: value };
  await h.store.update({ ...s, metadata: { ...s.metadata, annotations }, spec: { ...s.spec, ...spec } });
}

const inRun = (name: string, run: number, phase: string) => async () => {
  const s = await h.session(name);
  return s?.status?.run === run && phaseOf(s) === phase && s;
};
const workspaceFile = (name: string, run: number, file: string) =>
  fs.readFileSync(path.join(h.home, 'sessions', 'default', name, String(run), file), 'utf8');
const reasons = async (name: string) => (await h.events(name)).map((e) => String(e.reason));

describe('the restart annotation', () => {
  it('a Running session is stopped with its stop keys and gets run 2 from the current spec, once', async () => {
    // Slow steps: the agent is still working when the stamp lands.
    await h.apply([simSession('busy', 'Add a farewell() function. [slow]', { env: [stepMs(3000)] })]);
    h.start();
    await h.waitFor('run 1 Running', inRun('busy', 1, 'Running'), 30_000);
    const value = new Date().toISOString();
    await stamp('busy', value, { prompt: 'Recover: add farewell() again. [slow]' });

    const s: AgentSession = await h.waitFor('run 2 Running', inRun('busy', 2, 'Running'), 30_000);
    expect(s.status!.lifecycle?.restartedAt).toBe(value);
    expect(s.status!.restarts).toBe(0);
    // Run 1 was stopped on request: the agent got C-c (it exits 130 on an interrupt).
    expect(JSON.parse(workspaceFile('busy', 1, 'state.json'))).toMatchObject({
      status: 'KILLED',
      reason: 'Stopped',
      exitCode: 130,
    });
    // Run 2 runs the current spec: the prompt written in the same write as the stamp.
    expect(workspaceFile('busy', 2, 'prompt.md')).toContain('Recover: add farewell() again.');
    const told = await h.events('busy');
    expect(told.find((e) => e.reason === 'Restarting')).toMatchObject({
      type: 'Normal',
      message: `Starting run 2 for ${RESTARTED_AT_ANNOTATION}=${value}`,
    });
    expect(told.find((e) => e.reason === 'Stopping')?.message).toContain(value);
    // The stamp and the spec change of one write start one run, not two.
    expect((await reasons('busy')).filter((r) => r === 'Started')).toHaveLength(2);
    expect((await reasons('busy')).filter((r) => r === 'NewRun')).toEqual([]);

    // The same value again (another write keeps it) does nothing.
    await stamp('busy', value);
    const cur = (await h.session('busy'))!;
    await h.store.update({ ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
    await new Promise((r) => setTimeout(r, 4000)); // past a resync (3 s) and a few observe ticks
    const after = (await h.session('busy'))!;
    expect(after.status).toMatchObject({ run: 2, phase: 'Running' });
    expect((await reasons('busy')).filter((r) => r === 'Restarting')).toHaveLength(1);
  });

  it('a Failed session with restartPolicy Never gets run 2; the same value again does nothing', async () => {
    await h.apply([simSession('broken', 'Fix the tests. [fail] [fast]', { restartPolicy: 'Never', env: [stepMs(0)] })]);
    h.start();
    const failed = await h.waitFor('run 1 Failed', inRun('broken', 1, 'Failed'), 30_000);
    expect(failed.status!.exitCode).toBe(1);

    const value = new Date().toISOString();
    await stamp('broken', value);
    const s = await h.waitFor('run 2 Failed', inRun('broken', 2, 'Failed'), 30_000);
    expect(s.status!.lifecycle?.restartedAt).toBe(value);
    expect(s.metadata.generation).toBe(failed.metadata.generation); // metadata only: no spec change
    expect((await reasons('broken')).filter((r) => r === 'Restarting')).toHaveLength(1);

    // A write that keeps the value wakes the reconciler; nothing starts.
    const cur = (await h.session('broken'))!;
    await h.store.update({ ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
    await new Promise((r) => setTimeout(r, 4000)); // past a resync (3 s)
    expect((await h.session('broken'))!.status).toMatchObject({ run: 2, phase: 'Failed' });
    await h.waitFor('no tmux session left', async () => (await h.tmuxSessions()).length === 0);
  });
});

describe('orchctl restart session', () => {
  it('gives run 2 with RESTARTS unchanged; get shows RUN 2 and describe the reason of the last start', async () => {
    await h.apply([simSession('broken', 'Fix the tests. [fail] [fast]', { restartPolicy: 'Never', env: [stepMs(0)] })]);
    h.start();
    const first = await h.waitFor('run 1 Failed', inRun('broken', 1, 'Failed'), 30_000);
    expect(first.status!.lastStart).toMatchObject({ run: 1, reason: 'FirstRun' });

    const r = await h.orchctl(['restart', 'session', 'broken']);
    expect(r).toMatchObject({ exitCode: 0, stdout: 'agentsession.orchctl.io/broken restarted' });
    const s = await h.waitFor('run 2 Failed', inRun('broken', 2, 'Failed'), 30_000);
    const value = s.metadata.annotations![RESTARTED_AT_ANNOTATION];
    expect(s.status).toMatchObject({ run: 2, restarts: 0 });
    expect(s.status!.lastStart).toEqual({
      run: 2,
      reason: 'Manual',
      time: expect.any(String),
      message: `orchctl restart (${RESTARTED_AT_ANNOTATION}=${value})`,
    });
    expect(Date.parse(s.status!.lastStart!.time)).toBeGreaterThanOrEqual(Date.parse(value));
    expect(Date.parse(s.status!.lastStart!.time)).toBeLessThanOrEqual(Date.parse(s.status!.startTime!));

    const table = (await h.orchctl(['get', 'sessions'])).stdout.trimEnd().split('\n');
    const cols = table[0].split(/\s+/);
    const row = table[1].split(/\s+/);
    expect(cols.slice(0, 6)).toEqual(['NAME', 'PHASE', 'AGENT', 'PROJECT', 'RUN', 'RESTARTS']);
    expect(row.slice(0, 6)).toEqual(['broken', 'Failed', 'sim', 'greeter', '2', '0']);

    const described = (await h.orchctl(['describe', 'session', 'broken'])).stdout;
    const block = described.slice(described.indexOf('  Last Start:\n')).split('\n').slice(0, 5);
    expect(block.map((l) => l.trim().split(/:\s+/)[0])).toEqual(['Last Start:', 'Message', 'Reason', 'Run', 'Time']);
    expect(block.slice(1).map((l) => l.trim().split(/:\s+/).slice(1).join(': '))).toEqual([
      `orchctl restart (${RESTARTED_AT_ANNOTATION}=${value})`,
      'Manual',
      '2',
      s.status!.lastStart!.time,
    ]);
  });
});

function stepMs(ms: number) {
  return { name: 'SIM_AGENT_STEP_MS', value: String(ms) };
}
