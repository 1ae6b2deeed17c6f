/**
 * The built-in claude-code Agent exactly as shipped (manifests/agents/claude-code.yaml applied as
 * a user applies it, `claude` found on PATH), behind a base URL that is not Anthropic's: the
 * scripted fake Messages API on 127.0.0.1, as a gateway, proxy or local model server would be.
 * A Bash task must run to the end: Claude asks permission (the shipped mode asks), the session
 * raises WaitingForInput, `orchctl send --approve` answers, the file appears, the turn ends —
 * and the "Auto mode can't check actions" dialog, which stops the task, never shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { condition, makeHarness, type Harness } from '../support/controller-harness.js';
import { ensureClaudeCode, makeClaudeHome } from '../support/claude-code.js';
import { bashTurn, FakeAnthropic, textTurn } from '../support/fake-anthropic.js';
import { eventLogPath, readEventLog } from '../../controller/store/eventlog.js';

let h: Harness;
let fake: FakeAnthropic;

beforeAll(async () => {
  const binary = ensureClaudeCode();
  fake = await FakeAnthropic.start();
  h = await makeHarness();
  const home = makeClaudeHome({
    projectDirs: [h.repo],
    baseUrl: fake.url,
    hookEvents: [],
    root: path.join(h.dir, 'claude'),
  });
  // `claude` on PATH, its configuration in the controller's environment: nothing in the Agent is
  // changed. The agent gets only the base (PATH, HOME, TMPDIR, LANG…) and what the template's
  // inheritEnv names (ANTHROPIC_*, CLAUDE_*, DISABLE_*); the throw-away HOME has no git identity,
  // so the session passes one in its env, as a user without a ~/.gitconfig would.
  const bin = path.join(h.dir, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(binary, path.join(bin, 'claude'));
  const ident = {
    GIT_AUTHOR_NAME: 'orchctl agent',
    GIT_AUTHOR_EMAIL: 'agent@orchctl.io',
    GIT_COMMITTER_NAME: 'orchctl agent',
    GIT_COMMITTER_EMAIL: 'agent@orchctl.io',
  };
  Object.assign(h.env, home.env, {
    CLAUDE_CODE_MAX_RETRIES: '0',
    TERM: 'tmux-256color',
    LANG: 'C.UTF-8',
    PATH: `${bin}:${h.env.PATH}`,
  });
  const applied = await h.orchctl(['apply', '-f', path.join(ROOT, 'manifests', 'agents', 'claude-code.yaml')]);
  expect(applied.exitCode, applied.stderr).toBe(0);
  fake.script(bashTurn('echo done > done.txt', { text: 'Creating done.txt.' }), textTurn('Created done.txt.'));
  h.start();
  await h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 'tpl' },
      spec: {
        agentRef: 'claude-code',
        workdir: h.repo,
        prompt: 'Create done.txt containing "done" with one Bash command.',
        env: Object.entries(ident).map(([name, value]) => ({ name, value })),
      },
    },
  ]);
}, 15 * 60_000);

afterAll(async () => {
  await h?.cleanup();
  await fake?.close();
});

describe('the shipped claude-code template behind a non-Anthropic base URL', () => {
  it(
    'asks permission for the Bash call, is approved with orchctl send --approve, and finishes the task',
    async () => {
      const waiting = await h.waitFor(
        'WaitingForInput=True',
        async () => {
          const s = await h.session('tpl');
          return condition(s, 'WaitingForInput')?.status === 'True' && s;
        },
        90_000,
      );
      expect(condition(waiting, 'WaitingForInput')).toMatchObject({
        reason: 'PermissionPrompt',
        message: expect.stringContaining('echo done > done.txt'),
      });
      const r = await h.orchctl(['send', 'tpl', '--approve']);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      const done = path.join(h.repo, 'done.txt');
      // The shell creates the file before it writes to it: wait for its content, not its existence.
      const written = () => (fs.existsSync(done) ? fs.readFileSync(done, 'utf8') : undefined);
      await h.waitFor('done.txt written by the agent', async () => !!written(), 30_000);
      expect(written()).toBe('done\n');
      await h.waitFor('the turn ended', async () => (await fake.waitForMain(2, 30_000)) && true, 40_000);
      const events = readEventLog(eventLogPath(h.home, 'default', 'tpl')).events;
      expect(events.some((e) => e.type === 'pane_signal' && e.state === 'dialog')).toBe(false);
    },
    5 * 60_000,
  );
});
