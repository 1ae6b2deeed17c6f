/**
 * Time boxes under the autopilot (issue 25 §3, seed 002 §2.7), end to end with the real controller,
 * real tmux, real git and the quickstart's simulated agent: a run stopped at its time box is class
 * TimeBox (not Logic), the next run continues from where it stopped with a note that the time ran
 * out, counted against maxTimeBoxContinuations (not maxErrorRetries), the person is told
 * (TimeBoxContinued), and past the limit it escalates. A session the autopilot starts gets the
 * default 45m time box.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Decision } from '../../controller/api/autopilot.js';
import type { Project } from '../../controller/api/project.js';
import { API_VERSION } from '../../controller/api/types.js';
import { ROOT } from '../support/cli.js';
import { makeHarness, type Harness } from '../support/controller-harness.js';

const SIM_AGENT = path.join(ROOT, 'examples/quickstart/agent/sim-agent.mjs');
const ns = 'default';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const simAgent = {
  apiVersion: API_VERSION,
  kind: 'Agent',
  metadata: { name: 'sim' },
  spec: {
    command: [process.execPath, SIM_AGENT],
    promptDelivery: 'argument',
    env: [{ name: 'SIM_AGENT_STEP_MS', value: '100' }],
  },
};

const pilot = (guardrails: Record<string, unknown>, template: Record<string, unknown> = {}) => ({
  apiVersion: API_VERSION,
  kind: 'Autopilot',
  metadata: { name: 'pilot' },
  spec: {
    autonomyLevel: 'full',
    projectSelector: {},
    interval: '10s',
    planner: { backend: 'heuristic' },
    guardrails: { cooldowns: { sameProject: '0s', sameAction: '0s' }, ...guardrails },
    sessionTemplate: { agentRef: 'sim', ...template },
  },
});

async function decisions(): Promise<Decision[]> {
  const { items } = await h.store.list('Decision', { namespace: ns });
  return (items as Decision[]).sort((a, b) => (a.spec?.think ?? 0) - (b.spec?.think ?? 0));
}
const getProject = async (name: string) => (await h.store.get({ kind: 'Project', namespace: ns, name })) as Project;
const promptOf = (session: string, run: number) =>
  fs.readFileSync(path.join(h.home, 'sessions', ns, session, String(run), 'prompt.md'), 'utf8');

describe('autopilot time boxes', () => {
  it('a run stopped at its time box is TimeBox: continued, counted apart, then escalated', async () => {
    await h.apply([
      { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'long' }, spec: { path: h.repo } },
      simAgent,
      {
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name: 'long-1' },
        // [idle]: it commits, then stays at its prompt until the 4 s time box stops it.
        spec: {
          agentRef: 'sim',
          projectRef: 'long',
          prompt: 'Write the parser. [idle] [commits:1]',
          maxDuration: '4s',
        },
      },
      // Error retries are all used (0): the time box continuation has its own limit.
      pilot({ maxErrorRetries: 0, maxTimeBoxContinuations: 1 }),
    ]);
    h.start();

    const escalation = await h.waitFor(
      'the escalation after run 2 ran out of time too',
      async () =>
        (await decisions()).find((d) => d.spec?.action === 'notify' && d.spec.recovery?.run === 2 && d.status?.phase),
      90_000,
    );
    const all = await decisions();
    const [cont, ...more] = all.filter((d) => d.spec?.action === 'restart');
    expect(more).toEqual([]);
    expect(cont.spec?.recovery).toMatchObject({ class: 'TimeBox', run: 1, attempt: 1 });
    expect(cont.spec?.reason).toContain('reached its time box');
    expect(cont.status?.phase).toBe('Executed');
    expect(escalation.spec?.recovery).toMatchObject({ class: 'TimeBox', run: 2 });
    expect(escalation.spec?.reason).toContain('maxTimeBoxContinuations is 1');

    const prompt = promptOf('long-1', 2);
    expect(prompt).toContain('Write the parser.');
    expect(prompt).toContain('Continuation 1 of 1: the previous run (run 1) was stopped at its time box.');
    expect(prompt).not.toContain('find and fix the failure');

    const p = await getProject('long');
    expect(p.status?.errorRetries).toMatchObject({ count: 0, timeBoxes: 1, lastFailure: { class: 'TimeBox', run: 2 } });
    const events = (await h.store.list('Event', { namespace: ns })).items;
    const told = events.filter((e) => e.reason === 'TimeBoxContinued');
    expect(told).toHaveLength(1);
    expect((told[0].involvedObject as { name: string }).name).toBe('long');
    expect(String(told[0].message)).toContain('long-1 continues in a new run');
    // Both runs were stopped at the time box (one Event object, counted per run).
    const exceeded = events.filter((e) => e.reason === 'TimeBoxExceeded');
    expect(exceeded.reduce((n, e) => n + Number((e as { count?: number }).count ?? 1), 0)).toBe(2);
  }, 150_000);

  it('a session the autopilot starts is time-boxed at 45m by default', async () => {
    await h.apply([
      { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'idle' }, spec: { path: h.repo } },
      simAgent,
      pilot({ stalenessDays: 0 }),
    ]);
    h.start();
    const started = await h.waitFor('a session started by the autopilot', async () => {
      const { items } = await h.store.list('AgentSession', { namespace: ns });
      return items[0];
    });
    expect((started.spec as { maxDuration?: string }).maxDuration).toBe('45m');
  }, 60_000);
});
