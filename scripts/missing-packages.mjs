#!/usr/bin/env node
// Prints, one per line, the Debian packages of test/prerequisites.json whose program is not on
// PATH: what .ci/run installs (the same list the test suite's globalSetup checks).
import fs from 'node:fs';
import path from 'node:path';

const file = new URL('../test/prerequisites.json', import.meta.url);
const { programs } = JSON.parse(fs.readFileSync(file, 'utf8'));
const onPath = (program) =>
  (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, program), fs.constants.X_OK);
      return dir !== '';
    } catch {
      return false;
    }
  });
const packages = new Set(programs.filter((p) => !onPath(p.program)).map((p) => p.package));
for (const p of packages) console.log(p);
