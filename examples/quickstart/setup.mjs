#!/usr/bin/env node
/**
 * Creates the quickstart's demo git repositories under examples/quickstart/workspace/ (one per
 * Project in projects.yaml): git init, a README, a small source file and a test, one commit.
 * Idempotent: a repository that already exists is left exactly as it is.
 *
 *   node examples/quickstart/setup.mjs           create what is missing
 *   node examples/quickstart/setup.mjs --reset   start the demo over: remove the demo repositories,
 *                                                the quickstart state directory and the
 *                                                quickstart tmux sessions (only the quickstart's own
 *                                                defaults; see reset() for what it refuses)
 *
 * Plain Node, no dependencies; git runs with argument arrays (never a shell string) and with the
 * author set by `-c`, so it works on a machine with no git identity configured. The repositories
 * deliberately hold no .yaml/.yml/.json files: the controller reads examples/quickstart
 * recursively for manifests.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const QUICKSTART_DIR = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(QUICKSTART_DIR, '..', '..');
export const WORKSPACE = path.join(QUICKSTART_DIR, 'workspace');
/** The quickstart's own state directory and tmux socket (see start.mjs for why). */
export const DEFAULT_HOME = path.join(REPO_ROOT, '.orchctl-quickstart');
export const DEFAULT_SOCKET = 'orchctl-quickstart';

const GIT_IDENTITY = [
  '-c',
  'user.name=orchctl quickstart',
  '-c',
  'user.email=quickstart@orchctl.invalid',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'init.defaultBranch=main',
];

