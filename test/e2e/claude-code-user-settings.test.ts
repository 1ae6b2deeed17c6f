/**
 * Issue 24 item 1, with the real Claude Code CLI: the person's own ~/.claude/settings.json says
 * `permissions.defaultMode: "default"`. Claude Code 2.1.330 then opens with "Make auto mode your
 * default permission mode?" unless a settings source it reads names a mode — so orchctl's
 * `--settings` file names one, and the Agent here is the built-in template's as it is (its hooks
 * block untouched: no permissions of the test's own).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { condition } from '../support/controller-harness.js';
import { startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { textTurn, userText } from '../support/fake-anthropic.js';

let sc: ClaudeScenario;
const PROMPT = 'Say hello, with the user settings in place.';

beforeAll(async () => {
  // The template's hooks block replaces the scenario's (which would name a mode itself).
  sc = await startClaudeScenario({ agents: { 'claude-template': { hooks: { kind: 'claude-code' } } } });
  fs.writeFileSync(
    path.join(sc.home.configDir, 'settings.json'),
    `${JSON.stringify({ permissions: { defaultMode: 'default' } }, null, 2)}\n`,
  );
  sc.fake.script(textTurn('Hello.'));
  await sc.startSession('user-settings', PROMPT, { agentRef: 'claude-template' });
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

describe('Claude Code with the user settings defaultMode "default"', () => {
  it('never shows the auto-mode opt-in dialog, and the prompt reaches the model API', async () => {
    const first = await sc.fake.waitForMain(1, 45_000);
    expect(userText(first.body)).toBe(PROMPT);
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await sc.h.session('user-settings');
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      30_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
    expect(sc.events('user-settings').filter((e) => e.type === 'pane_signal' && e.state === 'dialog')).toEqual([]);
    const settings = JSON.parse(fs.readFileSync(path.join(s.status!.workspace!, 'claude-settings.json'), 'utf8'));
    expect(settings.permissions.defaultMode).toBe('default');
  });
});
