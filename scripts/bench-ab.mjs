#!/usr/bin/env node
/**
 * A/B of one benchmark between another checkout (A, the baseline: built, e.g. a `git worktree` of an
 * older commit) and this one (B), alternated A B A B … in the same session so that both see the same
 * machine: `node scripts/bench-ab.mjs <baseline-dir> <bench> [rounds=2]`. Each round runs
 * `node dist/bench/run.js <bench>` in each tree and reads its bench/results/<bench>.json; printed is
 * every numeric result (a leaf of `results`) with A's and B's median over the rounds and B/A.
 * Run `npm run build` in both trees first.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [baseDir, bench, roundsArg = '2'] = process.argv.slice(2);
if (!baseDir || !bench) {
  process.stderr.write('usage: node scripts/bench-ab.mjs <baseline-dir> <bench> [rounds]\n');
  process.exit(2);
}
const here = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const trees = { A: path.resolve(baseDir), B: here };
const rounds = Number(roundsArg);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error(`rounds: 1 to 20, not ${roundsArg}`);

/** Numeric leaves of a results object, by dotted path. */
function leaves(o, prefix = '', out = {}) {
  for (const [k, v] of Object.entries(o ?? {})) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'number') out[p] = v;
    else if (v && typeof v === 'object') leaves(v, p, out);
  }
  return out;
}

const samples = { A: [], B: [] };
for (let r = 0; r < rounds; r++)
  for (const side of ['A', 'B']) {
    const dir = trees[side];
    process.stdout.write(`round ${r + 1}/${rounds}: ${side} (${dir})\n`);
    const run = spawnSync(process.execPath, ['dist/bench/run.js', bench], { cwd: dir, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`${side}: the benchmark exited ${run.status}`);
    const file = path.join(dir, 'bench/results', `${bench}.json`);
    samples[side].push(leaves(JSON.parse(fs.readFileSync(file, 'utf8')).results));
  }

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
process.stdout.write(`\n${bench}: median of ${rounds} alternated runs each (A ${trees.A}, B ${trees.B})\n`);
for (const key of Object.keys(samples.B[0])) {
  const a = samples.A.map((s) => s[key]).filter((v) => v !== undefined);
  const b = samples.B.map((s) => s[key]);
  if (!a.length) continue;
  const [ma, mb] = [median(a), median(b)];
  const ratio = ma ? (mb / ma).toFixed(2) : '-';
  process.stdout.write(
    `  ${key.padEnd(48)} A ${String(ma).padStart(10)}  B ${String(mb).padStart(10)}  B/A ${ratio}\n`,
  );
}
