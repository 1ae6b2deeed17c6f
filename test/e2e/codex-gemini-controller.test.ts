/**
 * Issue 30: the built-in codex and gemini-cli templates (manifests/agents/), pointed at the pinned
 * CLIs and their fakes, under the real controller: the prompt confirmed from the CLI's own record,
 * the tool call's commit, the turn's end; an approval answered with `orchctl send --approve` across
 * a kill -9 of the controller (the run adopted, no duplicate) and the CLI's exit → Succeeded; a
 * failing `npm test` as a TestFailure signal and usage/cost from the CLI's records; Codex's usage
 * limit → pause → resume. A failed wait prints the panes and what the fake received.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { eventLogPath, readEventLog } from '../../controller/store/eventlog.js';
import { condition, type Harness, makeHarness } from '../support/controller-harness.js';
import {
  FakeGemini,
  geminiCall,
  geminiRateLimit,
  geminiSettings,
  geminiText,
  geminiUserTexts,
} from '../support/fake-gemini.js';
import { FakeResponses, callTurn, codexConfig, textTurn, userTexts } from '../support/fake-openai-responses.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const COMMIT = 'echo two >> README.md && git -c user.name=a -c user.email=a@example.com commit -qam "agent: edit"';
const PROMPT = 'Edit README.md and commit it';

const install = (agent: string) =>
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'agents', 'install.mjs'), agent], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 15 * 60_000,
  }).trim();

/** The built-in template `file`, run as Agent `a` with `binary`, `args` and `env`. */
function agentFrom(file: string, binary: string, args: string[] | undefined, env: Record<string, string>) {
  const t = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests', 'agents', file), 'utf8')) as {
    spec: Record<string, unknown>;
  };
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'a' },
    spec: {
      ...t.spec,
      command: [binary],
      ...(args ? { args } : {}),
      env: Object.entries({ ...env, TERM: 'tmux-256color', LANG: 'C.UTF-8' }).map(([name, value]) => ({ name, value })),
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];

/** A controller harness and a started fake model API, both cleaned up after the test; a failed wait shows the fake. */
async function withFake<F extends { close(): Promise<void>; describe(): string }>(start: () => Promise<F>) {
  const fake = await start();
  const h = await makeHarness();
  cleanups.push(
    () => fake.close(),
    () => h.cleanup(),
  );
  h.diagnostics.push(() => fake.describe());
  return { fake, h };
}

/** A CODEX_HOME whose config.toml sends Codex to the fake with the given approval (and sandbox) policy. */
type Approval = Parameters<typeof codexConfig>[2];
type Sandbox = Parameters<typeof codexConfig>[3];
function codexHome(h: Harness, url: string, approval: Approval, sandbox?: Sandbox) {
  const home = path.join(h.dir, 'codex-home');
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(home, 'config.toml'), codexConfig(url, h.repo, approval, sandbox));
  return home;
}
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs session `s` with PROMPT and waits for the prompt confirmed, the agent's commit and the turn's end. */
async function runSession(h: Harness): Promise<void> {
  h.start();
  await h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 's' },
      spec: { agentRef: 'a', workdir: h.repo, prompt: PROMPT },
    },
  ]);
  const s = await h.waitFor(
    'PromptDelivered=True',
    async () => {
      const s = await h.session('s');
      return condition(s, 'PromptDelivered')?.status === 'True' && s;
    },
    90_000,
  );
  expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
  // From the CLI's own record of the prompt (Codex's history.jsonl, Gemini CLI's chat file), never the
  // screen: an Enter the CLI took as a newline moves the screen too.
  expect(s.status?.promptDelivery?.confirmedBy).toBe('transcript');
  await h.waitFor(
    'the agent commit',
    async () =>
      execFileSync('git', ['-C', h.repo, 'log', '--format=%s'], { encoding: 'utf8' }).startsWith('agent: edit'),
    90_000,
  );
  await h.waitFor(
    'AgentBusy=False/Idle after the turn',
    async () => condition(await h.session('s'), 'AgentBusy')?.reason === 'Idle',
    60_000,
  );
  expect(fs.readFileSync(path.join(h.repo, 'README.md'), 'utf8')).toBe('# test\ntwo\n');
}

