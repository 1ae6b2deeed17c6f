/**
 * A rate limit end to end (issue 15 item 4): the real controller, tmux and an agent that draws
 * Claude Code's screen (test/support/limit-agent.mjs) read through the built-in claude-code
 * Agent's own detection data. The first prompt hits the limit ("Your usage resets in 10
 * seconds."): the session is paused — phase Running, not Failed, no restart, a Paused Event,
 * `get sessions` says RateLimited until HH:MM — and once the reset (plus jitter) has passed the
 * continue message arrives in the agent's input, the pause ends (Resumed) and the run goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSpec } from '../../controller/api/kinds.js';
import { clock } from '../../controller/api/pause.js';
import { ROOT } from '../support/cli.js';
import { condition, makeHarness, type Harness } from '../support/controller-harness.js';

const LIMIT_AGENT = path.resolve(import.meta.dirname, '../support/limit-agent.mjs');
const claude = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8')) as {
  spec: AgentSpec;
};

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

describe('rate-limit pause', () => {
  it('a limit on screen, reset 10 s ahead: paused (Running), then resumed with the continue message', async () => {
    // Claude Code's delivery, stop keys and detection data; its hooks are not, since this is not Claude Code.
    const { hooks: _, args: __, pricing: ___, ...spec } = claude.spec;
    const agent = { ...spec, command: [process.execPath, LIMIT_AGENT], env: [{ name: 'LIMIT_RESET_S', value: '10' }] };
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'default' },
        spec: { selector: {}, rateLimit: { jitter: '2s', continueMessage: 'Go on from where you stopped.' } },
      },
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        metadata: { name: 'limited' },
        spec: { agent, workdir: h.repo, prompt: 'Fix the flaky test', restartPolicy: 'OnFailure' },
      },
    ]);
    h.start();
    const received = () => {
      const ws = path.join(h.home, 'sessions/default/limited/1/received.txt');
      return fs.existsSync(ws) ? fs.readFileSync(ws, 'utf8') : '';
    };

    const paused = await h.waitFor(
      'the pause',
      async () => {
        const s = await h.session('limited');
        return s?.status?.pause ? s : undefined;
      },
      30_000,
    );
    const seen = Date.now();
    const st = paused.status!;
    expect(received()).toBe('Fix the flaky test\n');
    expect(st.phase).toBe('Running');
    expect(st.pause).toMatchObject({ run: 1, reason: 'RateLimited', holdsSlot: true });
    // The reset was read from the screen (10 s after the controller saw it), plus at most 2 s of jitter.
    const until = Date.parse(st.pause!.until!);
    const since = Date.parse(st.pause!.since);
    expect(until - since).toBeGreaterThanOrEqual(9000);
    expect(until - since).toBeLessThanOrEqual(12_500);
    expect(st.pause!.message).toMatch(/when the limit resets/);
    expect(st.reason).toBe('RateLimited');
    expect(condition(paused, 'QuotaExhausted')?.status).toBe('True');
    expect(condition(paused, 'Paused')).toMatchObject({ status: 'True', reason: 'RateLimited' });
    const table = await h.orchctl(['get', 'sessions']);
    expect(table.stdout).toMatch(new RegExp(`limited\\s+RateLimited \\(until ${clock(st.pause!.until!)}\\)\\s`));

    // Nothing is sent before the reset.
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now() - 2000)));
    expect(received()).toBe('Fix the flaky test\n');

    const resumed = await h.waitFor(
      'the resume',
      async () => {
        const s = await h.session('limited');
        return s?.status?.pause === undefined && s?.status?.reason === 'Running' ? s : undefined;
      },
      30_000,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    expect(Date.now() - seen).toBeLessThan(30_000);
    expect(received()).toBe('Fix the flaky test\nGo on from where you stopped.\n');
    expect(resumed.status).toMatchObject({ phase: 'Running', run: 1, restarts: 0 });
    expect(condition(resumed, 'Paused')?.status).toBe('False');
    // The notice is stale after the new prompt: the limit is over.
    await h.waitFor(
      'QuotaExhausted False',
      async () => condition(await h.session('limited'), 'QuotaExhausted')?.status === 'False',
    );

    const events = (await h.events('limited')).map((e) => `${e.reason}: ${e.message}`);
    const pausedAt = events.findIndex((e) => e.startsWith('Paused: RateLimited until '));
    const resumedAt = events.findIndex((e) => /^Resumed: Resumed after \S+ RateLimited: continue message/.test(e));
    expect(pausedAt).toBeGreaterThanOrEqual(0);
    expect(resumedAt).toBeGreaterThan(pausedAt);
    // Not a failure, not a restart, not a stop.
    expect(events.filter((e) => /^(Error|BackOff|Stopping|Escalated|Completed|Restarting|NewRun): /.test(e))).toEqual(
      [],
    );
    expect((await h.tmuxSessions()).filter((t) => !t.dead)).toHaveLength(1);
  }, 90_000);
});
