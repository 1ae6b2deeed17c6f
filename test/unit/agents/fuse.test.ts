/**
 * The self-fencing fuse of the launch wrapper (agents/launch.ts), run by a real sh in its own
 * process group as tmux runs it: with a heartbeat file older than ORCHCTL_FUSE_SECONDS the agent
 * is hung up (and the wrapper with it, as a tmux kill does) and `fused` is written; with a heartbeat
 * kept fresh the agent runs to its end and its exit code is recorded; the agent's stop keys (INT)
 * do not disarm it; without ORCHCTL_HEARTBEAT_FILE there is no watchdog at all.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildLaunch, LAUNCH_SCRIPT } from '../../../controller/agents/launch.js';

let dir: string;
let heartbeat: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-fuse-'));
  heartbeat = path.join(dir, 'heartbeat');
  fs.writeFileSync(heartbeat, '');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const age = (seconds: number) => {
  const t = new Date(Date.now() - seconds * 1000);
  fs.utimesSync(heartbeat, t, t);
};

/** The wrapper around `agent` (an sh script), detached: its own process group, like a tmux pane's. */
function wrap(agent: string, env: Record<string, string>) {
  return execa('sh', ['-c', LAUNCH_SCRIPT, 'sh', '-c', agent], {
    env: { PATH: process.env.PATH, ORCHCTL_WORKSPACE: dir, ...env },
    extendEnv: false,
    detached: true,
    reject: false,
  });
}
const fuseEnv = () => ({ ORCHCTL_HEARTBEAT_FILE: heartbeat, ORCHCTL_FUSE_SECONDS: '2' });

it('buildLaunch passes the fuse to tmux as names and paths only when asked', () => {
  const base = {
    agent: { command: ['claude'] },
    prompt: 'p',
    promptFile: '/ws/prompt.md',
    resultFile: '/ws/result.json',
    workspace: '/ws',
    sessionKey: 'default/s',
    uid: 'u',
    run: 1,
  };
  expect(buildLaunch(base).tmuxEnv.ORCHCTL_HEARTBEAT_FILE).toBeUndefined();
  const env = buildLaunch({ ...base, fuse: { heartbeatFile: '/h/heartbeat', seconds: 20 } }).tmuxEnv;
  expect(env).toMatchObject({ ORCHCTL_HEARTBEAT_FILE: '/h/heartbeat', ORCHCTL_FUSE_SECONDS: '20' });
});

it('a stale heartbeat hangs up the agent and the wrapper, and says so in fused', async () => {
  age(60);
  const t0 = Date.now();
  const p = wrap('sleep 30', fuseEnv());
  const r = await p;
  expect(Date.now() - t0).toBeLessThan(8000);
  expect(r.signal).toBe('SIGHUP');
  expect(fs.existsSync(path.join(dir, 'fused'))).toBe(true);
  expect(fs.existsSync(path.join(dir, 'exit-code'))).toBe(false); // as after tmux kill-session
});

it('a heartbeat kept fresh lets the agent finish; its exit code is recorded', async () => {
  const touch = setInterval(() => age(0), 300);
  try {
    const r = await wrap('sleep 4; exit 7', fuseEnv());
    expect(r.exitCode).toBe(7);
  } finally {
    clearInterval(touch);
  }
  expect(fs.readFileSync(path.join(dir, 'exit-code'), 'utf8')).toBe('7\n');
  expect(fs.existsSync(path.join(dir, 'fused'))).toBe(false);
});

it("the agent's stop keys (INT to the group) do not disarm it", async () => {
  const p = wrap("trap '' INT; sleep 30", fuseEnv());
  await sleep(500);
  process.kill(-p.pid!, 'SIGINT');
  await sleep(500);
  age(60); // the node stops renewing after the stop keys went in
  const r = await p;
  expect(r.signal).toBe('SIGHUP');
  expect(fs.existsSync(path.join(dir, 'fused'))).toBe(true);
});

it('without a heartbeat file there is no watchdog: a stale file means nothing', async () => {
  age(60);
  const p = wrap('sleep 3; exit 0', {});
  await sleep(500);
  const children = fs.readFileSync(`/proc/${p.pid}/task/${p.pid}/children`, 'utf8').trim().split(/\s+/);
  expect(children).toHaveLength(1); // the agent only
  const r = await p;
  expect(r.exitCode).toBe(0);
  expect(fs.existsSync(path.join(dir, 'fused'))).toBe(false);
});
