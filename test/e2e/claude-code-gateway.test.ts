/**
 * Issue 24 item 7, with the real Claude Code CLI: the documented gateway setup. A fresh HOME and
 * only ANTHROPIC_BASE_URL (the fake Messages API, standing in for a gateway) and
 * ANTHROPIC_API_KEY in the Agent's environment. With the built-in template's hooks (configDir
 * auto) the run gets a prepared config directory and the prompt reaches the API; with the
 * person's own config directory (configDir user) the CLI's first-run check goes to
 * api.anthropic.com and fails, and the session says AgentCannotConnect instead of "exit code 1".
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { condition } from '../support/controller-harness.js';
import { claudeAgent, startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { ensureClaudeCode } from '../support/claude-code.js';
import { textTurn, userText } from '../support/fake-anthropic.js';

let sc: ClaudeScenario;
const PROMPT = 'Say hello through the gateway.';
const KEY = 'sk-ant-api03-orchctl-gateway-key-000000000000';
const homes: Record<string, string> = {};

beforeAll(async () => {
  sc = await startClaudeScenario();
  const binary = ensureClaudeCode();
  const agents = [];
  for (const [name, configDir] of [
    ['claude-gateway', undefined],
    ['claude-own-config', 'user'],
  ] as const) {
    homes[name] = path.join(sc.h.dir, `home-${name}`);
    fs.mkdirSync(homes[name]);
    const env = { HOME: homes[name], ANTHROPIC_BASE_URL: sc.fake.url, ANTHROPIC_API_KEY: KEY };
    const template = claudeAgent(binary, env) as { spec: { hooks: Record<string, unknown> } };
    // The template's hooks as they are (claudeAgent adds a permission mode of the tests' own).
    const hooks = { kind: 'claude-code', configDir: 'auto', ...(configDir ? { configDir } : {}) };
    agents.push({ ...template, metadata: { name }, spec: { ...template.spec, hooks } });
  }
  await sc.h.apply(agents);
  sc.fake.script(textTurn('Hello from behind the gateway.'));
  await sc.startSession('gateway', PROMPT, { agentRef: 'claude-gateway' });
  await sc.startSession('own-config', PROMPT, { agentRef: 'claude-own-config', restartPolicy: 'Never' });
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

describe('Claude Code behind a gateway, from a fresh HOME', () => {
  it('the template prepares the config directory and the prompt reaches the API', async () => {
    const first = await sc.fake.waitForMain(1, 45_000);
    expect(userText(first.body)).toBe(PROMPT);
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await sc.h.session('gateway');
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      30_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
    const config = JSON.parse(
      fs.readFileSync(path.join(s.status!.workspace!, 'claude-config', '.claude.json'), 'utf8'),
    );
    expect(config.hasCompletedOnboarding).toBe(true);
    // The person's files are not touched: nothing was written into their fresh HOME's config.
    expect(fs.existsSync(path.join(homes['claude-gateway'], '.claude.json'))).toBe(false);
  });

  it("with the person's own fresh config the CLI cannot connect, and the reason says so", async () => {
    const s = await sc.h.waitFor(
      'own-config Failed',
      async () => {
        const s = await sc.h.session('own-config');
        return s?.status?.phase === 'Failed' && s;
      },
      60_000,
    );
    expect(s.status).toMatchObject({ exitCode: 1, reason: 'AgentCannotConnect' });
    expect(s.status?.message).toContain('Unable to connect to Anthropic services');
  });
});
