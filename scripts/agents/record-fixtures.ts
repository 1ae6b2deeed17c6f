/**
 * Records the golden pane fixtures of the shell, Codex CLI and Gemini CLI templates from the real
 * programs in real tmux (the Claude Code ones come from scripts/claude-code/spike.ts):
 *
 *   npx tsx scripts/agents/record-fixtures.ts shell|codex|gemini-cli [--out DIR]
 *
 * Writes <file>.txt captures (`capture-pane -p` of a 120×40 pane on a private `-L` socket, killed
 * at the end) into test/support/fixtures/<agent>/<version>/ (or --out); expected.json and the
 * README there are kept, so `npx vitest run test/unit/agents/detection-golden.test.ts` then says whether
 * the templates still read the new captures right.
 *
 * Codex and Gemini CLI are installed from the npm registry into test/.cache/<agent>/<version>
 * (npm --ignore-scripts; nothing else is downloaded) and run with a temp HOME against a small fake
 * model API on 127.0.0.1 started here — no real model, no other network. The fake answers by the
 * prompt's marker: HOLD never answers (busy screen), APPROVE-ME asks for a shell command that
 * needs approval, QUOTA answers 429, anything else "Done.".
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TmuxPane } from '../../test/support/tmux-pane.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VERSIONS = { codex: '0.169.0', 'gemini-cli': '0.61.0' } as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BASE_ENV = { PATH: '/usr/bin:/bin', TERM: 'tmux-256color', LANG: 'C.UTF-8' };

function install(pkg: string, agent: string, version: string, bin: string): string {
  const dir = path.join(ROOT, 'test/.cache', agent, version);
  const file = path.join(dir, 'node_modules/.bin', bin);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    process.stderr.write(`installing ${pkg}@${version} into ${path.relative(ROOT, dir)}\n`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', `${pkg}@${version}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return file;
}

/** The fake model APIs: OpenAI Responses (Codex) and Gemini generateContent, by the prompt's marker. */
async function startFake(): Promise<{ port: number; close: () => void }> {
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = req.url ?? '';
      const b = body ? (JSON.parse(body) as Record<string, unknown>) : {};
      if (url.includes('/responses')) {
        const input = (b.input as { type?: string; content?: { text?: string }[] }[] | undefined) ?? [];
        const last = input.at(-1) ?? {};
        const text = JSON.stringify(last);
        if (text.includes('HOLD')) return; // never answered: the busy screen
        if (text.includes('QUOTA')) {
          res.writeHead(429, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota, please check your plan and billing details.' } }));
        }
        const item =
          text.includes('APPROVE-ME') && last.type !== 'function_call_output'
            ? { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec_command', arguments: JSON.stringify({ cmd: 'touch /opt/outside-workspace.txt', sandbox_permissions: 'require_escalated', justification: 'Create a marker file outside the workspace?' }) }
            : { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] };
        const id = `resp_${Date.now()}`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const e of [
          { type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } },
          { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } },
          { type: 'response.output_item.done', output_index: 0, item },
          { type: 'response.completed', response: { id, object: 'response', status: 'completed', output: [item], usage } },
        ])
          res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
        return res.end();
      }
      if (/generateContent/i.test(url)) {
        const text = JSON.stringify((b.contents as unknown[] | undefined)?.at(-1) ?? {});
        if (text.includes('HOLD')) return;
        const parts = text.includes('APPROVE-ME') && !text.includes('functionResponse') ? [{ functionCall: { name: 'run_shell_command', args: { command: 'touch marker.txt', description: 'Create a marker file' } } }] : [{ text: 'Done.' }];
        const chunk = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 }, modelVersion: 'gemini-test' };
        if (url.includes('alt=sse')) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return res.end(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(chunk));
      }
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, close: () => server.close() };
}

