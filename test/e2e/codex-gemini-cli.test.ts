/**
 * Issue 30 groundwork: the real, pinned Codex and Gemini CLIs (installed from the npm registry into
 * test/.cache by scripts/agents/install.mjs) run in real tmux on a temp git repo against their
 * scripted fakes on 127.0.0.1 — no orchctl controller yet. Each takes a typed prompt, runs the
 * fake's shell tool call that edits a file and commits, and shows the fake's 429.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  FakeGemini,
  geminiCall,
  geminiFunctionResponses,
  geminiRateLimit,
  geminiSettings,
  geminiText,
  geminiUserTexts,
} from '../support/fake-gemini.js';
import {
  FakeResponses,
  callOutputs,
  callTurn,
  codexConfig,
  rateLimitTurn,
  textTurn,
  userTexts,
} from '../support/fake-openai-responses.js';
import { processesIn } from '../support/controller-harness.js';
import { TmuxPane } from '../support/tmux-pane.js';
import { until } from '../support/until.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const install = (agent: string) =>
  execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'agents', 'install.mjs'), agent], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 15 * 60_000,
  }).trim();

/**
 * Codex's arguments as the built-in template gives them (`--no-daemon`): without it the CLI starts an
 * app-server daemon that outlives its pane and, once the test's temp dir is removed, makes parts of
 * it again (each run of the suite left two daemons and a temp dir behind).
 */
const CODEX_ARGS: string[] = YAML.parse(fs.readFileSync(path.join(repoRoot, 'manifests/agents/codex.yaml'), 'utf8'))
  .spec.args;

const COMMIT = 'echo two >> a.txt && git -c user.name=agent -c user.email=agent@example.com commit -qam "agent: edit"';
const PROMPT = 'Add a line to a.txt and commit it';
/** A "test command" that fails with a known status. */
const FAILING = 'echo "1 test failed" >&2; exit 3';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A temp dir with a one-commit git repo `repo/` holding a.txt. */
function tempRepo(): { tmp: string; repo: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-agent-cli-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const repo = path.join(tmp, 'repo');
  fs.mkdirSync(repo);
  execFileSync('git', ['init', '-q', repo]);
  fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
  execFileSync('git', ['-C', repo, 'add', '.']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'init']);
  return { tmp, repo };
}

function startPane(name: string, repo: string, argv: string[], env: Record<string, string>): TmuxPane {
  const pane = TmuxPane.start({
    socket: `orchctl-${name}-${process.pid}-${Date.now()}`,
    session: name,
    cwd: repo,
    argv,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', LANG: 'C.UTF-8', ...env },
    width: 120,
    height: 40,
  });
  cleanups.push(() => pane.killServer());
  return pane;
}

/**
 * Paste `text`, then press Enter until the fake has a new request: Codex's paste-burst detection
 * can take an Enter that follows the text too closely as part of the paste.
 */
async function submit(pane: TmuxPane, text: string, requests: () => number): Promise<void> {
  const before = requests();
  pane.paste(text);
  for (let i = 0; i < 10 && requests() === before; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    if (requests() === before) pane.keys('Enter');
  }
  await until('the CLI to send the prompt to the fake', () => requests() > before, 20_000);
}

const gitLog = (repo: string) => execFileSync('git', ['-C', repo, 'log', '--format=%s'], { encoding: 'utf8' });

describe('Codex CLI against the fake Responses API', () => {
  let bin: string;
  beforeAll(() => {
    bin = install('codex');
  }, 15 * 60_000);

  it('runs exec_command: edits a.txt and commits, a failing test command, then shows the usage limit', async () => {
    const fake = await FakeResponses.start();
    cleanups.push(() => fake.close());
    const { tmp, repo } = tempRepo();
    const home = path.join(tmp, 'codex-home');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, 'config.toml'), codexConfig(fake.url, repo, 'never'));
    fake.script(
      callTurn('exec_command', { cmd: COMMIT }, 'Editing.'),
      textTurn('Committed.'),
      callTurn('exec_command', { cmd: FAILING }, 'Running the tests.'),
      textTurn('The tests fail.'),
      rateLimitTurn(3600),
    );
    const env = { HOME: tmp, CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake' };
    const pane = startPane('codex', repo, [bin, ...CODEX_ARGS], env);
    await pane.waitFor(/Ask Codex to do anything/, 60_000);

    await submit(pane, PROMPT, () => fake.responses().length);
    await pane.waitFor(/Committed\./, 60_000);
    expect(userTexts(fake.responses()[0]!.body)).toContain(PROMPT);
    // The call's result came back to the model with the command's exit status.
    const outputs = callOutputs(fake.responses()[1]!.body);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]!.output).toContain('Process exited with code 0');
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(gitLog(repo)).toBe('agent: edit\ninit\n');

    // A failing test command: its exit status reaches the model.
    await submit(pane, 'Run the tests', () => fake.responses().length);
    await pane.waitFor(/The tests fail\./, 60_000);
    expect(callOutputs(fake.responses()[3]!.body).at(-1)!.output).toContain('Process exited with code 3');

    await submit(pane, 'again', () => fake.responses().length);
    const screen = await pane.waitFor(/usage limit/, 60_000);
    // A clock time ("9:37 PM"), or a date first when the reset falls on another day ("Nov 27th, 2026 12:36 AM").
    expect(screen).toMatch(/You’ve hit your usage limit\. Try again at (\d|[A-Z][a-z]{2} \d)/);

    // Run as the template runs it, Codex leaves nothing of its own running once its pane is gone.
    pane.killServer();
    await until('no process of the run left', () => processesIn(tmp).length === 0, 10_000);
  }, 180_000);
});

