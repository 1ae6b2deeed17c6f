/**
 * The labelled signal corpus (test/corpus/README.md): every sample — recorded screens, hook
 * streams, transcripts and commands — is classified through the controller's own functions
 * (test/support/corpus.ts) exactly as its label says. Nothing is skipped: a sample the classifier
 * gets wrong fails here by name, with the fields it got wrong. `npm run bench -- corpus` gives the
 * accuracy per class and the confusion table.
 */
import { describe, expect, it } from 'vitest';
import { classify, CLASSES, loadCorpus, mismatches } from '../support/corpus.js';

const samples = loadCorpus();

describe('the signal corpus', () => {
  it('has at least 200 labelled samples, each with its source, of every kind', () => {
    expect(samples.length).toBeGreaterThanOrEqual(200);
    for (const s of samples) expect(s.source, s.id).toMatch(/recorded|fixtures|compound/);
    const kinds = new Set(samples.map((s) => s.kind));
    for (const k of ['screen', 'hooks', 'transcript'] as const) expect(kinds, k).toContain(k);
    const ids = samples.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('covers the classes a person names, echoed input and the cases of issue 24', () => {
    const classes = new Set(samples.map((s) => s.label.class));
    for (const c of CLASSES) expect(classes, c).toContain(c);
    expect(samples.some((s) => s.typed?.length)).toBe(true);
  });

  it.each(samples.map((s) => [s.id, s] as const))('%s', (_id, s) => {
    expect(mismatches(s, classify(s))).toEqual([]);
  });
});
