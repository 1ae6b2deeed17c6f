/**
 * Issue #5, startup dialogs, with the real Claude Code CLI: its config does not trust the
 * working directories, so the workspace-trust dialog comes up before anything else (and before
 * any hook). One Agent has no auto-answer: the session raises WaitingForInput naming the dialog,
 * with its text, and an `orchctl send --keys` answer lets the prompt through. The other Agent
 * opts in (`autoAnswer: [workspace-trust]`): the controller answers it and the prompt goes in.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { condition } from '../support/controller-harness.js';
import { startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';

let sc: ClaudeScenario;
const dirs: Record<string, string> = {};

beforeAll(async () => {
  sc = await startClaudeScenario({
    omitConfig: ['trust'],
    agents: { 'claude-auto': { autoAnswer: ['workspace-trust'] } },
  });
  for (const n of ['manual', 'auto']) {
    dirs[n] = path.join(sc.h.dir, `untrusted-${n}`);
    fs.mkdirSync(dirs[n]);
  }
  await sc.startSession('manual', 'Say hello.', { workdir: dirs.manual });
  await sc.startSession('auto', 'Say hello too.', { workdir: dirs.auto, agentRef: 'claude-auto' });
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

describe('Claude Code startup dialogs', () => {
  it('surfaces the workspace-trust dialog as WaitingForInput with its name and text', async () => {
    const s = await sc.h.waitFor(
      'WaitingForInput=True (StartupDialog)',
      async () => {
        const s = await sc.h.session('manual');
        return condition(s, 'WaitingForInput')?.status === 'True' && s;
      },
      30_000,
    );
    const w = condition(s, 'WaitingForInput')!;
    expect(w.reason).toBe('StartupDialog');
    expect(w.message).toMatch(/^startup dialog workspace-trust: /);
    expect(w.message).toMatch(/trust/i);
    expect(condition(s, 'PromptDelivered')?.status).toBe('Unknown'); // still waiting for the input box
    expect(
      sc
        .events('manual')
        .some((e) => e.type === 'pane_signal' && e.state === 'dialog' && e.detail === 'workspace-trust'),
    ).toBe(true);
  });

  it('an answer sent with orchctl send --keys lets the prompt through, verified', async () => {
    const r = await sc.h.orchctl(['send', 'manual', '--keys', 'Down', 'Enter']);
    expect(r.exitCode).toBe(0);
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await sc.h.session('manual');
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      40_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
    expect(condition(s, 'WaitingForInput')?.status).toBe('False');
  });

  it('an Agent that opts in gets the dialog answered by the controller', async () => {
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await sc.h.session('auto');
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      40_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
    const answered = (await sc.h.events('auto')).find((e) => e.reason === 'AutoAnswered');
    expect(answered?.message).toMatch(/^workspace-trust: /);
    expect(sc.events('auto').some((e) => e.type === 'pane_signal' && e.state === 'dialog')).toBe(true);
    // The manual session was never answered by the controller.
    expect((await sc.h.events('manual')).some((e) => e.reason === 'AutoAnswered')).toBe(false);
  });
});
