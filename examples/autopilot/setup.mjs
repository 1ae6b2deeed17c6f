#!/usr/bin/env node
/**
 * Creates the autopilot example's three git repositories under examples/autopilot/workspace/ (one
 * per Project in projects.yaml), each with one commit dated five days ago — so that every project
 * is stale (idle longer than the Project default staleAfter, 72h) when the controller first looks.
 * Idempotent: a repository that already exists is left exactly as it is.
 *
 *   node examples/autopilot/setup.mjs           create what is missing
 *   node examples/autopilot/setup.mjs --reset   remove the demo repositories (start.mjs --reset also
 *                                               removes the example's state directory and tmux server)
 *
 * Plain Node, no dependencies; git runs with argument arrays (never a shell string), with the
 * author set by `-c` (works with no git identity configured) and the commit backdated through
 * GIT_AUTHOR_DATE / GIT_COMMITTER_DATE. The repositories hold no .yaml/.yml/.json files:
 * `--manifests examples/autopilot` reads this directory recursively.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXAMPLE_DIR = path.dirname(fileURLToPath(import.meta.url));
export const WORKSPACE = path.join(EXAMPLE_DIR, 'workspace');
/** How old the repositories' only commit is. */
export const IDLE_DAYS = 5;

const GIT_IDENTITY = [
  '-c',
  'user.name=orchctl autopilot example',
  '-c',
  'user.email=autopilot@orchctl.invalid',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'init.defaultBranch=main',
];

function git(cwd, args, env = {}) {
  return execFileSync('git', [...GIT_IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** The demo repositories: file name → contents. Small, and free of YAML/JSON. */
export const REPOS = {
  'docs-site': {
    'README.md': '# docs-site\n\nThe product documentation site, used by the orchctl autopilot example.\n',
    'docs/index.md': '# Documentation\n\n- Installing\n- Configuration\n',
    'docs/install.md': '# Installing\n\nTODO: write the installation steps.\n',
  },
  billing: {
    'README.md': '# billing\n\nInvoices and payments. Protected: changes here go through a person.\n',
    'src/invoice.js': 'export const total = (lines) => lines.reduce((sum, l) => sum + l.qty * l.price, 0);\n',
  },
  'flaky-api': {
    'README.md': '# flaky-api\n\nA small HTTP API whose agent runs hit network timeouts.\n',
    'src/server.js': "export const routes = { '/health': () => 'ok' };\n",
  },
};

const rel = (p) => path.relative(process.cwd(), p) || '.';

function hasCommit(dir) {
  try {
    git(dir, ['rev-parse', '--verify', '--quiet', 'HEAD']);
    return true;
  } catch {
    return false;
  }
}

/** Creates whatever is missing; logs one line per repository saying what it did. */
export function setup({ log = console.log, now = Date.now() } = {}) {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('git is not installed (or not on PATH); the example needs it');
  }
  const date = new Date(now - IDLE_DAYS * 86_400_000).toISOString();
  fs.mkdirSync(WORKSPACE, { recursive: true });
  for (const [name, files] of Object.entries(REPOS)) {
    const dir = path.join(WORKSPACE, name);
    if (fs.existsSync(path.join(dir, '.git')) && hasCommit(dir)) {
      log(`  exists   ${rel(dir)}  (HEAD ${git(dir, ['log', '-1', '--format=%h %cr'])})`);
      continue;
    }
    for (const [file, text] of Object.entries(files)) {
      const p = path.join(dir, file);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      if (!fs.existsSync(p)) fs.writeFileSync(p, text);
    }
    if (!fs.existsSync(path.join(dir, '.git'))) git(dir, ['init', '--quiet']);
    git(dir, ['add', '--', ...Object.keys(files)]);
    git(dir, ['commit', '--quiet', '--no-verify', '-m', `Initial commit of the ${name} demo repository`], {
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    });
    log(`  created  ${rel(dir)}  (one commit, dated ${IDLE_DAYS} days ago)`);
  }
}

/** Removes the demo repositories (only those named in REPOS). */
export function reset({ log = console.log } = {}) {
  for (const name of Object.keys(REPOS)) {
    const dir = path.join(WORKSPACE, name);
    if (!fs.existsSync(dir)) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    log(`  removed  ${rel(dir)}`);
  }
  if (fs.existsSync(WORKSPACE) && fs.readdirSync(WORKSPACE).length === 0) fs.rmdirSync(WORKSPACE);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  try {
    if (args.includes('--help') || args.includes('-h'))
      console.log('usage: node examples/autopilot/setup.mjs [--reset]');
    else if (args.includes('--reset')) reset();
    else {
      console.log(`orchctl autopilot example: demo repositories in ${rel(WORKSPACE)}`);
      setup();
    }
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exitCode = 1;
  }
}