/** Gemini CLI with the built-in template (`--yolo`), its settings in a temp HOME, against `fake`. */
async function geminiAgent(h: Harness, fake: FakeGemini, args = ['--yolo'], pricing?: unknown[]): Promise<void> {
  fs.mkdirSync(path.join(h.dir, '.gemini'));
  fs.writeFileSync(path.join(h.dir, '.gemini', 'settings.json'), JSON.stringify(geminiSettings()));
  const env = {
    HOME: h.dir,
    GOOGLE_GEMINI_BASE_URL: fake.url,
    GEMINI_API_KEY: 'k',
    GEMINI_CLI_DISABLE_AUTOUPDATER: 'true',
  };
  const agent = agentFrom('gemini-cli.yaml', install('gemini-cli'), args, env);
  await h.apply([pricing ? { ...agent, spec: { ...agent.spec, pricing } } : agent]);
}

/**
 * Session `s` with PROMPT against an agent whose tool call needs approval: WaitingForInput is raised
 * from the approval screen; the controller is killed -9 there and restarted; the new one adopts the
 * same pane (one tmux session, the prompt sent once: `userTexts` gives each conversation request's
 * user texts); `orchctl send --approve` answers, the commit lands, the turn ends; `exitKeys` (sent
 * with `orchctl send --keys`) make the CLI exit and the session ends Succeeded.
 */
async function approveAdoptExit(h: Harness, userTexts: () => string[][], exitKeys: string[]): Promise<void> {
  h.start();
  await h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 's' },
      spec: { agentRef: 'a', workdir: h.repo, prompt: PROMPT },
    },
  ]);
  const waiting = await h.waitFor(
    'WaitingForInput=True',
    async () => {
      const s = await h.session('s');
      return condition(s, 'WaitingForInput')?.status === 'True' && s;
    },
    90_000,
  );
  const uid = waiting.metadata.uid;
  await h.stopController('SIGKILL');
  h.start();
  await h.waitFor(
    'the restarted controller to see the prompt still waiting',
    async () => {
      const s = await h.session('s');
      return condition(s, 'WaitingForInput')?.status === 'True';
    },
    60_000,
  );
  const r = await h.orchctl(['send', 's', '--approve']);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  await h.waitFor(
    'the agent commit',
    async () =>
      execFileSync('git', ['-C', h.repo, 'log', '--format=%s'], { encoding: 'utf8' }).startsWith('agent: edit'),
    60_000,
  );
  await h.waitFor(
    'AgentBusy=False/Idle after the turn',
    async () => condition(await h.session('s'), 'AgentBusy')?.reason === 'Idle',
    60_000,
  );
  const sessions = await h.tmuxSessions();
  expect(sessions.map((t) => t.uid)).toEqual([uid]);
  const s = await h.session('s');
  expect(s?.status?.run).toBe(1);
  const texts = userTexts();
  expect(texts.length).toBeGreaterThan(1);
  for (const t of texts) expect(t.filter((x) => x === PROMPT)).toHaveLength(1);
  const k = await h.orchctl(['send', 's', '--keys', ...exitKeys]);
  // The keys went in; send --keys confirms only answers to a prompt on screen, so it says not confirmed.
  expect(k.stdout + k.stderr).toContain(`sent ${exitKeys.join(' ')}`);
  const done = await h.waitFor(
    'phase Succeeded',
    async () => {
      const s = await h.session('s');
      return s?.status?.phase === 'Succeeded' && s;
    },
    60_000,
  );
  expect(done.status?.exitCode).toBe(0);
}

/** A price for every model, so the cost is checkable: $1 per M input tokens, $2 per M output, $0.5 cached. */
const PRICING = [{ model: '*', inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.5, cacheWritePerMTok: 0 }];

