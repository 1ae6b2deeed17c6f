/**
 * Issue 24 item 1 (a, b) end to end, with the real Claude Code CLI: a dialog the Agent's patterns
 * do not know holds the prompt. The situation of the report is rebuilt with real parts only: the
 * person's settings.json says `permissions.defaultMode: "default"`, the settings file orchctl passes
 * loses its mode on the way (a wrapper deletes that line, as before the fix), so Claude Code 2.1.330
 * opens with "Make auto mode your default permission mode?"; and the Agent's detection data is the
 * template's without that dialog (a pattern set that predates it).
 * Expected: WaitingForInput=True/UnrecognisedScreen with the dialog's text (whatever a hook said);
 * after the ready timeout PromptDelivered=False and one Warning Event PromptNotConfirmed; `send
 * --approve` refuses; once a person answers with `send --keys Down Enter`, the prompt goes in again
 * by itself and reaches the model API.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { condition } from '../support/controller-harness.js';
import { ROOT } from '../support/cli.js';
import { ensureClaudeCode } from '../support/claude-code.js';
import { startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { textTurn, userText } from '../support/fake-anthropic.js';

let sc: ClaudeScenario;
const NAME = 'unknown-dialog';
const PROMPT = 'Say hello once the dialog is gone.';

beforeAll(async () => {
  const binary = ensureClaudeCode();
  const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests', 'agents', 'claude-code.yaml'), 'utf8'));
  const detection = structuredClone(template.spec.detection) as {
    profiles: { dialogs: { name: string }[] }[];
  };
  for (const p of detection.profiles) p.dialogs = p.dialogs.filter((d) => d.name !== 'auto-mode-opt-in');
  sc = await startClaudeScenario();
  // Test-made wrapper: drops "defaultMode" from the --settings file, then runs the real CLI.
  const wrapper = path.join(sc.h.dir, 'claude-without-mode');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  fs.writeFileSync(
    wrapper,
    '#!/bin/sh\nprev=\nfor a in "$@"; do\n' +
      `  if [ "$prev" = --settings ]; then sed -i '/"defaultMode"/d' "$a"; fi\n  prev=$a\ndone\n` +
      `exec ${q(binary)} "$@"\n`,
    { mode: 0o755 },
  );
  fs.writeFileSync(
    path.join(sc.home.configDir, 'settings.json'),
    `${JSON.stringify({ permissions: { defaultMode: 'default' } }, null, 2)}\n`,
  );
  const base = (await sc.h.orchctl(['get', 'agent', 'claude', '-o', 'json'])).stdout;
  const agent = JSON.parse(base) as { spec: Record<string, unknown> };
  await sc.h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Agent',
      metadata: { name: 'claude-older-patterns' },
      spec: { ...agent.spec, command: [wrapper], hooks: { kind: 'claude-code' }, detection, readyTimeout: '6s' },
    },
  ]);
  sc.fake.script(textTurn('Hello.'));
  await sc.startSession(NAME, PROMPT, { agentRef: 'claude-older-patterns' });
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

const session = () => sc.h.session(NAME);

describe('a dialog the patterns do not know, before the prompt went in', () => {
  it('is WaitingForInput=True/UnrecognisedScreen with the screen text', async () => {
    const s = await sc.h.waitFor(
      'WaitingForInput=True',
      async () => {
        const s = await session();
        return condition(s, 'WaitingForInput')?.status === 'True' && s;
      },
      30_000,
    );
    const w = condition(s, 'WaitingForInput')!;
    expect(w.reason).toBe('UnrecognisedScreen');
    expect(w.message).toContain('Make auto mode your default permission mode?');
    expect(condition(s, 'PromptDelivered')?.status).not.toBe('True');
    // The SessionStart hook had said idle: the unknown screen wins over it.
    expect(sc.events(NAME).some((e) => e.type === 'hook' && e.hook === 'SessionStart')).toBe(true);
  });

  it('an unconfirmed delivery is PromptDelivered=False and one Warning Event PromptNotConfirmed', async () => {
    const s = await sc.h.waitFor(
      'PromptDelivered=False',
      async () => {
        const s = await session();
        return condition(s, 'PromptDelivered')?.status === 'False' && s;
      },
      60_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Unconfirmed');
    const warned = (await sc.h.events(NAME)).filter((e) => e.reason === 'PromptNotConfirmed');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ type: 'Warning', count: 1 });
    expect(sc.fake.mainRequests).toEqual([]);
    // Still held: the screen is still the one nobody recognises.
    expect(condition(s, 'WaitingForInput')).toMatchObject({ status: 'True', reason: 'UnrecognisedScreen' });
  });

  it('send --approve refuses a screen it has no keys for', async () => {
    const r = await sc.h.orchctl(['send', NAME, '--approve']);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/do not know.*--keys/s);
  });

  it('answered by hand, the screen changes and the prompt goes in again and reaches the API', async () => {
    const r = await sc.h.orchctl(['send', NAME, '--keys', 'Down', 'Enter']);
    expect(r.exitCode, r.stderr).toBe(0);
    const first = await sc.fake.waitForMain(1, 40_000);
    expect(userText(first.body)).toBe(PROMPT);
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await session();
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      30_000,
    );
    expect(s.status?.promptDelivery).toMatchObject({ delivered: true, redeliveries: 1 });
    expect(condition(s, 'WaitingForInput')?.status).toBe('False');
  });
});