describe('Codex CLI with a long context', () => {
  let bin: string;
  beforeAll(() => {
    bin = install('codex');
  }, 15 * 60_000);

  it('compacts the conversation before the next turn when the fake reports a context near the window', async () => {
    const fake = await FakeResponses.start();
    cleanups.push(() => fake.close());
    const { tmp, repo } = tempRepo();
    const home = path.join(tmp, 'codex-home');
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, 'config.toml'), codexConfig(fake.url, repo, 'never'));
    fake.script(textTurn('Read it all.', 190_000), textTurn('Next answer.'));
    const env = { HOME: tmp, CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake' };
    const pane = startPane('codex', repo, [bin, ...CODEX_ARGS], env);
    await pane.waitFor(/Ask Codex to do anything/, 60_000);
    await submit(pane, 'Read the whole repository', () => fake.responses().length);
    await pane.waitFor(/Read it all\./, 60_000);
    const before = fake.requests.length;
    await submit(pane, 'Now continue', () => fake.responses().length);
    await pane.waitFor(/Next answer\./, 60_000);
    expect(pane.capture()).toContain('Context compacted');
    // Between the two turns Codex asked the model (no tools offered) for a summary of the conversation.
    const between = fake.requests.slice(before).filter((r) => r.path.startsWith('/v1/responses'));
    expect(between.some((r) => JSON.stringify(r.body).includes('helping the next LLM'))).toBe(true);
  }, 180_000);
});

describe('Gemini CLI against the fake Gemini API', () => {
  let bin: string;
  beforeAll(() => {
    bin = install('gemini-cli');
  }, 15 * 60_000);

  it('runs run_shell_command: edits a.txt and commits, a failing test command, then the quota choice', async () => {
    const fake = await FakeGemini.start();
    cleanups.push(() => fake.close());
    const { tmp, repo } = tempRepo();
    fs.mkdirSync(path.join(tmp, '.gemini'));
    fs.writeFileSync(path.join(tmp, '.gemini', 'settings.json'), JSON.stringify(geminiSettings()));
    fake.script(
      geminiCall('run_shell_command', { command: COMMIT, description: 'Append and commit' }, 'Editing.'),
      geminiText('Committed.'),
      geminiCall('run_shell_command', { command: FAILING, description: 'Run the tests' }, 'Running the tests.'),
      geminiText('The tests fail.'),
      geminiRateLimit(3600),
    );
    const pane = startPane('gemini', repo, [bin, '--yolo'], {
      HOME: tmp,
      GOOGLE_GEMINI_BASE_URL: fake.url,
      GEMINI_API_KEY: 'fake-key',
      GEMINI_CLI_DISABLE_AUTOUPDATER: 'true',
      NO_BROWSER: 'true',
    });
    await pane.waitFor(/Type your message/, 60_000);

    await submit(pane, PROMPT, () => fake.streams().length);
    await pane.waitFor(/Committed\./, 60_000);
    expect(geminiUserTexts(fake.streams()[0]!.body).join('\n')).toContain(PROMPT);
    const responses = geminiFunctionResponses(fake.streams()[1]!.body);
    expect(responses.map((r) => r.name)).toEqual(['run_shell_command']);
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(gitLog(repo)).toBe('agent: edit\ninit\n');

    // A failing test command: its exit status reaches the model.
    await submit(pane, 'Run the tests', () => fake.streams().length);
    await pane.waitFor(/The tests fail\./, 60_000);
    const failed = geminiFunctionResponses(fake.streams()[3]!.body).at(-1)!;
    expect(JSON.stringify(failed.response)).toContain('Exit Code: 3');

    await submit(pane, 'again', () => fake.streams().length);
    const screen = await pane.waitFor(/Usage limit reached/, 60_000);
    expect(screen).toContain('Keep trying');
  }, 180_000);
});