/** A package.json whose `npm test` fails the way a test runner does, committed. */
function failingTests(repo: string): void {
  fs.writeFileSync(
    path.join(repo, 'package.json'),
    JSON.stringify({ name: 't', private: true, scripts: { test: 'echo "1 test failed" && exit 1' } }),
  );
  execFileSync('git', ['-C', repo, 'add', '.']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=a', '-c', 'user.email=a@example.com', 'commit', '-qm', 'tests']);
}

/**
 * Session `s` asked to run the tests; waits for the TestFailure signal read from the agent's own
 * records (status.detector, the assessment of the event log) and the turn's end; returns the session.
 */
async function failingTestSession(h: Harness) {
  h.start();
  await h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: 's' },
      spec: { agentRef: 'a', workdir: h.repo, prompt: 'Run the tests' },
    },
  ]);
  const failed = await h.waitFor(
    'a TestFailure signal',
    async () => {
      const s = await h.session('s');
      return (s?.status?.detector?.counts?.TestFailure ?? 0) > 0 && s;
    },
    90_000,
  );
  const signal = failed.status?.detector?.lastSignals?.find((x) => x.signal === 'TestFailure');
  expect(signal?.detail).toContain('exit 1');
  const log = readEventLog(eventLogPath(h.home, 'default', 's')).events;
  expect(log.find((e) => e.type === 'tool_result')).toMatchObject({
    source: 'transcript',
    command: 'npm test',
    isError: true,
    exitCode: 1,
  });
  return h.waitFor(
    'AgentBusy=False/Idle after the turn',
    async () => {
      const s = await h.session('s');
      return condition(s, 'AgentBusy')?.reason === 'Idle' && s;
    },
    60_000,
  );
}

