/**
 * Issue 24 item 7: the built-in template prepares Claude Code's config directory for a run that
 * has an API key (onboarding done, the workdir trusted, the key approved), in the run's
 * workspace — never in the person's own files unless they ask.
 */
import { describe, expect, it } from 'vitest';
import { claudeCodeDriver, PREPARED_CONFIG_DIR } from '../../../controller/agents/claude-code.js';
import type { AgentSpec } from '../../../controller/api/kinds.js';

const KEY = 'sk-ant-api03-orchctl-test-key-0123456789abcdefghij';
const facts = (env: Record<string, string | undefined>) => ({
  uid: '0b7c9d3e-1111-2222-3333-444455556666',
  run: 1,
  workdir: '/work/repo',
  workspace: '/home/ws/run-1',
  env: { HOME: '/home/person', ...env },
  hookCommand: ['/usr/bin/node', '/opt/orchctl', 'hook'],
});
const agent = (configDir?: 'auto' | 'prepared' | 'user'): AgentSpec => ({
  command: ['claude'],
  hooks: { kind: 'claude-code', ...(configDir ? { configDir } : {}) },
});

describe('Claude Code config directory', () => {
  it('with an API key: a prepared directory in the workspace, onboarding done, workdir trusted, key approved', () => {
    const r = claudeCodeDriver.launch(agent(), facts({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'http://gw' }));
    expect(r.env).toEqual({ CLAUDE_CONFIG_DIR: `/home/ws/run-1/${PREPARED_CONFIG_DIR}` });
    const config = JSON.parse(r.files[`${PREPARED_CONFIG_DIR}/.claude.json`]);
    expect(config).toEqual({
      hasCompletedOnboarding: true,
      projects: { '/work/repo': { hasTrustDialogAccepted: true } },
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
    });
    expect(JSON.stringify(config)).not.toContain(KEY); // only the tail Claude Code itself records
    expect(r.transcript).toMatch(new RegExp(`^/home/ws/run-1/${PREPARED_CONFIG_DIR}/projects/-work-repo/`));
  });

  it("the person's own: without a key (a subscription login), with configDir user, or CLAUDE_CONFIG_DIR set", () => {
    for (const [a, env] of [
      [agent(), {}],
      [agent('user'), { ANTHROPIC_API_KEY: KEY }],
      [agent('prepared'), { ANTHROPIC_API_KEY: KEY, CLAUDE_CONFIG_DIR: '/home/person/.claude-work' }],
    ] as const) {
      const r = claudeCodeDriver.launch(a, facts(env));
      expect(r.env).toEqual({});
      expect(Object.keys(r.files)).toEqual(['claude-settings.json']);
    }
    const own = claudeCodeDriver.launch(agent(), facts({}));
    expect(own.transcript).toMatch(/^\/home\/person\/\.claude\/projects\//);
  });

  it('configDir prepared without a key: prepared, with nothing to approve', () => {
    const r = claudeCodeDriver.launch(agent('prepared'), facts({}));
    expect(r.env?.CLAUDE_CONFIG_DIR).toBe(`/home/ws/run-1/${PREPARED_CONFIG_DIR}`);
    expect(JSON.parse(r.files[`${PREPARED_CONFIG_DIR}/.claude.json`]).customApiKeyResponses).toBeUndefined();
  });
});
