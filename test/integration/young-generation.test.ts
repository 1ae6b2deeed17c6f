/**
 * `orchctl controller` keeps V8's young generation at its first size (cli/young-generation.ts): a
 * burst of allocation grows a plain node's semi-spaces to 16 MB each (32 MB committed, kept long
 * after), not the controller's. A preload (`--require`, so no semi-space flag) allocates the same
 * burst in either process once it runs, and writes the new space's size to a file.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Harness, makeHarness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** Allocates 8 M short-lived objects, a fiftieth of them kept, 2 s after start; writes the new space's size. */
const PRELOAD = `
setTimeout(() => {
  const keep = [];
  for (let r = 0; r < 40; r++)
    for (let i = 0; i < 200000; i++) { const o = { a: i, b: 'x' + i }; if (i % 50 === 0) keep.push(o); }
  const ns = require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  require('fs').writeFileSync(process.env.YOUNG_OUT, String(ns.space_size));
}, 2000).unref();
`;

async function newSpaceAfterBurst(out: string): Promise<number> {
  await h.waitFor('the preload wrote the new space size', async () => fs.existsSync(out) && fs.statSync(out).size > 0);
  return Number(fs.readFileSync(out, 'utf8'));
}

it('the controller keeps its young generation at the first size after a burst; a plain node grows it', async () => {
  const preload = path.join(h.dir, 'burst.cjs');
  fs.writeFileSync(preload, PRELOAD);
  const plainOut = path.join(h.dir, 'plain');
  const plain = execa(process.execPath, ['--require', preload, '-e', 'setTimeout(() => {}, 3000)'], {
    env: { YOUNG_OUT: plainOut },
    reject: false,
  });
  const grown = await newSpaceAfterBurst(plainOut);
  await plain;

  const ctlOut = path.join(h.dir, 'controller');
  Object.assign(h.env, { NODE_OPTIONS: `--require ${preload}`, YOUNG_OUT: ctlOut });
  h.start();
  const kept = await newSpaceAfterBurst(ctlOut);
  expect(grown).toBeGreaterThanOrEqual(16 * 2 ** 20);
  expect(kept).toBeLessThanOrEqual(grown / 8);
});
