/**
 * A run started by the restart annotation continues from the previous run's handoff (issue 15):
 * the real controller, tmux, git and the simulated agent. Run 1 left $ORCHCTL_WORKSPACE/handoff.md;
 * run 2's prompt has "## Handoff from the previous run" with it (rehydrate.ts). A restart after a
 * run that left none gets no such section.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESTARTED_AT_ANNOTATION, RESTART_NOTE_ANNOTATION } from '../../controller/api/autopilot.js';
import { HANDOFF_HEADING } from '../../controller/reconcilers/session/rehydrate.js';
import { ROOT } from '../support/cli.js';
import { makeHarness, phaseOf, type Harness } from '../support/controller-harness.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
  await h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Agent',
      metadata: { name: 'sim' },
      spec: { command: [process.execPath, SIM_AGENT], promptDelivery: 'argument' },
    },
    ...['with', 'without'].map((name) => ({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name },
      spec: {
        agentRef: 'sim',
        workdir: h.repo,
        prompt: 'Fix the tests. [fail] [fast]',
        restartPolicy: 'Never',
        env: [{ name: 'SIM_AGENT_STEP_MS', value: '0' }],
      },
    })),
  ]);
});
afterEach(async () => {
  await h.cleanup();
});

const file = (name: string, run: number, f: string) => path.join(h.home, 'sessions', 'default', name, String(run), f);
const inRun = (name: string, run: number) => async () => {
  const s = await h.session(name);
  return s?.status?.run === run && phaseOf(s) === 'Failed' && s;
};

async function restart(name: string, note: string): Promise<void> {
  const s = (await h.session(name))!;
  const annotations = {
    ...s.metadata.annotations,
    [RESTARTED_AT_ANNOTATION]: new Date().toISOString(),
    [RESTART_NOTE_ANNOTATION]: note,
  };
  await h.store.update({ ...s, metadata: { ...s.metadata, annotations } });
}

describe('a restarted run and the handoff', () => {
  it('gets the previous run’s handoff.md in its prompt; a run that left none gives none', async () => {
    h.start();
    await h.waitFor('run 1 of both over', async () => (await inRun('with', 1)()) && (await inRun('without', 1)()));
    // What an agent asked for its handoff writes (control characters and all: they are dropped).
    fs.writeFileSync(file('with', 1, 'handoff.md'), '# State\nthe parser is half done\u0003\n# Next\nthe lexer\n');
    await restart('with', 'the context window was full');
    await restart('without', 'again');
    await h.waitFor('run 2 of both over', async () => (await inRun('with', 2)()) && (await inRun('without', 2)()));
    const prompt = fs.readFileSync(file('with', 2, 'prompt.md'), 'utf8');
    expect(prompt).toContain('Fix the tests.');
    expect(prompt).toContain('the context window was full');
    expect(prompt).toContain(HANDOFF_HEADING);
    expect(prompt).toContain('the parser is half done\n# Next\nthe lexer');
    expect(prompt).not.toContain('\u0003');
    expect(fs.readFileSync(file('without', 2, 'prompt.md'), 'utf8')).not.toContain(HANDOFF_HEADING);
  });
});