describe('Codex and Gemini CLI under orchctl (built-in templates)', () => {
  it(
    'codex: the controller delivers the prompt, the exec_command call commits, the session goes idle',
    async () => {
      const bin = install('codex');
      const { fake, h } = await withFake(() => FakeResponses.start());
      const home = codexHome(h, fake.url, 'never');
      fake.script(callTurn('exec_command', { cmd: COMMIT }, 'Editing.'), textTurn('Committed.'));
      await h.apply([
        agentFrom('codex.yaml', bin, undefined, { CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake', HOME: h.dir }),
      ]);
      await runSession(h);
      expect(userTexts(fake.responses()[0]!.body)).toContain(PROMPT);
    },
    15 * 60_000,
  );

  it(
    'gemini-cli: the controller delivers the prompt, the run_shell_command call commits, the session goes idle',
    async () => {
      const { fake, h } = await withFake(() => FakeGemini.start());
      fake.script(
        geminiCall('run_shell_command', { command: COMMIT, description: 'Edit and commit' }),
        geminiText('Committed.'),
      );
      await geminiAgent(h, fake);
      await runSession(h);
      expect(geminiUserTexts(fake.streams()[0]!.body).join('\n')).toContain(PROMPT);
    },
    15 * 60_000,
  );

  it(
    'codex: approval answered with orchctl send --approve, the controller killed -9 at the prompt adopts the ' +
      'run with no duplicate, the CLI exiting ends the session Succeeded',
    async () => {
      const bin = install('codex');
      const { fake, h } = await withFake(() => FakeResponses.start());
      // on-request + workspace-write: a call asking to leave the sandbox raises Codex's approval prompt.
      const home = codexHome(h, fake.url, 'on-request', 'workspace-write');
      fake.script(
        callTurn(
          'exec_command',
          { cmd: COMMIT, sandbox_permissions: 'require_escalated', justification: 'Commit the edit?' },
          'Editing.',
        ),
        textTurn('Committed.'),
      );
      await h.apply([
        agentFrom('codex.yaml', bin, undefined, { CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake', HOME: h.dir }),
      ]);
      await approveAdoptExit(h, () => fake.responses().map((r) => userTexts(r.body)), ['C-c']);
    },
    15 * 60_000,
  );

  it(
    'gemini-cli: approval answered with orchctl send --approve, the controller killed -9 at the prompt adopts ' +
      'the run with no duplicate, the CLI exiting ends the session Succeeded',
    async () => {
      const { fake, h } = await withFake(() => FakeGemini.start());
      fake.script(
        geminiCall('run_shell_command', { command: COMMIT, description: 'Edit and commit' }),
        geminiText('Committed.'),
      );
      await geminiAgent(h, fake, []); // default approval mode: the shell call asks
      await approveAdoptExit(h, () => fake.streams().map((r) => geminiUserTexts(r.body)), ['C-c', 'C-c']);
    },
    15 * 60_000,
  );

  it(
    "gemini-cli: a failing npm test is a TestFailure signal, and usage and cost in status come from Gemini CLI's " +
      'chat record (the token counts the fake returned)',
    async () => {
      const { fake, h } = await withFake(() => FakeGemini.start());
      failingTests(h.repo);
      fake.script(
        geminiCall('run_shell_command', { command: 'npm test', description: 'Run the tests' }),
        geminiText('The tests fail.'),
      );
      await geminiAgent(h, fake, ['--yolo'], PRICING);
      await failingTestSession(h);
      // Gemini CLI records a model message's tokens as the API reported them (usageMetadata).
      expect(fake.streamed).toHaveLength(2);
      const input = fake.streamed.reduce((a, u) => a + u.promptTokenCount, 0);
      const output = fake.streamed.reduce((a, u) => a + u.candidatesTokenCount, 0);
      const s = await h.waitFor(
        'the usage of both turns in status',
        async () => {
          const s = await h.session('s');
          return s?.status?.usage?.outputTokens === output && s;
        },
        30_000,
      );
      expect(s.status?.usage).toMatchObject({ inputTokens: input, outputTokens: output, priced: true });
      expect(s.status?.usage?.costUSD).toBeCloseTo((input * 1 + output * 2) / 1e6, 9);
    },
    15 * 60_000,
  );

  it(
    "codex: a failing npm test is a TestFailure signal, and usage and cost in status come from Codex's rollout " +
      '(the token counts the fake returned)',
    async () => {
      const bin = install('codex');
      const { fake, h } = await withFake(() => FakeResponses.start());
      failingTests(h.repo);
      const home = codexHome(h, fake.url, 'never');
      fake.script(callTurn('exec_command', { cmd: 'npm test' }, 'Running the tests.'), textTurn('The tests fail.'));
      const agent = agentFrom('codex.yaml', bin, undefined, {
        CODEX_HOME: home,
        FAKE_OPENAI_API_KEY: 'sk-fake',
        HOME: h.dir,
      });
      await h.apply([{ ...agent, spec: { ...agent.spec, pricing: PRICING } }]);
      await failingTestSession(h);
      expect(fake.completed).toHaveLength(2);
      const input = fake.completed.reduce((a, u) => a + u.input_tokens, 0);
      const output = fake.completed.reduce((a, u) => a + u.output_tokens, 0);
      const s = await h.waitFor(
        'the usage of both responses in status',
        async () => {
          const s = await h.session('s');
          return s?.status?.usage?.outputTokens === output && s;
        },
        30_000,
      );
      expect(s.status?.usage).toMatchObject({ inputTokens: input, outputTokens: output, priced: true });
      expect(s.status?.usage?.costUSD).toBeCloseTo((input * 1 + output * 2) / 1e6, 9);
    },
    15 * 60_000,
  );

  it(
    'codex: a 429 usage limit pauses the session until Codex\'s "Try again at" time, then the continue message ' +
      'resumes it and the work goes on',
    async () => {
      const bin = install('codex');
      const { fake, h } = await withFake(() => FakeResponses.start());
      const home = codexHome(h, fake.url, 'never');
      // Codex shows the reset to the minute, rounded down: a reset 1 s into a minute reads as that
      // minute. At least 30 s ahead: a notice read after its minute has begun means "now" (reset-time.ts),
      // which failed the bound below when the test started in a minute's last seconds.
      const resetsAt = (Math.floor((Date.now() + 30_000) / 60_000) + 1) * 60 + 1;
      fake.script(
        { kind: 'rateLimit', resetSeconds: 0, resetsAt },
        callTurn('exec_command', { cmd: COMMIT }, 'Editing.'),
        textTurn('Committed.'),
      );
      await h.apply([
        {
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'SessionPolicy',
          metadata: { name: 'default' },
          spec: { selector: {}, rateLimit: { jitter: '1s', continueMessage: 'Go on from where you stopped.' } },
        },
        agentFrom('codex.yaml', bin, undefined, { CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk-fake', HOME: h.dir }),
      ]);
      h.start();
      await h.apply([
        {
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'AgentSession',
          metadata: { name: 's' },
          spec: { agentRef: 'a', workdir: h.repo, prompt: PROMPT },
        },
      ]);
      const paused = await h.waitFor(
        'the pause',
        async () => {
          const s = await h.session('s');
          return s?.status?.pause && s;
        },
        90_000,
      );
      expect(paused.status?.pause).toMatchObject({ run: 1, reason: 'RateLimited' });
      expect(condition(paused, 'QuotaExhausted')?.status).toBe('True');
      const until = Date.parse(paused.status!.pause!.until!);
      // Not before the minute Codex named, and not the 15-minute default (the reset was read).
      expect(until).toBeGreaterThanOrEqual(Math.floor(resetsAt / 60) * 60_000);
      expect(until).toBeLessThanOrEqual(Math.floor(resetsAt / 60) * 60_000 + 2000);
      const resumed = await h.waitFor(
        'the resume',
        async () => {
          const s = await h.session('s');
          return s?.status?.pause === undefined && s?.status?.reason === 'Running' && s;
        },
        120_000,
      );
      expect(Date.now()).toBeGreaterThanOrEqual(until);
      expect(resumed.status).toMatchObject({ phase: 'Running', run: 1, restarts: 0 });
      await h.waitFor(
        'the agent commit after the resume',
        async () =>
          execFileSync('git', ['-C', h.repo, 'log', '--format=%s'], { encoding: 'utf8' }).startsWith('agent: edit'),
        60_000,
      );
      const after = fake
        .responses()
        .slice(1)
        .map((r) => userTexts(r.body));
      expect(after[0]).toContain('Go on from where you stopped.');
    },
    15 * 60_000,
  );

  it(
    'gemini-cli: a 429 QUOTA_EXHAUSTED pauses the session until the dialog\'s "Access resets at" time, then ' +
      '"Keep trying" resumes it and the work goes on',
    async () => {
      const { fake, h } = await withFake(() => FakeGemini.start());
      // Gemini CLI shows the reset to the minute: one 1 s into the next minute reads as that minute.
      const start = Date.now();
      const retry = Math.ceil(((Math.floor(start / 60_000) + 1) * 60_000 + 1000 - start) / 1000);
      fake.script(
        geminiRateLimit(retry, true),
        geminiCall('run_shell_command', { command: COMMIT, description: 'Edit and commit' }),
        geminiText('Committed.'),
      );
      await h.apply([
        {
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'SessionPolicy',
          metadata: { name: 'default' },
          spec: { selector: {}, rateLimit: { jitter: '1s' } },
        },
      ]);
      await geminiAgent(h, fake);
      h.start();
      await h.apply([
        {
          apiVersion: 'orchctl.io/v1alpha1',
          kind: 'AgentSession',
          metadata: { name: 's' },
          spec: { agentRef: 'a', workdir: h.repo, prompt: PROMPT },
        },
      ]);
      const paused = await h.waitFor(
        'the pause',
        async () => {
          const s = await h.session('s');
          return s?.status?.pause && s;
        },
        90_000,
      );
      expect(paused.status?.pause).toMatchObject({ run: 1, reason: 'RateLimited' });
      expect(condition(paused, 'QuotaExhausted')?.status).toBe('True');
      const until = Date.parse(paused.status!.pause!.until!);
      const since = Date.parse(paused.status!.pause!.since);
      // Read from the dialog (not the 15-minute default): no earlier than the minute it can name.
      expect(until).toBeGreaterThanOrEqual(Math.floor((start + retry * 1000) / 60_000) * 60_000);
      expect(until).toBeLessThanOrEqual(since + retry * 1000 + 62_000);
      await h.waitFor(
        'the resume',
        async () => {
          const s = await h.session('s');
          return s?.status?.pause === undefined && s?.status?.reason === 'Running';
        },
        120_000,
      );
      expect(Date.now()).toBeGreaterThanOrEqual(until);
      await h.waitFor(
        'the agent commit after the resume',
        async () =>
          execFileSync('git', ['-C', h.repo, 'log', '--format=%s'], { encoding: 'utf8' }).startsWith('agent: edit'),
        60_000,
      );
      // "Keep trying" sent the same request again: the prompt once, no continue message typed.
      expect(fake.streams().length).toBeGreaterThanOrEqual(2);
      expect(geminiUserTexts(fake.streams()[1]!.body).filter((t) => t === PROMPT)).toHaveLength(1);
      const s = await h.session('s');
      expect(s?.status).toMatchObject({ phase: 'Running', run: 1, restarts: 0 });
    },
    15 * 60_000,
  );
});