function git(cwd, args) {
  return execFileSync('git', [...GIT_IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** The demo repositories: file name → contents. Keep them small, and free of YAML/JSON. */
export const REPOS = {
  greeter: {
    'README.md': '# greeter\n\nA tiny greeting library, used by the orchctl quickstart.\n',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source for the demo repository
    'src/greet.js': 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n',
    'test/greet.test.js':
      "import { expect, it } from 'vitest';\nimport { greet } from '../src/greet.js';\n\nit('greets by name', () => expect(greet('Ada')).toBe('Hello, Ada!'));\n",
  },
  calculator: {
    'README.md': '# calculator\n\nA calculator module with a rounding bug, used by the orchctl quickstart.\n',
    'src/calc.js':
      'export const add = (a, b) => a + b;\nexport const divide = (a, b) => a / b;\nexport const display = (x) => String(x);\n',
    'test/calc.test.js':
      "import { expect, it } from 'vitest';\nimport { add, display } from '../src/calc.js';\n\nit('adds', () => expect(add(2, 3)).toBe(5));\nit('displays sums', () => expect(display(add(0.1, 0.2))).toBe('0.3'));\n",
  },
  'todo-api': {
    'README.md': '# todo-api\n\nAn in-memory todo store, used by the orchctl quickstart.\n',
    'src/store.js':
      'const todos = [];\n\nexport function addTodo(title) {\n  const todo = { id: todos.length + 1, title, done: false };\n  todos.push(todo);\n  return todo;\n}\n\nexport const listTodos = () => [...todos];\n',
    'test/store.test.js':
      "import { expect, it } from 'vitest';\nimport { addTodo, listTodos } from '../src/store.js';\n\nit('adds a todo', () => {\n  addTodo('write docs');\n  expect(listTodos()).toHaveLength(1);\n});\n",
  },
  handbook: {
    'README.md': '# handbook\n\nThe contributor handbook, used by the orchctl quickstart.\n',
    'docs/index.md': '# Handbook\n\n- How we review code\n- How we release\n',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source for the demo repository
    'src/toc.js': "export const toc = (pages) => pages.map((p, i) => `${i + 1}. ${p}`).join('\\n');\n",
    'test/toc.test.js':
      "import { expect, it } from 'vitest';\nimport { toc } from '../src/toc.js';\n\nit('numbers pages', () => expect(toc(['a', 'b'])).toBe('1. a\\n2. b'));\n",
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

function isRepoRoot(dir) {
  try {
    return path.resolve(dir, git(dir, ['rev-parse', '--show-toplevel'])) === fs.realpathSync(dir);
  } catch {
    return false;
  }
}

/** Creates whatever is missing; returns one line per repository saying what it did. */
export function setup({ log = console.log } = {}) {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('git is not installed (or not on PATH); the quickstart needs it');
  }
  fs.mkdirSync(WORKSPACE, { recursive: true });
  for (const [name, files] of Object.entries(REPOS)) {
    const dir = path.join(WORKSPACE, name);
    if (fs.existsSync(dir) && isRepoRoot(dir) && hasCommit(dir)) {
      const head = git(dir, ['log', '-1', '--format=%h %s']);
      const count = git(dir, ['rev-list', '--count', 'HEAD']);
      log(`  exists   ${rel(dir)}  (${count} commit${count === '1' ? '' : 's'}, HEAD ${head})`);
      continue;
    }
    fs.mkdirSync(dir, { recursive: true });
    // Only files that are not there yet: a half-made directory keeps what someone put in it.
    for (const [file, text] of Object.entries(files)) {
      const p = path.join(dir, file);
      if (fs.existsSync(p)) continue;
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, text);
    }
    if (!isRepoRoot(dir)) git(dir, ['init', '--quiet']);
    git(dir, ['add', '--', ...Object.keys(files)]);
    git(dir, ['commit', '--quiet', '--no-verify', '-m', `Initial commit of the ${name} demo repository`]);
    log(
      `  created  ${rel(dir)}  (git init, ${Object.keys(files).length} files, initial commit ${git(dir, ['rev-parse', '--short', 'HEAD'])})`,
    );
  }
}

/** The controller holding the store's lease (renewed in the last 20 s), if any: `orchctl version -o json`. */
function controllerHolding(home) {
  if (!fs.existsSync(path.join(home, 'state.db'))) return undefined;
  try {
    const out = execFileSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'orchctl'), 'version', '-o', 'json'], {
      encoding: 'utf8',
      env: { ...process.env, ORCHCTL_HOME: home },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const c = JSON.parse(out).controller;
    if (!c?.holderIdentity || Date.now() - Date.parse(c.renewTime) > 20_000) return undefined;
    // The identity is <host>_<pid>_<random>; a stopped controller's lease outlives it for a while.
    const parts = c.holderIdentity.split('_');
    if (parts.slice(0, -2).join('_') === os.hostname() && !processAlive(Number(parts[parts.length - 2])))
      return undefined;
    return c.holderIdentity;
  } catch {
    return undefined; // not built, or no store: nothing can be running on it
  }
}

function processAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

function tmuxKill(socket, args) {
  try {
    execFileSync('tmux', ['-L', socket, ...args], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the demo over. It only removes what is unmistakably the quickstart's: the demo
 * repositories, and the state directory and tmux server of the quickstart's own defaults. When
 * ORCHCTL_HOME or ORCHCTL_TMUX_SOCKET point elsewhere (possibly someone's real store or sessions)
 * it leaves them alone and says how to remove the quickstart objects from them instead.
 */
export function reset({ log = console.log } = {}) {
  const home = process.env.ORCHCTL_HOME ? path.resolve(process.env.ORCHCTL_HOME) : DEFAULT_HOME;
  const socket = process.env.ORCHCTL_TMUX_SOCKET || DEFAULT_SOCKET;
  const holder = controllerHolding(home);
  if (holder)
    throw new Error(
      `a controller is still running on ${rel(home)} (${holder}); stop it (Ctrl-C where \`npm start\` runs) and run the reset again`,
    );
  if (socket === DEFAULT_SOCKET) {
    log(
      tmuxKill(socket, ['kill-server'])
        ? `  killed   the tmux server on socket ${socket}`
        : `  no tmux server on socket ${socket}`,
    );
  } else
    log(`  kept     tmux socket ${socket} (not the quickstart's own); its sessions end when their objects are deleted`);
  if (home === DEFAULT_HOME) {
    if (fs.existsSync(home)) {
      fs.rmSync(home, { recursive: true, force: true });
      log(`  removed  ${rel(home)}`);
    }
  } else {
    log(
      `  kept     ORCHCTL_HOME ${home} (not the quickstart's own). To remove the quickstart objects from it, with a controller running:`,
    );
    log(`             orchctl delete -f examples/quickstart -R --wait`);
  }
  for (const name of Object.keys(REPOS)) {
    const dir = path.join(WORKSPACE, name);
    if (!fs.existsSync(dir)) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    log(`  removed  ${rel(dir)}`);
  }
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  try {
    if (args.includes('--help') || args.includes('-h')) {
      console.log('usage: node examples/quickstart/setup.mjs [--reset]');
    } else if (args.includes('--reset')) {
      console.log('orchctl quickstart: reset');
      reset();
      console.log('Done. `npm start` sets everything up again.');
    } else {
      console.log(`orchctl quickstart: demo repositories in ${rel(WORKSPACE)}`);
      setup();
    }
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exitCode = 1;
  }
}