class Recorder {
  readonly socket = `orchctl-rec-${process.pid}`;
  private panes: TmuxPane[] = [];
  constructor(readonly out: string) {
    fs.mkdirSync(out, { recursive: true });
  }
  start(session: string, cwd: string, argv: string[], env: Record<string, string>): TmuxPane {
    const p = TmuxPane.start({ socket: this.socket, session, cwd, argv, env: { ...BASE_ENV, ...env } });
    this.panes.push(p);
    return p;
  }
  save(p: TmuxPane, file: string): void {
    fs.writeFileSync(path.join(this.out, file), p.capture());
    process.stderr.write(`  ${file}\n`);
  }
  async type(p: TmuxPane, text: string, submit = true): Promise<void> {
    p.paste(text);
    await p.waitFor((s) => s.includes(text.slice(0, 20)), 10_000);
    await sleep(500);
    if (submit) p.keys('Enter');
  }
  close(): void {
    this.panes[0]?.killServer();
  }
}

async function recordShell(r: Recorder, tmp: string): Promise<void> {
  const p = r.start('shell', tmp, ['bash', '--norc', '--noprofile'], { HOME: tmp, PS1: '$ ', PS2: '> ' });
  const cmd = async (line: string, wait: RegExp | number) => {
    p.tmux(['send-keys', '-t', p.target, '-l', line]);
    p.keys('Enter');
    if (typeof wait === 'number') await sleep(wait);
    else await p.waitFor(wait, 10_000);
  };
  await p.waitFor(/^\$$/m);
  r.save(p, 'idle.txt');
  await cmd('echo hello from the shell', /^hello from the shell\n\$$/m);
  r.save(p, 'idle-after-command.txt');
  await cmd('sleep 30', 800);
  r.save(p, 'busy.txt');
  p.keys('C-c');
  await p.waitFor(/\^C\n\$$/m);
  r.save(p, 'interrupted.txt');
  await cmd('read -p "Proceed? [y/N] " answer', /Proceed\? \[y\/N\]\s*$/);
  r.save(p, 'waiting.txt');
  await cmd('n', /^\$$/m);
  await cmd('for i in 1 2 3; do echo "step $i"; sleep 0.2; done; sleep 30', /step 3/);
  await sleep(300);
  r.save(p, 'busy-after-output.txt');
  p.keys('C-c');
}

