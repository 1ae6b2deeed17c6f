/**
 * The real Claude Code CLI under the real orchctl controller, against the scripted fake Messages
 * API: one helper for the end-to-end tests of issue #5 (and the breaker scenario of #6).
 *
 * The Agent is the built-in template manifests/agents/claude-code.yaml with two changes: the
 * command is the pinned binary from the test cache, and the environment points Claude Code at a
 * throw-away HOME/CLAUDE_CONFIG_DIR (onboarding done, test key approved, repo trusted) and at the
 * fake. Its permission mode is `default`, so Bash commands that write ask for permission.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ROOT } from './cli.js';
import { makeHarness, type Harness } from './controller-harness.js';
import { ensureClaudeCode, makeClaudeHome, type ClaudeHome } from './claude-code.js';
import { FakeAnthropic } from './fake-anthropic.js';
import { readEventLog, eventLogPath, type AgentEvent } from '../../controller/store/eventlog.js';
import type { AgentSession } from '../../controller/api/kinds.js';

export interface ClaudeScenario {
  h: Harness;
  fake: FakeAnthropic;
  home: ClaudeHome;
  /** Applies an AgentSession of the `claude` Agent in the harness repo. */
  startSession(name: string, prompt: string, spec?: Record<string, unknown>): Promise<void>;
  events(name: string): AgentEvent[];
  cleanup(): Promise<void>;
}

/** The built-in claude-code Agent, pointed at `binary` and the fake. */
export function claudeAgent(
  binary: string,
  env: Record<string, string>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests', 'agents', 'claude-code.yaml'), 'utf8')) as {
    metadata: { name: string };
    spec: Record<string, unknown>;
  };
  const hooks = (template.spec.hooks ?? { kind: 'claude-code' }) as Record<string, unknown>;
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'claude' },
    spec: {
      ...template.spec,
      command: [binary],
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      hooks: { ...hooks, settings: { ...((hooks.settings as object) ?? {}), permissions: { defaultMode: 'default' } } },
      ...extra,
    },
  };
}

export async function startClaudeScenario(
  opts: {
    omitConfig?: Array<'hasCompletedOnboarding' | 'customApiKeyResponses' | 'trust' | 'theme'>;
    agents?: Record<string, Record<string, unknown>>;
    /** Extra `orchctl controller` flags (later flags win over the harness's). */
    controllerArgs?: string[];
  } = {},
): Promise<ClaudeScenario> {
  const binary = ensureClaudeCode();
  const fake = await FakeAnthropic.start();
  const h = await makeHarness();
  const home = makeClaudeHome({
    projectDirs: [h.repo],
    baseUrl: fake.url,
    hookEvents: [],
    root: path.join(h.dir, 'claude'),
    omitConfig: opts.omitConfig,
  });
  // Retries off so an API error shows at once; no proxy needed: QUIET_ENV keeps it off the network.
  // The throw-away HOME has no git identity: give the agent's commits one.
  const ident = {
    GIT_AUTHOR_NAME: 'orchctl agent',
    GIT_AUTHOR_EMAIL: 'agent@orchctl.io',
    GIT_COMMITTER_NAME: 'orchctl agent',
    GIT_COMMITTER_EMAIL: 'agent@orchctl.io',
  };
  const env = { ...home.env, ...ident, CLAUDE_CODE_MAX_RETRIES: '0', TERM: 'tmux-256color', LANG: 'C.UTF-8' };
  // `claude`, plus variants (name → extra spec fields, e.g. autoAnswer).
  await h.apply([
    claudeAgent(binary, env),
    ...Object.entries(opts.agents ?? {}).map(([name, extra]) => ({
      ...claudeAgent(binary, env, extra),
      metadata: { name },
    })),
  ]);
  h.start(opts.controllerArgs);
  return {
    h,
    fake,
    home,
    async startSession(name, prompt, spec = {}) {
      await h.apply([
        {
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'AgentSession',
          metadata: { name },
          spec: { agentRef: 'claude', workdir: h.repo, prompt, ...spec },
        },
      ]);
    },
    events: (name) => readEventLog(eventLogPath(h.home, 'default', name)).events,
    async cleanup() {
      await h.cleanup();
      await fake.close();
    },
  };
}

export const agentOf = (s: AgentSession | undefined) =>
  (s?.status?.agent ?? {}) as {
    state?: string;
    turns?: number;
    lastAssistantMessage?: string;
    sessionId?: string;
    transcript?: string;
    ended?: { reason: string };
    counts?: Record<string, number>;
  };
