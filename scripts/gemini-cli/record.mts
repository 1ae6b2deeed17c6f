/**
 * Records the pane fixtures in test/support/fixtures/gemini-cli/<version>/ from the real, pinned
 * Gemini CLI running in tmux against the fake Gemini API (test/support/fake-gemini.ts).
 *
 *   OUT=/tmp/x YOLO=1 npx tsx scripts/gemini-cli/record.mts   # --yolo: tool call, commit, 429
 *   OUT=/tmp/y npx tsx scripts/gemini-cli/record.mts          # default approval mode: the dialog
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  FakeGemini,
  geminiCall,
  geminiRateLimit,
  geminiSettings,
  geminiText,
  geminiToolNames,
} from '../../test/support/fake-gemini.js';

const here = path.dirname(new URL(import.meta.url).pathname);
const yolo = process.env.YOLO === '1';
const out = process.env.OUT;
if (!out) throw new Error('set OUT to the directory for the screens');
const fake = await FakeGemini.start();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-gemini-rec-'));
const repo = path.join(tmp, 'repo');
const home = path.join(tmp, 'home');
fs.mkdirSync(repo);
fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
const git = (...a: string[]) => execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...a]);
execFileSync('git', ['init', '-q', repo]);
fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
git('add', '.');
git('commit', '-qm', 'init');
fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(geminiSettings(), null, 2));
fake.script(
  geminiCall(
    'run_shell_command',
    {
      command: 'echo two >> a.txt && git -c user.name=t -c user.email=t@t commit -qam edit',
      description: 'Append a line and commit',
    },
    'Editing.',
  ),
  geminiText('Committed the edit.'),
  geminiRateLimit(3600),
);
const bin = execFileSync(process.execPath, [path.join(here, '..', 'agents', 'install.mjs'), 'gemini-cli'], {
  encoding: 'utf8',
}).trim();
const sock = `orchctl-gemini-rec-${process.pid}`;
fs.mkdirSync(out, { recursive: true });
const tmux = (...a: string[]) => execFileSync('tmux', ['-L', sock, ...a], { encoding: 'utf8' });
const env = [
  `HOME=${home}`,
  `GOOGLE_GEMINI_BASE_URL=${fake.url}`,
  'GEMINI_API_KEY=fake-key',
  'GEMINI_CLI_DISABLE_AUTOUPDATER=true',
  'NO_BROWSER=true',
];
tmux(
  'new-session',
  '-d',
  '-x',
  '120',
  '-y',
  '40',
  '-c',
  repo,
  ...env.flatMap((e) => ['-e', e]),
  bin,
  ...(yolo ? ['--yolo'] : []),
);
const screen = () => tmux('capture-pane', '-p', '-t', '%0');
const cap = (name: string) => fs.writeFileSync(path.join(out, name), screen());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const waitFor = async (re: RegExp, ms = 30_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (re.test(screen())) return;
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${re} on:\n${screen()}`);
};
const submit = async (text: string) => {
  const n = fake.streams().length;
  tmux('send-keys', '-t', '%0', '-l', text);
  await sleep(1000);
  for (let i = 0; i < 5 && fake.streams().length === n; i++) {
    tmux('send-keys', '-t', '%0', 'Enter');
    await sleep(2000);
  }
};
try {
  await waitFor(/Type your message/);
  await sleep(1000);
  cap('01-startup.txt');
  await submit('Add a line to a.txt and commit');
  if (!yolo) {
    await waitFor(/Allow execution|Allow once|Apply this change|Do you want to proceed/i);
    await sleep(500);
    cap('02-approval.txt');
    tmux('send-keys', '-t', '%0', 'Enter');
  }
  await waitFor(/Committed the edit/);
  await sleep(500);
  cap(yolo ? '02-tool-call-committed.txt' : '03-after-approval.txt');
  if (yolo) {
    await submit('again');
    await waitFor(/quota|429|RESOURCE_EXHAUSTED|limit/i, 60_000);
    await sleep(1500);
    cap('03-rate-limit.txt');
  }
  process.stderr.write(`tools offered: ${geminiToolNames(fake.streams()[0]?.body).join(', ')}\n`);
  process.stderr.write(`requests: ${fake.requests.map((r) => `${r.method} ${r.path}`).join('\n  ')}\n`);
} catch (err) {
  cap('error.txt');
  process.stderr.write(`requests: ${fake.requests.map((r) => `${r.method} ${r.path}`).join('\n  ')}\n`);
  throw err;
} finally {
  tmux('kill-server');
  await fake.close();
  process.stderr.write(`${execFileSync('git', ['-C', repo, 'log', '--oneline'], { encoding: 'utf8' })}\n`);
  fs.rmSync(tmp, { recursive: true, force: true });
}
