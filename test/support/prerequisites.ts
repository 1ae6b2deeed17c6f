/**
 * The external programs the test suite starts, from test/prerequisites.json (the one list that
 * .ci/run and the README's prerequisite line are checked against), and where each is on PATH.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Prerequisite {
  program: string;
  /** The Debian package that provides it. */
  package: string;
  /** `install`: needed by `npm install` (native addons); `test`: started by the tests. */
  needed: 'install' | 'test';
  why: string;
}

export const PREREQUISITES_FILE = fileURLToPath(new URL('../prerequisites.json', import.meta.url));

export function prerequisites(): Prerequisite[] {
  return (JSON.parse(fs.readFileSync(PREREQUISITES_FILE, 'utf8')) as { programs: Prerequisite[] }).programs;
}

/** The program's path on `searchPath` (a PATH value), or undefined: what `command -v` answers. */
export function findProgram(program: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, program);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** One line per missing program, naming the package that provides it; empty when all are there. */
export function missingPrerequisites(list = prerequisites(), searchPath = process.env.PATH ?? ''): string[] {
  return list
    .filter((p) => !findProgram(p.program, searchPath))
    .map((p) => `missing program ${p.program} (${p.why}): apt-get install ${p.package}`);
}
