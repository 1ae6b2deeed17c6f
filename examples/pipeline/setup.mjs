#!/usr/bin/env node
/**
 * Creates the pipeline example's two git repositories under examples/pipeline/workspace/ (one per
 * Project in projects.yaml). Idempotent: a repository that already exists is left as it is.
 *
 *   node examples/pipeline/setup.mjs           create what is missing
 *   node examples/pipeline/setup.mjs --reset   remove them
 *
 * Plain Node; git runs with argument arrays (never a shell string), the author set by `-c` so it
 * works with no git identity configured. No .yaml/.json files in the repositories: a directory
 * applied with -R would read them as manifests.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WORKSPACE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'workspace');
const IDENTITY = ['-c', 'user.name=orchctl pipeline example', '-c', 'user.email=pipeline@orchctl.invalid'];
const REPOS = {
  greeter: { 'README.md': '# greeter\n\nA tiny library the pipeline designs, builds and documents.\n' },
  site: { 'README.md': '# site\n\nA small site whose pages the DAG pipeline writes side by side.\n' },
};

const git = (cwd, args) =>
  execFileSync('git', [...IDENTITY, '-c', 'commit.gpgsign=false', ...args], { cwd, stdio: 'ignore' });

if (process.argv.includes('--reset')) {
  fs.rmSync(WORKSPACE, { recursive: true, force: true });
  console.log(`removed ${WORKSPACE}`);
} else {
  for (const [name, files] of Object.entries(REPOS)) {
    const dir = path.join(WORKSPACE, name);
    if (fs.existsSync(dir)) continue;
    fs.mkdirSync(dir, { recursive: true });
    git(dir, ['init', '-q', '-b', 'main']);
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    git(dir, ['add', '.']);
    git(dir, ['commit', '-qm', 'initial']);
    console.log(`created ${dir}`);
  }
}
