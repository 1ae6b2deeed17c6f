#!/usr/bin/env node
/**
 * `node examples/autopilot/start.mjs`: creates the demo repositories (setup.mjs), then runs
 * `orchctl controller --manifests examples/autopilot` in the foreground. Ctrl-C stops it. Extra
 * arguments go to the controller (`-- --log-level debug`).
 *
 *   node examples/autopilot/start.mjs --reset   start over: remove the demo repositories, the
 *                                               example's state directory and its tmux server
 *
 * Like the quickstart (see examples/quickstart/start.mjs for why), the example uses a state
 * directory and tmux socket of its own unless ORCHCTL_HOME / ORCHCTL_TMUX_SOCKET are set: here
 * $TMPDIR/orchctl-autopilot-example and the socket `orchctl-autopilot`. The directory is outside
 * the repository because the controller reads examples/autopilot recursively for manifests and
 * a session's workspace holds JSON files.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXAMPLE_DIR, reset, setup } from './setup.mjs';

const REPO_ROOT = path.resolve(EXAMPLE_DIR, '..', '..');
const DEFAULT_HOME = path.join(os.tmpdir(), 'orchctl-autopilot-example');
const DEFAULT_SOCKET = 'orchctl-autopilot';
const home = process.env.ORCHCTL_HOME ? path.resolve(process.env.ORCHCTL_HOME) : DEFAULT_HOME;
const socket = process.env.ORCHCTL_TMUX_SOCKET || DEFAULT_SOCKET;
const cli = path.join(REPO_ROOT, 'bin', 'orchctl');
const args = process.argv.slice(2);

function need(cmd, cmdArgs, hint) {
  try {
    execFileSync(cmd, cmdArgs, { stdio: 'ignore' });
  } catch {
    console.error(`error: ${hint}`);
    process.exit(1);
  }
}

if (args.includes('--reset')) {
  // Only the example's own defaults are removed: ORCHCTL_HOME / ORCHCTL_TMUX_SOCKET set by hand may
  // be someone's real store and sessions.
  if (socket === DEFAULT_SOCKET)
    try {
      execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
      console.log(`  killed   the tmux server on socket ${socket}`);
    } catch {
      /* no server */
    }
  if (home === DEFAULT_HOME && fs.existsSync(home)) {
    fs.rmSync(home, { recursive: true, force: true });
    console.log(`  removed  ${home}`);
  }
  reset();
  process.exit(0);
}

need('tmux', ['-V'], 'tmux is not installed (or not on PATH); orchctl runs every agent session in tmux');
if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'controller', 'cli', 'main.js'))) {
  console.log('orchctl is not built yet; running `npm run build` ...');
  need('npm', ['run', 'build', '--silent'], '`npm run build` failed; run it yourself to see why');
}
console.log('orchctl autopilot example — a heuristic autopilot at level moderate, simulated agents, offline');
try {
  setup();
} catch (e) {
  console.error(`error: ${e.message}`);
  process.exit(1);
}
const manifests = path.relative(REPO_ROOT, EXAMPLE_DIR);
console.log(`
State: ${home}   tmux socket: ${socket}
Watch from a second terminal in the repository root:

  export ORCHCTL_HOME=${JSON.stringify(home)} ORCHCTL_TMUX_SOCKET=${socket}
  ./bin/orchctl get decisions -w
  ./bin/orchctl describe autopilot autopilot
  ./bin/orchctl get sessions

Start over: node ${manifests}/start.mjs --reset. The story: ${manifests}/README.md
`);
const extra = args.filter((a) => a !== '--');
const format = extra.some((a) => a.startsWith('--log-format')) ? [] : ['--log-format', 'text'];
const child = spawn(process.execPath, [cli, 'controller', '--manifests', manifests, ...format, ...extra], {
  cwd: REPO_ROOT,
  stdio: 'inherit',
  env: { ...process.env, ORCHCTL_HOME: home, ORCHCTL_TMUX_SOCKET: socket },
});
// Ctrl-C reaches the controller from the terminal (same process group); don't send it twice.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGTERM' ? 15 : 2) : 1)));
