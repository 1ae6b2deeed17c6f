/**
 * Records corpus samples (test/corpus/README.md) from the pinned Codex and Gemini CLIs
 * (scripts/agents/install.mjs) in a private tmux server against their scripted fakes
 * (test/support/fake-openai-responses.ts, fake-gemini.ts):
 *
 *   npx tsx scripts/corpus/record-codex-gemini.ts [--out test/corpus]
 *
 * Two runs per CLI, in a temp git repo whose `npm test` fails ("1 test failed", exit 1):
 *  - approval: the fake asks for a shell call that edits and commits, under the CLI's approval mode;
 *    captured once the fake has served that call and the screen has stood still 1.5 s → `waiting`
 *    (the script has not answered yet); then the approve key, the fake's last turn served, the
 *    CLI's own record says the turn ended → `idle`.
 *  - failing test: the fake asks for `npm test`, then a text; once served and recorded → `idle`.
 * Command samples are the shell calls' results as the CLI recorded them (Codex's rollout, Gemini
 * CLI's chat file), labelled by what the recording's repo makes of each: `npm test` fails → the
 * TestFailure signal; the edit-and-commit → Commit. Labels are never read from a screen pattern.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { geminiChatFiles } from '../../controller/agents/gemini-cli.js';
import { FakeGemini, geminiCall, geminiSettings, geminiText } from '../../test/support/fake-gemini.js';
import { callTurn, codexConfig, FakeResponses, textTurn } from '../../test/support/fake-openai-responses.js';
import { TmuxPane } from '../../test/support/tmux-pane.js';

const argv = process.argv.slice(2);
const o = argv.indexOf('--out');
const OUT = path.resolve(o >= 0 ? argv[o + 1] : path.join(import.meta.dirname, '../../test/corpus'));
const ROOT = path.resolve(import.meta.dirname, '../..');
const DATE = new Date().toISOString().slice(0, 10);
const PROMPT = 'Run the tests, then edit README.md and commit it';
const COMMIT = 'echo two >> README.md && git -c user.name=a -c user.email=a@example.com commit -qam "agent: edit"';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pins = {
  codex: JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/codex/pin.json'), 'utf8')).version as string,
  'gemini-cli': JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/gemini-cli/pin.json'), 'utf8')).version as string,
};
type Cli = keyof typeof pins;
let written = 0;

const install = (agent: Cli) =>
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/agents/install.mjs'), agent], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();

function write(cli: Cli, cls: string, name: string, json: Record<string, unknown>, data?: [string, string]) {
  const dir = path.join(OUT, cli, cls);
  fs.mkdirSync(dir, { recursive: true });
  if (data) fs.writeFileSync(path.join(dir, `${name}${data[0]}`), data[1]);
  fs.writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  written++;
}

const source = (cli: Cli, how: string) =>
  `recorded from ${cli} ${pins[cli]} on ${DATE} by scripts/corpus/record-codex-gemini.ts: ${how}`;

function screen(cli: Cli, cls: string, name: string, text: string, how: string) {
  write(cli, cls, name, { kind: 'screen', version: pins[cli], label: { state: cls }, source: source(cli, how), typed: [PROMPT] }, [
    '.screen.txt',
    text,
  ]);
}

function command(cli: Cli, name: string, cmd: string, output: string, exitCode: number, signals: string[], how: string) {
  write(cli, 'command', name, {
    kind: 'command',
    label: { signals },
    source: source(cli, how),
    command: { command: cmd, output, exitCode, isError: exitCode !== 0 },
  });
}

/** Waits until `cond`, then until the pane stood still `stillMs`; returns the screen. */
async function settle(pane: TmuxPane, cond: () => boolean, what: string, stillMs = 1500): Promise<string> {
  const deadline = Date.now() + 120_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${pane.capture()}`);
    await sleep(100);
  }
  let last = pane.capture();
  let since = Date.now();
  while (Date.now() - since < stillMs) {
    await sleep(100);
    const now = pane.capture();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
  return last;
}

function repo(tmp: string): string {
  const r = path.join(tmp, 'repo');
  fs.mkdirSync(r);
  const git = (...a: string[]) => execFileSync('git', ['-C', r, '-c', 'user.name=a', '-c', 'user.email=a@a', ...a]);
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(r, 'README.md'), '# test\n');
  fs.writeFileSync(
    path.join(r, 'package.json'),
    JSON.stringify({ name: 't', private: true, scripts: { test: 'echo "1 test failed" && exit 1' } }),
  );
  git('add', '.');
  git('commit', '-qm', 'initial');
  return r;
}

/** Submits the prompt (Enter again until the fake sees a request: paste bursts may swallow one). */
async function submit(pane: TmuxPane, requests: () => number): Promise<void> {
  pane.paste(PROMPT);
  await sleep(500);
  for (let i = 0; i < 10 && requests() === 0; i++) {
    pane.keys('Enter');
    await sleep(1500);
  }
}

const lines = (f: string) =>
  fs.existsSync(f)
    ? fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

async function codex(approval: boolean, tag: string): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-corpus-codex-'));
  const fake = await FakeResponses.start();
  const r = repo(tmp);
  const home = path.join(tmp, 'codex-home');
  fs.mkdirSync(home);
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    codexConfig(fake.url, r, approval ? 'on-request' : 'never', approval ? 'workspace-write' : 'danger-full-access'),
  );
  const call = approval
    ? callTurn('exec_command', { cmd: COMMIT, sandbox_permissions: 'require_escalated', justification: 'Commit?' }, 'Editing.')
    : callTurn('exec_command', { cmd: 'npm test' }, 'Running the tests.');
  fake.script(call, textTurn(approval ? 'Committed.' : 'The tests fail.'));
  const pane = TmuxPane.start({
    socket: `orchctl-corpus-${process.pid}`,
    session: `codex-${tag}`,
    cwd: r,
    argv: [install('codex'), '--no-daemon'],
    env: { HOME: tmp, CODEX_HOME: home, FAKE_OPENAI_API_KEY: 'sk', PATH: process.env.PATH!, TERM: 'tmux-256color', LANG: 'C.UTF-8' },
    width: 120,
    height: 40,
  });
  try {
    await settle(pane, () => pane.capture().includes('Ask Codex to do anything'), 'the input line');
    await submit(pane, () => fake.responses().length);
    const rollout = () => {
      const dir = path.join(home, 'sessions');
      const names = fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true }) as string[]) : [];
      const found = names.find((n) => /(^|\/)rollout-[^/]*\.jsonl$/.test(n));
      return found ? path.join(dir, found) : '';
    };
    const done = () => lines(rollout()).some((l) => (l.payload as { type?: string })?.type === 'task_complete');
    if (approval) {
      const s = await settle(pane, () => fake.responses().length === 1, 'the call served');
      screen('codex', 'waiting', `approval-${tag}`, s, 'the fake served exec_command with require_escalated; not answered yet');
      pane.keys('Enter');
    }
    const s = await settle(pane, () => fake.responses().length === 2 && done(), 'the turn complete in the rollout');
    screen('codex', 'idle', `after-${tag}`, s, "the fake's last turn served and the rollout's task_complete written");
    for (const l of lines(rollout())) {
      const p = l.payload as { type?: string; output?: string; call_id?: string };
      if (l.type !== 'response_item' || p.type !== 'function_call_output') continue;
      const code = Number(/Process exited with code (\d+)/.exec(p.output ?? '')?.[1] ?? -1);
      command(
        'codex',
        `exec-${tag}`,
        approval ? COMMIT : 'npm test',
        p.output ?? '',
        code,
        approval ? ['Commit'] : ['TestFailure'],
        `the exec_command result in the rollout (${approval ? 'the edit committed' : "the repo's npm test fails"})`,
      );
    }
  } finally {
    pane.killServer();
    await fake.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function gemini(approval: boolean, tag: string): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-corpus-gemini-'));
  const fake = await FakeGemini.start();
  const r = repo(tmp);
  fs.mkdirSync(path.join(tmp, '.gemini'));
  fs.writeFileSync(path.join(tmp, '.gemini', 'settings.json'), JSON.stringify(geminiSettings()));
  const cmd = approval ? COMMIT : 'npm test';
  fake.script(geminiCall('run_shell_command', { command: cmd, description: 'Run it' }), geminiText(approval ? 'Committed.' : 'The tests fail.'));
  const pane = TmuxPane.start({
    socket: `orchctl-corpus-${process.pid}`,
    session: `gemini-${tag}`,
    cwd: r,
    argv: [install('gemini-cli'), ...(approval ? [] : ['--yolo'])],
    env: {
      HOME: tmp,
      GOOGLE_GEMINI_BASE_URL: fake.url,
      GEMINI_API_KEY: 'k',
      GEMINI_CLI_DISABLE_AUTOUPDATER: 'true',
      PATH: process.env.PATH!,
      TERM: 'tmux-256color',
      LANG: 'C.UTF-8',
    },
    width: 120,
    height: 40,
  });
  try {
    await settle(pane, () => pane.capture().includes('Type your message'), 'the input line');
    await submit(pane, () => fake.streams().length);
    const chat = () => geminiChatFiles(path.join(tmp, '.gemini'))[0] ?? '';
    const answered = () => lines(chat()).some((l) => l.type === 'gemini' && l.content === (approval ? 'Committed.' : 'The tests fail.'));
    if (approval) {
      const s = await settle(pane, () => fake.streams().length === 1, 'the call served');
      screen('gemini-cli', 'waiting', `approval-${tag}`, s, 'the fake served run_shell_command in the default approval mode; not answered yet');
      pane.keys('Enter');
    }
    const s = await settle(pane, () => fake.streams().length === 2 && answered(), "the last answer in the chat file");
    screen('gemini-cli', 'idle', `after-${tag}`, s, "the fake's last turn served and recorded in the chat file");
    for (const l of lines(chat())) {
      if (l.type !== 'user' || !Array.isArray(l.content)) continue;
      for (const part of l.content as { functionResponse?: { response?: { output?: string } } }[]) {
        const out = part.functionResponse?.response?.output;
        if (out === undefined) continue;
        const code = Number(/^Exit Code: (\d+)$/m.exec(out)?.[1] ?? 0);
        command(
          'gemini-cli',
          `shell-${tag}`,
          cmd,
          out,
          code,
          approval ? ['Commit'] : ['TestFailure'],
          `the run_shell_command result in the chat file (${approval ? 'the edit committed' : "the repo's npm test fails"})`,
        );
      }
    }
  } finally {
    pane.killServer();
    await fake.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await codex(true, '1');
await codex(false, '2');
await gemini(true, '1');
await gemini(false, '2');
console.log(`wrote ${written} samples under ${OUT}`);
