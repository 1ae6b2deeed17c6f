/** Where orchctl finds its own files (CRDs, manifests) and its state directory. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The package root (the directory holding orchctl's package.json), from source or dist. */
export function packageRoot(): string {
  if (root) return root;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj) && fs.existsSync(path.join(dir, 'crds'))) {
      root = dir;
      return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot locate the orchctl package root (crds/ directory)');
    dir = up;
  }
}

/** $ORCHCTL_HOME, default ~/.orchctl. */
export function orchctlHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.ORCHCTL_HOME || path.join(os.homedir(), '.orchctl'));
}

export function stateDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(orchctlHome(env), 'state.db');
}
