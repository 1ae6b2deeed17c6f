/**
 * Records labelled corpus samples (test/corpus/README.md) from the REAL Claude Code CLI (the pinned
 * version, scripts/claude-code/pin.json) in a private tmux server, against the scripted fake
 * Messages API (test/support/fake-anthropic.ts):
 *
 *   npx tsx scripts/corpus/record-claude.ts [--out test/corpus/claude-code] [--rounds 10]
 *
 * Each label is what the script DID at the moment of the capture, never what a screen pattern says
 * (so the corpus can catch the patterns being wrong):
 *   waiting      the PermissionRequest hook fired for a Bash/Edit/Write call and nothing answered it;
 *   busy         the fake is still streaming the answer (its request arrived, no Stop hook yet);
 *   idle         the Stop hook fired and the screen has settled;
 *   interrupted  Esc was pressed while the answer streamed;
 *   rate-limited the fake answered 429 rate_limit_error (retries off) and StopFailure fired;
 *   turns/context the transcript cut after each finished turn; the context figure from the usage the
 *                fake reported (input + cache + output tokens of the last answer);
 *   exited       Ctrl-C Ctrl-C (the hook stream, ending with SessionEnd).
 * At each screen capture the hook stream so far is saved too (a `hooks` sample with the same label),
 * except after Esc: Claude Code fires no hook for it (the screen is the only source).
 * What orchctl would have typed (the prompts, the continue message) goes into each screen sample's
 * `typed`, so its echo is known (issue 24 item 5).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CLAUDE_CODE_VERSION,
  QUIET_ENV,
  ensureClaudeCode,
  makeClaudeHome,
  readTranscript,
  transcriptPath,
  type ClaudeHome,
} from '../../test/support/claude-code.js';
import {
  FakeAnthropic,
  bashTurn,
  errorAnswer,
  textTurn,
  toolTurn,
  type ScriptedTurn,
} from '../../test/support/fake-anthropic.js';
import { TmuxPane } from '../../test/support/tmux-pane.js';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const OUT = path.resolve(opt('--out', path.join(import.meta.dirname, '../../test/corpus/claude-code')));
const ROUNDS = Number(opt('--rounds', '10'));
const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-corpus-'));
const DATE = new Date().toISOString().slice(0, 10);
const SOURCE = (how: string) =>
  `recorded from claude-code ${CLAUDE_CODE_VERSION} on ${DATE} by scripts/corpus/record-claude.ts: ${how}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (m: string) => process.stdout.write(`${m}\n`);

let written = 0;
const seen = new Set<string>();

/** Writes one sample: <class>/<name>.json and its data file. Identical captures of a class are kept once. */
function sample(
  cls: string,
  name: string,
  kind: 'screen' | 'hooks' | 'transcript',
  data: string,
  label: Record<string, unknown>,
  how: string,
  extra: Record<string, unknown> = {},
): void {
  const key = `${cls}\0${kind}\0${data}`;
  if (seen.has(key)) return;
  seen.add(key);
  const dir = path.join(OUT, cls);
  fs.mkdirSync(dir, { recursive: true });
  const ext = kind === 'screen' ? '.screen.txt' : kind === 'hooks' ? '.hooks.jsonl' : '.transcript.jsonl';
  fs.writeFileSync(path.join(dir, `${name}${ext}`), data);
  const file = { kind, version: CLAUDE_CODE_VERSION, label, source: SOURCE(how), ...extra };
  fs.writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(file, null, 2)}\n`);
  written++;
}

/** Strings longer than this in a transcript line other than a message are cut (as the fixtures' are). */
const ELIDE = 500;
function elide(v: unknown): unknown {
  if (typeof v === 'string') return v.length > ELIDE ? `${v.slice(0, 200)}…[elided ${v.length - 200} chars]` : v;
  if (Array.isArray(v)) return v.map(elide);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, elide(x)]));
  return v;
}
/**
 * A transcript line as the corpus keeps it: the CLI's api-request* records left out, large bodies
 * (prompt snapshots, attachments) of lines other than user/assistant messages elided.
 */
function keepLine(line: Record<string, unknown>): string | undefined {
  const type = String(line.type ?? '');
  if (type.startsWith('api-request')) return undefined;
  return JSON.stringify(type === 'user' || type === 'assistant' ? line : elide(line));
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-C', cwd, ...args], { stdio: 'ignore' });
}

async function main(): Promise<number> {
  const bin = ensureClaudeCode();
  const project = path.join(ROOT, 'project');
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  git(project, 'init', '-q', '-b', 'main');
  git(project, 'config', 'user.name', 'Corpus');
  git(project, 'config', 'user.email', 'corpus@example.invalid');
  fs.writeFileSync(path.join(project, 'README.md'), '# corpus project\n');
  fs.writeFileSync(path.join(project, 'src/app.js'), 'export const port = 3000;\n');
  git(project, 'add', '.');
  git(project, 'commit', '-q', '-m', 'init');

  const fake = await FakeAnthropic.start();
  const home: ClaudeHome = makeClaudeHome({ root: path.join(ROOT, 'claude'), projectDirs: [project], baseUrl: fake.url });
  const sessionId = randomUUID();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TERM: 'tmux-256color',
    LANG: 'C.UTF-8',
    SHELL: '/bin/bash',
    USER: os.userInfo().username,
    ...home.env,
    ...QUIET_ENV,
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  const socket = `orchctl-corpus-${process.pid}`;
  const pane = TmuxPane.start({ socket, session: 'main', cwd: project, argv: [bin, ...home.args(sessionId)], env });
  const typed: string[] = [];
  const hooksText = () =>
    home
      .readHooks()
      .map((h) => JSON.stringify(h.payload))
      .join('\n') + '\n';
  const hookCount = (event: string) => home.readHooks().filter((h) => h.payload.hook_event_name === event).length;
  const waitHook = async (event: string, count: number, ms: number) => {
    const end = Date.now() + ms;
    while (hookCount(event) < count) {
      if (Date.now() > end) throw new Error(`no ${event} hook #${count} within ${ms} ms; screen:\n${pane.capture()}`);
      await sleep(50);
    }
  };
  /** A screen and the hook stream so far, both labelled `cls`. */
  const capture = (cls: string, name: string, label: Record<string, unknown>, how: string, hooks = true) => {
    sample(cls, name, 'screen', pane.capture(), label, how, { typed: [...typed] });
    if (hooks) sample(cls, `${name}-hooks`, 'hooks', hooksText(), hookLabel(cls), how);
  };
  const hookLabel = (cls: string): Record<string, unknown> =>
    cls === 'rate-limited'
      ? { quota: true }
      : { state: cls === 'waiting' ? 'waiting' : cls, permission: cls === 'waiting' };
  const submit = async (text: string) => {
    typed.push(text);
    pane.paste(text);
    await sleep(400);
    pane.keys('Enter');
  };

  try {
    await pane.waitFor(/─{20,}\n❯/, 30_000, 100);
    await waitHook('SessionStart', 1, 10_000);
    await sleep(500);
    capture('idle', 'startup', { state: 'idle' }, 'right after start-up, the SessionStart hook fired');

    const app = path.join(project, 'src/app.js');
    // Each: the turns before the permission prompt (the last asks), and the main requests they make.
    const tools: Array<{ tool: string; turns: () => ScriptedTurn[]; prompt: string }> = [
      { tool: 'Bash', prompt: 'List the files in src', turns: () => [bashTurn('mkdir -p build && ls src > build/files.txt', { text: 'Listing src.' })] },
      {
        tool: 'Bash',
        prompt: 'Run the tests and show the summary',
        turns: () => [bashTurn('cd src && npm test 2>&1 | tail -5', { text: 'Running the tests.' })],
      },
      {
        tool: 'Bash',
        prompt: 'Commit the change',
        turns: () => [bashTurn('git add -A && git commit -q -m "wip" || true', { text: 'Committing.' })],
      },
      {
        tool: 'Write',
        prompt: 'Create a notes file',
        turns: () => [
          toolTurn('Write', { file_path: path.join(project, `notes-${randomUUID().slice(0, 6)}.md`), content: '# notes\n' }),
        ],
      },
      {
        tool: 'Edit',
        prompt: 'Change the port to 8080',
        turns: () => {
          fs.writeFileSync(app, 'export const port = 3000;\n');
          return [
            toolTurn('Read', { file_path: app }),
            toolTurn('Edit', { file_path: app, old_string: 'port = 3000', new_string: 'port = 8080' }),
          ];
        },
      },
      {
        tool: 'Bash',
        prompt: 'Add rate limit middleware to the API',
        turns: () => [bashTurn('npm install --no-audit express-rate-limit || true', { text: 'Installing the middleware.' })],
      },
    ];
    let mains = 0;
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of tools) {
        n++;
        const slow = textTurn(`Done with step ${n}. ${'All good here. '.repeat(6)}`, {
          chunkDelayMs: 250,
          holdMs: 2500,
          usage: { input_tokens: 4000 + n * 9000, output_tokens: 120 }, // the context figure grows by steps
        });
        const turns = t.turns();
        fake.script(...turns, slow);
        const perm = hookCount('PermissionRequest');
        const stops = hookCount('Stop');
        await submit(`${t.prompt} (${n})`);
        mains += turns.length;
        await waitHook('PermissionRequest', perm + 1, 20_000);
        await sleep(1200);
        capture('waiting', `permission-${t.tool.toLowerCase()}-${n}`, { state: 'waiting' }, `${t.tool} PermissionRequest unanswered`);
        pane.keys('Enter'); // approve (option 1 is selected)
        mains += 1;
        await fake.waitForMain(mains, 20_000).catch(() => undefined);
        await sleep(900);
        if (hookCount('Stop') === stops)
          capture('busy', `streaming-${n}-a`, { state: 'busy' }, 'the fake still streams the answer, no Stop hook');
        await sleep(1100);
        if (hookCount('Stop') === stops)
          capture('busy', `streaming-${n}-b`, { state: 'busy' }, 'the fake still streams the answer, no Stop hook');
        await waitHook('Stop', stops + 1, 30_000);
        await sleep(800);
        capture('idle', `turn-done-${n}`, { state: 'idle' }, 'the Stop hook fired');
      }
      // Esc while the answer streams: interrupted (no hook fires).
      fake.script(textTurn('A long answer that is still streaming. '.repeat(8), { chunkDelayMs: 400, holdMs: 8000 }));
      await submit(`Explain the architecture slowly (${round})`);
      mains += 1;
      await fake.waitForMain(mains, 20_000).catch(() => undefined);
      await sleep(1500);
      pane.keys('Escape');
      await sleep(1500);
      capture('interrupted', `esc-streaming-${round}`, { state: 'idle', interrupted: true }, 'Esc while the answer streamed', false);
      // A 429 from the API: rate-limited.
      const failures = hookCount('StopFailure');
      fake.script(
        errorAnswer(429, 'rate_limit_error', "This request would exceed your account's rate limit. Please try again later."),
      );
      await submit(`Keep going with the refactor (${round})`);
      mains += 1;
      await waitHook('StopFailure', failures + 1, 20_000).catch(() => undefined);
      await sleep(1200);
      capture('rate-limited', `api-429-${round}`, { state: 'idle', quotaExhausted: true }, 'the fake answered 429 rate_limit_error');
      // The continue message orchctl sends after the reset: echoed, it is not a limit.
      const stops = hookCount('Stop');
      fake.script(textTurn('Continuing where I left off.', { usage: { input_tokens: 3000, output_tokens: 50 } }));
      await submit('The usage limit has reset. Continue where you left off.');
      mains += 1;
      await waitHook('Stop', stops + 1, 20_000).catch(() => undefined);
      await sleep(1000);
      capture('idle', `after-continue-${round}`, { state: 'idle' }, 'the continue message was taken, Stop fired');
      fake.clearScript();
      log(`round ${round + 1}/${ROUNDS}: ${written} samples`);
    }
    // The transcript cut after each finished turn: turn boundaries and the context figure.
    const file = transcriptPath(home.configDir, project, sessionId);
    const lines = file && fs.existsSync(file) ? readTranscript(file) : [];
    let turns = 0;
    const kept: string[] = [];
    for (const line of lines) {
      const k = keepLine(line);
      if (k !== undefined) kept.push(k);
      const msg = line.message as { stop_reason?: string; usage?: Record<string, number> } | undefined;
      if (line.type !== 'assistant' || msg?.stop_reason !== 'end_turn') continue;
      turns++;
      const u = msg.usage ?? {};
      const used =
        (u.input_tokens ?? 0) +
        (u.cache_read_input_tokens ?? 0) +
        (u.cache_creation_input_tokens ?? 0) +
        (u.output_tokens ?? 0);
      const percent = Math.round((used / 200_000) * 1000) / 10;
      const steps = Array.from({ length: Math.floor(percent / 10) }, (_, i) => (i + 1) * 10);
      if (turns % 3 === 0)
        sample('turns', `turn-${turns}`, 'transcript', `${kept.join('\n')}\n`, { turns }, 'transcript cut after a turn');
      else
        sample(
          'context',
          `context-${turns}`,
          'transcript',
          `${kept.join('\n')}\n`,
          { contextPercent: percent, contextSteps: steps },
          `transcript cut after a turn; the fake reported ${used} tokens`,
        );
    }
    // Ctrl-C twice: the agent exits (SessionEnd).
    const ends = hookCount('SessionEnd');
    pane.keys('C-c', 'C-c');
    await waitHook('SessionEnd', ends + 1, 10_000).catch(() => undefined);
    sample('exited', 'ctrl-c-hooks', 'hooks', hooksText(), { state: 'exited' }, 'Ctrl-C Ctrl-C, SessionEnd fired');
    log(`${written} samples in ${OUT}`);
    return 0;
  } finally {
    pane.keys('C-c', 'C-c');
    await sleep(500);
    pane.killServer();
    await fake.close();
    await sleep(500); // Claude Code may still be writing its config as it exits
    fs.rmSync(ROOT, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
}

process.exitCode = await main();
