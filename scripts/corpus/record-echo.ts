/**
 * Records echoed-input corpus samples (test/corpus/README.md, issue 24 item 5) from a generic agent
 * that shows what is typed into it — test/support/echo-agent.mjs, a readline REPL on a real tmux
 * pane — read by orchctl's generic detection profile (an Agent without detection data):
 *
 *   npx tsx scripts/corpus/record-echo.ts [--out test/corpus/generic]
 *
 * Text goes in as orchctl types it (bracketed paste, then Enter). Labels are what the script did:
 * a prompt or continue message taken and answered → idle (its echo mentions limits, the agent's
 * output does not); the agent printed its limit notice → rate-limited.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TmuxPane } from '../../test/support/tmux-pane.js';

const argv = process.argv.slice(2);
const i = argv.indexOf('--out');
const OUT = path.resolve(i >= 0 ? argv[i + 1] : path.join(import.meta.dirname, '../../test/corpus/generic'));
const AGENT = path.resolve(import.meta.dirname, '../../test/support/echo-agent.mjs');
const DATE = new Date().toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const node = execFileSync('node', ['--version'], { encoding: 'utf8' }).trim();
let written = 0;

function sample(cls: string, name: string, screen: string, label: Record<string, unknown>, typed: string[], how: string) {
  const dir = path.join(OUT, cls);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${name}.screen.txt`), screen);
  const source = `recorded from test/support/echo-agent.mjs (node ${node}, tmux) on ${DATE} by scripts/corpus/record-echo.ts: ${how}`;
  fs.writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify({ kind: 'screen', label, source, typed }, null, 2)}\n`);
  written++;
}

const CONTINUE = 'The usage limit has reset. Continue where you left off.';
const PROMPTS = [
  'Add rate limit middleware to the API',
  'Fix the rate limiting bug: the usage limit check is off by one',
  'Write a test for the quota exceeded error path',
  "Handle the API's 429 rate limit errors with a retry and back-off in src/client.ts",
  'Document the usage limit and the rate limit headers in docs/api.md, with one example per header',
];

async function run(name: string, width: number, limit: boolean, steps: (pane: TmuxPane, typed: string[]) => Promise<void>) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-corpus-echo-'));
  const pane = TmuxPane.start({
    socket: `orchctl-corpus-echo-${process.pid}-${name}`,
    session: 'main',
    cwd: root,
    argv: ['node', AGENT],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TERM: 'tmux-256color',
      ORCHCTL_WORKSPACE: root,
      ECHO_AGENT_LIMIT: limit ? '1' : '0',
    },
    width,
  });
  try {
    await pane.waitFor(/^> ?$/m, 10_000, 50);
    await steps(pane, []);
  } finally {
    pane.killServer();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function type(pane: TmuxPane, typed: string[], text: string) {
  typed.push(text);
  pane.paste(text);
  await sleep(200);
  pane.keys('Enter');
}

async function main() {
  for (const [w, width] of [80, 120, 40].entries()) {
    for (const [p, prompt] of PROMPTS.entries()) {
      // A healthy agent handed a prompt about limits: idle once it answered; never a limit.
      await run(`ok-${w}-${p}`, width, false, async (pane, typed) => {
        await type(pane, typed, prompt);
        await sleep(1000);
        sample('idle', `prompt-${width}-${p}`, pane.capture(), { state: 'idle' }, [...typed], 'the prompt answered');
      });
    }
    // The limit, then the continue message: rate-limited, then idle (its echo says "usage limit").
    await run(`limit-${w}`, width, true, async (pane, typed) => {
      await type(pane, typed, PROMPTS[w % PROMPTS.length]);
      await sleep(1000);
      sample('rate-limited', `limit-${width}`, pane.capture(), { state: 'idle', quotaExhausted: true }, [...typed], 'the agent printed its limit notice');
      await type(pane, typed, CONTINUE);
      await sleep(1000);
      sample('idle', `continued-${width}`, pane.capture(), { state: 'idle' }, [...typed], 'the continue message answered');
    });
  }
  process.stdout.write(`${written} samples in ${OUT}\n`);
}

await main();
