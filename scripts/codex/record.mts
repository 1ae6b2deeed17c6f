/**
 * Records the pane fixtures in test/support/fixtures/codex/<version>/ from the real, pinned Codex
 * CLI running in tmux against the fake Responses API (test/support/fake-openai-responses.ts).
 *
 *   OUT=/tmp/x npx tsx scripts/codex/record.mts                 # yolo: tool call, commit, 429
 *   OUT=/tmp/y APPROVAL=on-request ARGS='{"cmd":"…","sandbox_permissions":"require_escalated",
 *     "justification":"…"}' npx tsx scripts/codex/record.mts     # the approval dialog
 *
 * Screens are written as `tmux capture-pane -p` prints them; rename them into the fixture
 * directory and label them in its expected.json (see its README.md).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  FakeResponses,
  callTurn,
  codexConfig,
  rateLimitTurn,
  textTurn,
  toolNames,
} from '../../test/support/fake-openai-responses.js';

const here = path.dirname(new URL(import.meta.url).pathname);
const approval = process.env.APPROVAL === 'on-request' ? 'on-request' : 'never';
const out = process.env.OUT;
if (!out) throw new Error('set OUT to the directory for the screens');
const fake = await FakeResponses.start();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-codex-rec-'));
const repo = path.join(tmp, 'repo');
const home = path.join(tmp, 'codexhome');
fs.mkdirSync(repo);
fs.mkdirSync(home);
const git = (...a: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...a]);
execFileSync('git', ['init', '-q', repo]);
fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
git('add', '.');
git('commit', '-qm', 'init');
fs.writeFileSync(
  path.join(home, 'config.toml'),
  codexConfig(fake.url, repo, approval, approval === 'never' ? 'danger-full-access' : 'workspace-write'),
);
const args = JSON.parse(
  process.env.ARGS ?? '{"cmd":"echo two >> a.txt && git -c user.name=t -c user.email=t@t commit -qam edit"}',
) as Record<string, unknown>;
fake.script(callTurn('exec_command', args, 'Editing.'), textTurn('Committed the edit.'), rateLimitTurn(3600));
const bin = execFileSync(process.execPath, [path.join(here, '..', 'agents', 'install.mjs'), 'codex'], {
  encoding: 'utf8',
}).trim();
const sock = `orchctl-codex-rec-${process.pid}`;
fs.mkdirSync(out, { recursive: true });
const tmux = (...a: string[]) => execFileSync('tmux', ['-L', sock, ...a], { encoding: 'utf8' });
tmux('new-session', '-d', '-x', '120', '-y', '40', '-c', repo, '-e', `CODEX_HOME=${home}`, '-e', 'FAKE_OPENAI_API_KEY=sk-fake', bin);
const screen = () => tmux('capture-pane', '-p', '-t', '%0');
const cap = (name: string) => fs.writeFileSync(path.join(out, name), screen());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const waitFor = async (re: RegExp, ms = 20_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (re.test(screen())) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${re} on:\n${screen()}`);
};
// Codex's paste-burst detection can swallow an Enter that follows typed text too closely: retry
// the Enter until the fake sees a request.
const submit = async (text: string) => {
  const n = fake.requests.length;
  tmux('send-keys', '-t', '%0', '-l', text);
  await sleep(1000);
  for (let i = 0; i < 5 && fake.requests.length === n; i++) {
    tmux('send-keys', '-t', '%0', 'Enter');
    await sleep(2000);
  }
};
try {
  await waitFor(/Ask Codex to do anything/);
  await sleep(1000);
  cap('01-startup.txt');
  await submit('Add a line to a.txt and commit');
  if (approval === 'on-request') {
    await waitFor(/Would you like to run/);
    await sleep(500);
    cap('02-approval.txt');
    tmux('send-keys', '-t', '%0', 'y');
  }
  await waitFor(/Committed the edit/);
  await sleep(500);
  cap(approval === 'on-request' ? '03-after-approval.txt' : '02-tool-call-committed.txt');
  if (approval === 'never') {
    await submit('again');
    await waitFor(/usage limit/);
    await sleep(1000);
    cap('03-rate-limit.txt');
  }
  process.stderr.write(`tools offered: ${toolNames(fake.responses()[0]?.body).join(', ')}\n`);
} finally {
  tmux('kill-server');
  await fake.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}
