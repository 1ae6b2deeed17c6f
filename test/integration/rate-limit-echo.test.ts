/**
 * Rate limits are read from the agent's own output only (issue 24 item 5): the real controller,
 * tmux and a generic agent that echoes what is typed into it (test/support/echo-agent.mjs, read by
 * the generic detection profile). Before, the echoed continue message ("The usage limit has
 * reset…", the example policy's) matched `usage limit` in the screen's tail and paused the run
 * again at once, every defaultWait; and a prompt that mentions rate limits paused a healthy agent.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { condition, makeHarness, type Harness } from '../support/controller-harness.js';

const ECHO_AGENT = path.resolve(import.meta.dirname, '../support/echo-agent.mjs');
/** The example's policy (examples/pipeline/budget-policy.yaml), its waits short and its selector every session. */
const example = YAML.parse(fs.readFileSync(path.join(ROOT, 'examples/pipeline/budget-policy.yaml'), 'utf8'));

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const policy = () => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'default' },
  spec: { selector: {}, rateLimit: { ...example.spec.rateLimit, jitter: '1s', defaultWait: '3s' } },
});
const session = (name: string, prompt: string, limit: boolean) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name },
  spec: {
    agent: {
      command: [process.execPath, ECHO_AGENT],
      promptDelivery: 'paste',
      env: [{ name: 'ECHO_AGENT_LIMIT', value: limit ? '1' : '0' }],
    },
    workdir: h.repo,
    prompt,
  },
});
const received = (name: string) => {
  const f = path.join(h.home, `sessions/default/${name}/1/received.txt`);
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
};

describe('rate limits from the agent output only', () => {
  it('a generic agent echoing its input: one pause cycle, never re-paused by its own continue message', async () => {
    const continueMessage = example.spec.rateLimit.continueMessage as string;
    expect(continueMessage).toMatch(/usage limit/); // the text that used to re-pause the run
    await h.apply([policy(), session('echo', 'Fix the flaky test', true)]);
    h.start();
    // The real limit still pauses.
    const paused = await h.waitFor('the pause', async () => (await h.session('echo'))?.status?.pause, 30_000);
    expect(paused).toMatchObject({ reason: 'RateLimited', message: expect.stringMatching(/usage limit reached/) });
    await h.waitFor('the continue message taken', async () => received('echo').includes(continueMessage), 30_000);
    await h.waitFor('the agent done after it', async () => {
      const s = await h.session('echo');
      return s?.status?.pause === undefined && s?.status?.agent?.state === 'idle' ? s : undefined;
    });
    // Two default waits later the run is still going on: one pause cycle, no second.
    await new Promise((r) => setTimeout(r, 8000));
    const s = await h.session('echo');
    expect(s?.status?.pause).toBeUndefined();
    expect(condition(s, 'QuotaExhausted')?.status).toBe('False');
    const reasons = (await h.events('echo')).map((e) => e.reason);
    expect(reasons.filter((r) => r === 'Paused')).toHaveLength(1);
    expect(reasons.filter((r) => r === 'Resumed')).toHaveLength(1);
    expect(received('echo')).toBe(`Fix the flaky test\n${continueMessage}\n`);
  }, 90_000);

  it('a prompt "Add rate limit middleware to the API" does not pause a healthy agent', async () => {
    await h.apply([policy(), session('middleware', 'Add rate limit middleware to the API', false)]);
    h.start();
    await h.waitFor('the prompt taken', async () => received('middleware').includes('rate limit middleware'), 30_000);
    const idle = await h.waitFor('the agent done', async () => {
      const s = await h.session('middleware');
      return s?.status?.agent?.state === 'idle' && s.status.promptDelivery?.delivered ? s : undefined;
    });
    // Looked at after the echo was on screen, well past the 4 s the issue saw: not a limit.
    await new Promise((r) => setTimeout(r, 5000));
    const s = await h.session('middleware');
    expect(idle.status?.phase).toBe('Running');
    expect(s?.status?.pause).toBeUndefined();
    expect(condition(s, 'QuotaExhausted')?.status).toBe('False');
    expect((await h.events('middleware')).map((e) => e.reason)).not.toContain('Paused');
  }, 60_000);
});
