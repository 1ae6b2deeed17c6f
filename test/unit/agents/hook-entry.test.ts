/**
 * The hook entry point as agents run it: the built bin/orchctl in its own process. It must never
 * block or fail the agent — whatever it is given, it prints nothing and exits 0 by itself.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../../support/cli.js';

let ws: string;
beforeEach(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-hook-'));
});
afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

/** Runs `orchctl hook`; a hang shows as timedOut (the hook has its own, much shorter deadline). */
async function hook(input: string | undefined, env: Record<string, string | undefined>, keepStdinOpen = false) {
  const p = execa(process.execPath, [BIN, 'hook'], {
    env: { PATH: process.env.PATH, ...env },
    extendEnv: false,
    reject: false,
    timeout: 10_000,
    ...(keepStdinOpen ? { stdin: 'pipe' as const } : { input: input ?? '' }),
  });
  if (keepStdinOpen) p.stdin?.write(input ?? ''); // and never end it
  const r = await p;
  return r;
}

const lines = () =>
  fs
    .readFileSync(path.join(ws, 'hooks.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('orchctl hook', () => {
  it('appends the payload with a timestamp and prints nothing', async () => {
    const payload = { hook_event_name: 'Stop', session_id: 's1', last_assistant_message: 'done' };
    const r = await hook(JSON.stringify(payload) + '\n', { ORCHCTL_WORKSPACE: ws });
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.stdout).toBe('');
    const [rec] = lines();
    expect(rec.payload).toEqual(payload);
    expect(typeof rec.t).toBe('number');
  });

  it('keeps concurrent calls as whole separate lines', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        hook(JSON.stringify({ hook_event_name: 'PreToolUse', i, pad: 'x'.repeat(3000) }), { ORCHCTL_WORKSPACE: ws }),
      ),
    );
    const recs = lines();
    expect(recs).toHaveLength(8);
    expect(new Set(recs.map((r) => (r.payload as { i: number }).i))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7]));
  });

  it('exits 0 on a payload that is not JSON, keeping a bounded copy for diagnosis', async () => {
    const r = await hook('this is {not json', { ORCHCTL_WORKSPACE: ws });
    expect(r.exitCode).toBe(0);
    expect(lines()[0].raw).toBe('this is {not json');
  });

  it('exits 0 on an empty payload and on a JSON array', async () => {
    expect((await hook('', { ORCHCTL_WORKSPACE: ws })).exitCode).toBe(0);
    expect((await hook('[1,2]', { ORCHCTL_WORKSPACE: ws })).exitCode).toBe(0);
    expect(lines().map((l) => l.payload)).toEqual([undefined, undefined]);
  });

  it('exits 0 and writes nothing without a workspace (not started by orchctl, or no controller)', async () => {
    const r = await hook('{"hook_event_name":"Stop"}', {});
    expect(r.exitCode).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
    const gone = path.join(ws, 'removed');
    const r2 = await hook('{"hook_event_name":"Stop"}', { ORCHCTL_WORKSPACE: gone });
    expect(r2.exitCode).toBe(0);
    expect(fs.existsSync(gone)).toBe(false);
  });

  it('exits 0 when the disk is full', async () => {
    fs.symlinkSync('/dev/full', path.join(ws, 'hooks.jsonl'));
    const r = await hook('{"hook_event_name":"Stop"}', { ORCHCTL_WORKSPACE: ws });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe('');
  });

  it('gives up on a stdin that never closes, by itself, and still records what it got', async () => {
    const r = await hook('{"hook_event_name":"Notification"}', { ORCHCTL_WORKSPACE: ws }, true);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(0);
    const [rec] = lines();
    expect(rec.timedOut).toBe(true);
    expect(rec.payload).toEqual({ hook_event_name: 'Notification' });
  });

  it('cuts a huge payload and marks it', async () => {
    const r = await hook(JSON.stringify({ hook_event_name: 'PostToolUse', out: 'y'.repeat(400 * 1024) }), {
      ORCHCTL_WORKSPACE: ws,
    });
    expect(r.exitCode).toBe(0);
    const [rec] = lines();
    expect(rec.truncated).toBe(true);
  });
});

describe('orchctl hook statusline', () => {
  const statusline = (input: string) =>
    execa(process.execPath, [BIN, 'hook', 'statusline'], {
      env: { PATH: process.env.PATH, ORCHCTL_WORKSPACE: ws },
      extendEnv: false,
      reject: false,
      timeout: 10_000,
      input,
    });
  // The shape Claude Code 2.1.330 gives its statusline command (trimmed).
  const payload = {
    session_id: 's1',
    model: { id: 'claude-opus-5-5' },
    context_window: {
      context_window_size: 1_000_000,
      current_usage: { input_tokens: 560_000, output_tokens: 50, cache_read_input_tokens: 1000 },
      used_percentage: 56,
    },
    rate_limits: { five_hour: { used_percentage: 85, resets_at: 1795534477 } },
  };
  const file = () => path.join(ws, 'statusline.json');

  it('writes the figures to statusline.json and prints a short line for the statusline', async () => {
    const r = await statusline(`${JSON.stringify(payload)}\n`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('orchctl · ctx 56% · five_hour 85%');
    expect(JSON.parse(fs.readFileSync(file(), 'utf8'))).toEqual({
      usedPercent: 56,
      windowTokens: 1_000_000,
      usedTokens: 561_000,
      rateLimits: [{ window: 'five_hour', usedPercent: 85, resetsAt: 1795534477 }],
    });
  });

  it('rewrites the file only when the figures change (the controller reads it on a new stamp)', async () => {
    await statusline(JSON.stringify(payload));
    const before = fs.statSync(file()).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await statusline(JSON.stringify({ ...payload, session_id: 'other', cost: { total_cost_usd: 1 } }));
    expect(fs.statSync(file()).mtimeMs).toBe(before);
    await statusline(
      JSON.stringify({ ...payload, context_window: { ...payload.context_window, used_percentage: 57 } }),
    );
    expect(JSON.parse(fs.readFileSync(file(), 'utf8')).usedPercent).toBe(57);
    expect(fs.readdirSync(ws)).toEqual(['statusline.json']); // no temp file left behind
  });

  it('garbage or no workspace: it still prints, writes nothing and exits 0', async () => {
    const r = await statusline('not json');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'orchctl · ctx -' });
    expect(fs.existsSync(file())).toBe(false);
  });
});
