/**
 * Signal accuracy on the labelled corpus (test/corpus/README.md): each sample classified through
 * the controller's own functions (test/support/corpus.ts); accuracy per class (a sample counts as
 * right when its class and every labelled field are) and the confusion table of classes, expected
 * (rows) × predicted (columns). `npm run bench -- corpus` writes bench/results/corpus.json.
 */
import { loadCorpus, scoreCorpus } from '../../test/support/corpus.js';
import type { Bench } from '../types.js';

export const corpusBench: Bench = {
  name: 'corpus',
  description: 'signal classification accuracy per class and confusion table on test/corpus',
  async run() {
    const samples = loadCorpus();
    const started = performance.now();
    const score = scoreCorpus(samples);
    const ms = performance.now() - started;
    const kinds: Record<string, number> = {};
    for (const s of samples) kinds[s.kind] = (kinds[s.kind] ?? 0) + 1;
    const perClass = Object.entries(score.perClass)
      .map(([c, v]) => `${c} ${v.correct}/${v.samples}`)
      .join(', ');
    return {
      summary: `${score.correct}/${score.samples} right (${(score.accuracy * 100).toFixed(1)} %): ${perClass}`,
      samples: score.samples,
      kinds,
      accuracy: score.accuracy,
      perClass: score.perClass,
      confusion: score.confusion,
      failures: score.failures,
      classifyAllMs: Math.round(ms * 10) / 10,
    };
  },
};