async function recordCodex(r: Recorder, tmp: string, port: number): Promise<void> {
  const codex = install('@openai/codex', 'codex', VERSIONS.codex, 'codex');
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  const home = path.join(tmp, 'home');
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  const env = { HOME: home, CODEX_HOME: codexHome, TMPDIR: path.join(tmp, 'tmp') };
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  // --no-daemon: otherwise a background app-server outlives the TUI.
  let p = r.start('codex-login', project, [codex, '--no-daemon'], env);
  await p.waitFor(/Sign in with ChatGPT/, 30_000);
  r.save(p, 'dialog-login.txt');
  p.keys('C-c');
  await sleep(500);
  execFileSync(codex, ['login', '--with-api-key'], { input: 'sk-test-0000\n', env: { ...BASE_ENV, ...env }, stdio: ['pipe', 'ignore', 'ignore'] });
  const config = path.join(codexHome, 'config.toml');
  const old = fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '';
  fs.writeFileSync(config, `model_provider = "fake"\nmodel = "gpt-test"\n${old}\n[model_providers.fake]\nname = "fake"\nbase_url = "http://127.0.0.1:${port}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n`);
  p = r.start('codex', project, [codex, '--no-daemon'], { ...env, OPENAI_API_KEY: 'sk-test-0000' });
  await p.waitFor(/Trust this folder\?/, 30_000);
  await sleep(500);
  r.save(p, 'dialog-trust.txt');
  p.keys('Enter');
  await p.waitFor(/Ask Codex to do anything/, 30_000);
  await sleep(3000); // the start-up logo animation
  r.save(p, 'idle.txt');
  await r.type(p, 'say hello', false);
  r.save(p, 'prompt-pasted.txt');
  p.keys('Enter');
  await p.waitFor(/Worked for/, 30_000);
  await sleep(500);
  r.save(p, 'idle-after-turn.txt');
  await r.type(p, 'APPROVE-ME: create the marker file');
  await p.waitFor(/Press enter to confirm or esc to cancel/, 30_000);
  await sleep(500);
  r.save(p, 'waiting-approval.txt');
  p.keys('Escape');
  await p.waitFor(/Conversation interrupted/, 30_000);
  await sleep(500);
  r.save(p, 'interrupted.txt');
  await r.type(p, 'QUOTA test');
  await p.waitFor(/Quota exceeded/, 60_000);
  await sleep(500);
  r.save(p, 'quota.txt');
  await r.type(p, 'HOLD: say hello');
  await p.waitFor(/Working \(\d+s/, 30_000);
  await sleep(2000);
  r.save(p, 'busy.txt');
  p.keys('Escape');
  await sleep(500);
  p.keys('C-c', 'C-c');
  await sleep(1000);
}

async function recordGemini(r: Recorder, tmp: string, port: number): Promise<void> {
  const gemini = install('@google/gemini-cli', 'gemini-cli', VERSIONS['gemini-cli'], 'gemini');
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project, { recursive: true });
  execFileSync('git', ['init', '-q', project]);
  const home = path.join(tmp, 'home');
  const env = { HOME: home, TMPDIR: path.join(tmp, 'tmp') };
  fs.mkdirSync(env.TMPDIR, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  let p = r.start('gemini-first', project, [gemini], env);
  await p.waitFor(/Do you trust the files in this folder\?/, 60_000);
  await sleep(500);
  r.save(p, 'dialog-trust.txt');
  p.keys('Enter');
  await p.waitFor(/How would you like to authenticate/, 30_000);
  await sleep(500);
  r.save(p, 'dialog-login.txt');
  p.keys('C-c', 'C-c');
  await sleep(1000);
  fs.writeFileSync(
    path.join(home, '.gemini/settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, general: { disableAutoUpdate: true, disableUpdateNag: true }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } }),
  );
  p = r.start('gemini', project, [gemini, '--model', 'gemini-test'], { ...env, GEMINI_API_KEY: 'test-key-0000', GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${port}` });
  await p.waitFor(/Type your message/, 60_000);
  await sleep(1000);
  r.save(p, 'idle.txt');
  await r.type(p, 'say hello');
  await p.waitFor(/✦ Done\./, 30_000);
  await sleep(500);
  r.save(p, 'idle-after-turn.txt');
  await r.type(p, 'APPROVE-ME: create the marker file');
  await p.waitFor(/Allow execution of/, 30_000);
  await sleep(500);
  r.save(p, 'waiting-approval.txt');
  p.keys('Escape');
  await p.waitFor(/Request cancelled/, 30_000);
  await sleep(500);
  r.save(p, 'interrupted.txt');
  await r.type(p, 'HOLD: say hello');
  await p.waitFor(/Thinking\.\.\. \(esc to cancel, [3-9]s/, 30_000);
  r.save(p, 'busy.txt');
  p.keys('Escape');
  await sleep(500);
  p.keys('C-c', 'C-c');
  await sleep(1000);
}

async function main(argv: string[]): Promise<number> {
  const agent = argv[0];
  const outIdx = argv.indexOf('--out');
  if (!agent || !['shell', 'codex', 'gemini-cli'].includes(agent)) {
    process.stderr.write('usage: record-fixtures.ts shell|codex|gemini-cli [--out DIR]\n');
    return 2;
  }
  const version = agent === 'shell' ? (/version (\d+\.\d+\.\d+)/.exec(execFileSync('bash', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown') : VERSIONS[agent as keyof typeof VERSIONS];
  const out = outIdx >= 0 ? path.resolve(argv[outIdx + 1]) : path.join(ROOT, 'test/support/fixtures', agent, version);
  // A fixed path, so the captures (which show the working directory) are stable from run to run.
  const tmp = path.join(os.tmpdir(), `orchctl-rec-${agent}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const r = new Recorder(out);
  const fake = await startFake();
  process.stderr.write(`recording ${agent} ${version} into ${path.relative(ROOT, out) || out}\n`);
  try {
    if (agent === 'shell') await recordShell(r, tmp);
    else if (agent === 'codex') await recordCodex(r, tmp, fake.port);
    else await recordGemini(r, tmp, fake.port);
    return 0;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    return 1;
  } finally {
    r.close();
    fake.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
