/**
 * The node's one watchdog (app/watchdog.ts) against a real sh and a real tmux server on its own
 * socket, with runs launched as the node agent launches them (buildLaunch's wrapper, Tmux.launch):
 * a stale heartbeat hangs up every run (SIGKILL for what ignores the hangup), leaves the panes and
 * another program's pane alone and writes `fused`; a fresh one changes nothing; a newer watchdog
 * replaces the older, which exits, as does one whose owner file is gone; it outlives the node
 * process that started it. Cost: one watchdog per node whatever the number of runs, and a wrapper
 * that runs nothing but the agent.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildLaunch, LAUNCH_SCRIPT, LAUNCH_SCRIPT_STDIN } from '../../../controller/agents/launch.js';
import { packageRoot } from '../../../controller/config/paths.js';
import { fuseFor } from '../../../controller/app/node-agent.js';
import { type Fuse, fuseFiles, startWatchdog, WATCHDOG_NAME } from '../../../controller/app/watchdog.js';
import { Tmux } from '../../../controller/observers/tmux.js';

let dir: string;
let fuse: Fuse;
let tmux: Tmux;
let seq = 0;
const started: number[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-watchdog-'));
  fuse = { ...fuseFiles(dir), seconds: 2 };
  fs.writeFileSync(fuse.heartbeatFile, '');
  tmux = new Tmux(`orchctl-wd-${process.pid}-${++seq}`);
});
afterEach(async () => {
  for (const pid of started.splice(0)) alive(pid) && process.kill(pid, 'SIGKILL');
  await tmux.run(['kill-server'], { reject: false });
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const age = (seconds: number) => {
  const t = new Date(Date.now() - seconds * 1000);
  fs.utimesSync(fuse.heartbeatFile, t, t);
};
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
const start = (f = fuse) => {
  const pid = startWatchdog(f, tmux.socket)!;
  started.push(pid);
  return pid;
};
const owner = () => fs.readFileSync(fuse.ownerFile, 'utf8').trim();

/**
 * Watchdogs of this test's home: processes whose argv names it and the heartbeat file, less the
 * watchdog's own forks. Each `$(stat …)`, `$(date …)` and `$(tmux …)` is a forked copy of the shell,
 * with the same argv until it execs (or for the whole of a `a || b` list): on a loaded machine a scan
 * often catches one, and it is not a second watchdog.
 */
function watchdogs(): number[] {
  const found = new Map<number, number>(); // pid → parent pid
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    let argv: string[];
    let stat: string;
    try {
      argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses, so split after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (argv.includes(WATCHDOG_NAME) && argv.includes(fuse.heartbeatFile)) found.set(Number(p), ppid);
  }
  return [...found].filter(([, ppid]) => !found.has(ppid)).map(([pid]) => pid);
}

/** A run as the node agent launches it: the wrapper around `agent` (sh), tagged with a uid. */
async function launch(i: number, agent: string): Promise<void> {
  const workspace = path.join(dir, `ws-${i}`);
  fs.mkdirSync(workspace);
  const plan = buildLaunch({
    agent: { command: ['sh', '-c', agent] },
    prompt: '',
    promptFile: path.join(workspace, 'prompt.md'),
    resultFile: path.join(workspace, 'result.json'),
    workspace,
    sessionKey: `default/s${i}`,
    uid: `uid-${i}`,
    run: 1,
  });
  await tmux.launch({
    session: `run-${i}`,
    cwd: dir,
    argv: plan.argv,
    env: plan.env,
    tags: { uid: `uid-${i}`, key: `default/s${i}#1`, epoch: 1 },
  });
}
const panes = async () => (await tmux.listPanes()).panes;
const live = async () => (await panes()).filter((p) => !p.dead);
/** The pids of a process's children. */
const children = (pid: number) =>
  fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

