/**
 * Delivery confirmed from the agent's own records of the prompt (agents/driver.ts PromptRecords:
 * Codex's history.jsonl, Gemini CLI's chat file), not from the screen. The CI flake it fixes: on a
 * loaded machine Gemini CLI took the Enter after the paste as a newline; the screen moved (the new
 * line) and the controller reported the prompt confirmed, so nothing was ever submitted. Real tmux,
 * a real program in the pane (test/support/agents/newline-after-paste.mjs) that does what those
 * CLIs do with an Enter right after a paste.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexDriver } from '../../controller/agents/codex.js';
import { deliverText, type PaneTarget } from '../../controller/agents/delivery.js';
import { Tmux } from '../../controller/observers/tmux.js';
import { ROOT } from '../support/cli.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function paneWithAgent(): Promise<{ target: PaneTarget; history: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-records-'));
  const socket = `orchctl-records-${process.pid}-${cleanups.length}`;
  const tmux = new Tmux(socket);
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => execa('tmux', ['-L', socket, 'kill-server'], { reject: false }));
  const history = path.join(dir, 'history.jsonl');
  const program = path.join(ROOT, 'test', 'support', 'agents', 'newline-after-paste.mjs');
  await execa('tmux', [
    '-L',
    socket,
    'new-session',
    '-d',
    '-s',
    'a',
    '-x',
    '100',
    '-y',
    '20',
    process.execPath,
    program,
    history,
  ]);
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace, { mode: 0o700 });
  return {
    target: { tmux, target: '=a:', workspace, hooks: false, records: codexDriver.promptRecords!(dir) },
    history,
  };
}

describe('prompt delivery confirmed from the agent’s own records', () => {
  it(
    'an Enter the agent takes as a newline after the paste is not confirmation: submit is pressed again ' +
      'until the agent records the prompt',
    async () => {
      const { target, history } = await paneWithAgent();
      const r = await deliverText(target, {
        text: 'Edit README.md and commit it',
        bufferName: 'orchctl-test',
        submitKeys: ['Enter'],
        ready: (s) => s.includes('ready'),
        readyTimeoutMs: 10_000,
      });
      expect(r).toMatchObject({ delivered: true, reason: 'Confirmed', confirmedBy: 'transcript', retries: 1 });
      expect(fs.readFileSync(history, 'utf8')).toBe(`${JSON.stringify({ text: 'Edit README.md and commit it' })}\n`);
    },
  );

  it('a record of another prompt (a second session sharing the history) does not confirm this one', async () => {
    const { target, history } = await paneWithAgent();
    const delivery = deliverText(target, {
      text: 'our prompt',
      bufferName: 'orchctl-test',
      submitKeys: ['Enter'],
      ready: (s) => s.includes('ready'),
      readyTimeoutMs: 10_000,
    });
    // Once our text is pasted, another session's prompt lands in the shared history.
    for (let i = 0; i < 200 && !(await target.tmux.capture(target.target, 5)).includes('our prompt'); i++)
      await new Promise((r) => setTimeout(r, 20));
    fs.appendFileSync(history, `${JSON.stringify({ text: 'another session' })}\n`);
    expect(await delivery).toMatchObject({ delivered: true, confirmedBy: 'transcript', retries: 1 });
    expect(
      fs
        .readFileSync(history, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).text),
    ).toEqual(['another session', 'our prompt']);
  });
});
