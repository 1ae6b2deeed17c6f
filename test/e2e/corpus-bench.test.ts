/**
 * `npm run bench -- corpus` runs the corpus loader compiled, from dist/test/support/: it must read
 * the same samples as the sources do, the compound commands' recorded tool outputs
 * (test/fixtures/assessment/outputs/, which are not copied into dist/) included.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { loadCorpus, ROOT, type Sample } from '../support/corpus.js';

it('the compiled corpus loader of the benchmark reads every sample, recorded tool outputs included', async () => {
  const compiled = path.join(ROOT, 'dist/test/support/corpus.js');
  expect(fs.existsSync(compiled), 'run `npm run build` first').toBe(true);
  const mod = (await import(pathToFileURL(compiled).href)) as { loadCorpus: () => Sample[] };
  const fromDist = mod.loadCorpus();
  const fromSource = loadCorpus();
  expect(fromDist.map((s) => [s.id, s.command?.output])).toEqual(fromSource.map((s) => [s.id, s.command?.output]));
  expect(fromDist.some((s) => s.id.startsWith('compound:') && s.command?.output)).toBe(true);
});
