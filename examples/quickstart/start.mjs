#!/usr/bin/env node
/**
 * `npm start`: the orchctl quickstart. Creates the demo repositories (setup.mjs), then runs
 * `orchctl controller --manifests examples/quickstart` in the foreground: it applies the
 * manifests (and re-applies them whenever they change) and runs the simulated agent sessions in
 * tmux, logging every phase transition. Ctrl-C stops the controller; the tmux sessions keep
 * running and are adopted when it starts again. Extra arguments go to the controller:
 * `npm start -- --log-level debug`.
 *
 * State directory and tmux socket: the quickstart uses its own, ./.orchctl-quickstart (in the
 * repository root, gitignored) and the socket `orchctl-quickstart`, unless ORCHCTL_HOME /
 * ORCHCTL_TMUX_SOCKET are set. Why not the defaults (~/.orchctl, socket `orchctl`):
 *   - only one controller acts on a store (a lease): the demo must neither fail nor take over
 *     because a real controller already runs on ~/.orchctl;
 *   - a fresh start is `npm run quickstart:reset` — delete one directory and one tmux server,
 *     with no risk to real sessions, instead of deleting objects one by one (which needs a
 *     controller running to clear their finalizers);
 *   - the demo's objects and tmux sessions never mix with real ones (a real controller would
 *     report the demo's tmux sessions on its socket as orphans).
 * The price is one line in the second terminal — this script prints it — so that orchctl
 * looks at the same store: export ORCHCTL_HOME=... ORCHCTL_TMUX_SOCKET=...
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_HOME, DEFAULT_SOCKET, QUICKSTART_DIR, REPO_ROOT, setup } from './setup.mjs';

const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

function need(cmd, args, hint) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    console.error(`error: ${hint}`);
    process.exit(1);
  }
}

need('tmux', ['-V'], 'tmux is not installed (or not on PATH); orchctl runs every agent session in tmux');
need('git', ['--version'], 'git is not installed (or not on PATH); the quickstart needs it');

const cli = path.join(REPO_ROOT, 'bin', 'orchctl');
if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'controller', 'cli', 'main.js'))) {
  console.log('orchctl is not built yet; running `npm run build` ...');
  need('npm', ['run', 'build', '--silent'], '`npm run build` failed; run it yourself to see why');
}

const home = process.env.ORCHCTL_HOME ? path.resolve(process.env.ORCHCTL_HOME) : DEFAULT_HOME;
const socket = process.env.ORCHCTL_TMUX_SOCKET || DEFAULT_SOCKET;
const manifests = path.relative(REPO_ROOT, QUICKSTART_DIR) || '.';
const rel = (p) => (p.startsWith(REPO_ROOT + path.sep) ? path.relative(REPO_ROOT, p) : p);

console.log(bold('orchctl quickstart') + dim(' — simulated coding agents, no API key, no network'));
console.log(`\nDemo repositories (${rel(path.join(QUICKSTART_DIR, 'workspace'))}/):`);
try {
  setup();
} catch (e) {
  console.error(`error: ${e.message}`);
  process.exit(1);
}
// A demo that already ran keeps its finished sessions (a controller only re-runs what changed):
// say so, and how to run it from the start.
const ranBefore = fs.existsSync(path.join(home, 'state.db'));
const exportLine = `export ORCHCTL_HOME=${JSON.stringify(home)} ORCHCTL_TMUX_SOCKET=${socket}`;
console.log(`
State: ${rel(home)}   tmux socket: ${socket}
Starting the controller on ${manifests}/ — four sessions, at most three at a time. Watch them from
a second terminal in this directory:

  ${bold(exportLine)}
  ./bin/orchctl get sessions -w                 ${dim('# phases as they change (-o wide: commits, exit codes)')}
  ./bin/orchctl describe session fix-rounding   ${dim('# conditions, git progress, events')}
  ./bin/orchctl logs add-farewell -f            ${dim('# the agent output of the current run')}
  ./bin/orchctl attach write-guide              ${dim('# the live tmux pane (detach: C-b d)')}
  ./bin/orchctl get events -w

Ctrl-C stops the controller (sessions keep running and are adopted on the next start).
Start over: npm run quickstart:reset. More: docs/quickstart.md
`);
if (ranBefore)
  console.log(
    bold('This demo ran here before:') +
      ' finished sessions stay as they ended and are not run again.\n' +
      'To watch it from the start: Ctrl-C, then ' +
      bold('npm run quickstart:reset && npm start') +
      '\n',
  );

// The demo is for people: a readable log even when stdout is a pipe or a file (the controller's
// own default there is JSON lines), unless the caller chose a format.
const extra = process.argv.slice(2);
const format = extra.some((a) => a.startsWith('--log-format')) ? [] : ['--log-format', 'text'];
const child = spawn(process.execPath, [cli, 'controller', '--manifests', manifests, ...format, ...extra], {
  cwd: REPO_ROOT,
  stdio: 'inherit',
  env: { ...process.env, ORCHCTL_HOME: home, ORCHCTL_TMUX_SOCKET: socket },
});
// Ctrl-C reaches the controller from the terminal (same process group); don't send it twice.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
process.on('SIGHUP', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (signal === 'SIGTERM' ? 15 : 2) : 1)));