it('a stale heartbeat hangs up every run, SIGKILLs what ignores it, keeps the panes tagged fused', async () => {
  await launch(1, 'exec sleep 600');
  // A straggler: the agent ignores the hangup (and its sleep inherits that).
  await launch(2, `trap '' HUP; echo $$ > ${dir}/straggler; sleep 600`);
  // Another program's pane on the socket (no orchctl uid) is not this node's run.
  await tmux.run(['new-session', '-d', '-s', 'other', 'sleep', '600']);
  // A run launched by an older orchctl, its uid in an option of its own (not in @orchctl-tags).
  await tmux.run([
    'new-session',
    '-d',
    '-s',
    'older',
    'sleep',
    '600',
    ';',
    'set-option',
    '-t',
    '=older:',
    '@orchctl-uid',
    'u-old',
  ]);
  await until('the straggler started', () => fs.existsSync(path.join(dir, 'straggler')));
  const straggler = Number(fs.readFileSync(path.join(dir, 'straggler'), 'utf8'));
  const runPanes = (await live()).filter((p) => p.uid).map((p) => p.pid);
  expect(runPanes).toHaveLength(3);
  age(60);
  const wd = start();
  await until('both runs dead', async () => (await live()).every((p) => !p.uid));
  await until('the straggler killed', () => !alive(straggler), 5000);
  const after = await panes();
  expect(after.filter((p) => p.uid && p.dead)).toHaveLength(3); // kept for the run's end and the sweep
  expect(after.find((p) => p.session === 'other')?.dead).toBe(false);
  // Tagged: the node restarts such a run without counting a restart (not the agent's failure).
  expect(after.filter((p) => p.uid).map((p) => p.fused)).toEqual([true, true, true]);
  expect(after.find((p) => p.session === 'other')?.fused).toBe(false);
  expect(fs.existsSync(path.join(dir, 'ws-1', 'exit-code'))).toBe(false); // hung up, as a tmux kill does
  const fused = fs.readFileSync(fuse.fusedFile, 'utf8').trim().split('\n');
  expect(fused).toHaveLength(1);
  for (const pid of runPanes) expect(fused[0]).toContain(` ${pid}`);
  // It keeps watching (a node may come back), and a stale heartbeat with nothing left to hang up adds nothing.
  await sleep(4500);
  expect(alive(wd)).toBe(true);
  expect(fs.readFileSync(fuse.fusedFile, 'utf8').trim().split('\n')).toHaveLength(1);
}, 30_000);

it('a heartbeat kept fresh leaves the runs alone', async () => {
  await launch(1, 'exec sleep 600');
  const touch = setInterval(() => age(0), 500);
  try {
    start();
    await sleep(6000); // past the 2 s age, three checks
  } finally {
    clearInterval(touch);
  }
  expect((await live()).filter((p) => p.uid)).toHaveLength(1);
  expect(fs.existsSync(fuse.fusedFile)).toBe(false);
}, 20_000);

it('a newer watchdog replaces the older, which exits; without its owner file it exits too', async () => {
  const first = start();
  await until('the first owns the node', () => fs.existsSync(fuse.ownerFile) && owner() === String(first));
  const second = start();
  await until('the second owns the node', () => owner() === String(second));
  await until('the first gone', () => !alive(first), 5000);
  expect(watchdogs()).toEqual([second]);
  fs.rmSync(fuse.ownerFile);
  await until('the second gone', () => !alive(second), 5000);
  expect(watchdogs()).toEqual([]);
}, 20_000);

it.each(['SIGTERM', 'SIGKILL'] as const)(
  'it outlives the node process that started it (%s) and guards on',
  async (sig) => {
    await launch(1, 'exec sleep 600');
    // A node process of its own (in its own process group, as a service is), loading the module as the agent does.
    const module = JSON.stringify(path.join(packageRoot(), 'controller/app/watchdog.ts'));
    const code =
      `const { startWatchdog } = await import(${module});` +
      `console.log(startWatchdog(${JSON.stringify(fuse)}, ${JSON.stringify(tmux.socket)}));` +
      'setInterval(() => {}, 1000);';
    const node = execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: packageRoot(),
      detached: true,
      reject: false,
    });
    let out = '';
    node.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await until('the watchdog started', () => /^\d+\n/.test(out), 15_000);
    const wd = Number(out.trim());
    started.push(wd);
    // SIGTERM: the node process's own exit; SIGKILL of its whole group: what a crash or a hard stop does.
    if (sig === 'SIGTERM') process.kill(node.pid!, sig);
    else process.kill(-node.pid!, sig);
    await node;
    await sleep(500);
    expect(alive(wd)).toBe(true);
    age(60);
    await until('the run hung up by the orphaned watchdog', async () => !(await live()).some((p) => p.uid), 8000);
  },
  30_000,
);

it('cost: one watchdog per node whatever the number of runs; the wrapper runs only the agent', async () => {
  const N = 12;
  fuse = fuseFor(dir); // the node agent's own settings (lease + 5 s)
  fs.writeFileSync(fuse.heartbeatFile, '');
  start();
  for (let i = 1; i <= N; i++) await launch(i, 'exec sleep 600');
  const restarted = start(); // a restarted node agent starts its own
  await until('the older watchdog gone', () => watchdogs().length === 1, 5000);
  expect(watchdogs()).toEqual([restarted]);
  const wrappers = (await live()).filter((p) => p.uid);
  expect(wrappers).toHaveLength(N);
  // Each wrapper's only child is its agent: no watchdog, no sleep beside it.
  for (const w of wrappers) expect(children(w.pid)).toHaveLength(1);
  for (const script of [LAUNCH_SCRIPT, LAUNCH_SCRIPT_STDIN]) expect(script).not.toMatch(/\b(while|until|sleep)\b/);
  const env = buildLaunch({
    agent: { command: ['claude'] },
    prompt: 'p',
    promptFile: '/ws/prompt.md',
    resultFile: '/ws/result.json',
    workspace: '/ws',
    sessionKey: 'default/s',
    uid: 'u',
    run: 1,
  }).tmuxEnv;
  expect(Object.keys(env).filter((k) => /HEARTBEAT|FUSE/.test(k))).toEqual([]);
}, 30_000);
