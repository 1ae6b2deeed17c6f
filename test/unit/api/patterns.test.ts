/**
 * Manifest patterns: compiled case-insensitively, `(?i)` accepted, invalid ones and
 * catastrophic-backtracking candidates rejected with a reason; the seed's defaults pass.
 */
import { describe, expect, it } from 'vitest';
import { checkPattern, compilePattern, MAX_PATTERN_LENGTH } from '../../../controller/api/patterns.js';
import {
  DEFAULT_CORRECTION_PATTERNS,
  DEFAULT_FRUSTRATION_PATTERNS,
  DEFAULT_SATISFACTION_PATTERNS,
  DEFAULT_TASK_BOUNDARY_PATTERNS,
} from '../../../controller/reconcilers/assessment/config.js';

describe('compilePattern', () => {
  it("matches case-insensitively and accepts the seed's (?i) prefix", () => {
    expect(compilePattern(String.raw`(?i)\btry\s+again\b`).test('Please TRY AGAIN')).toBe(true);
    expect(compilePattern(String.raw`\bgood\s+job\b`).test('Good Job!')).toBe(true);
  });
});

describe('checkPattern', () => {
  it('accepts every default pattern', () => {
    for (const p of [
      ...DEFAULT_FRUSTRATION_PATTERNS,
      ...DEFAULT_SATISFACTION_PATTERNS,
      ...DEFAULT_CORRECTION_PATTERNS,
      ...DEFAULT_TASK_BOUNDARY_PATTERNS,
    ])
      expect(checkPattern(p), p).toBeUndefined();
  });

  it('accepts ordinary patterns people write', () => {
    for (const p of [
      String.raw`\b(perfect|excellent|great)\b`,
      String.raw`^\s*no\b`,
      String.raw`\bwhy (did|do) you\b`,
      String.raw`(\d{1,3}\.){3}\d{1,3}`,
      String.raw`[a-z]+@[a-z]+\.com`,
      String.raw`(foo|bar)+`,
      String.raw`(ab)+c`,
      String.raw`\bactually\b.*\bnot\b`,
      String.raw`(?:thanks|cheers)!*`,
      String.raw`[^\]]+`,
      String.raw`(?<word>\w+) \k<word>`,
    ])
      expect(checkPattern(p), p).toBeUndefined();
  });

  it("rejects invalid regular expressions with the engine's reason", () => {
    expect(checkPattern('(unclosed')).toMatch(/^invalid regular expression "\(unclosed": Unterminated group/);
    expect(checkPattern('[z-a]')).toMatch(/^invalid regular expression .*Range out of order/);
    expect(checkPattern('a**')).toMatch(/^invalid regular expression .*Nothing to repeat/);
  });

  it('rejects nested quantifiers', () => {
    for (const p of [
      '(a+)+',
      '(.*)*',
      String.raw`(\w+\s?)*$`,
      '(x+x+)+y',
      String.raw`((ab)*c?)+`,
      '(a{1,20}){2,}',
      String.raw`^(\d+)*$`,
    ])
      expect(checkPattern(p), p).toMatch(
        /may backtrack catastrophically: the repeated group .* contains the repetition .* \(nested quantifiers\)/,
      );
  });

  it('rejects overlapping alternation under a quantifier', () => {
    for (const p of ['(a|a)*', '(a|ab)*c', String.raw`(\w|\d)+`, String.raw`(.|\s)*`, '(Yes|yes)+', '(cat|car)+'])
      expect(checkPattern(p), p).toMatch(
        new RegExp(
          /may backtrack catastrophically: in the repeated group .* /.source +
            /can start with the same character \(overlapping alternation\)/.source,
        ),
      );
    expect(checkPattern('(a|)+')).toMatch(/an alternative can match the empty string/);
  });

  it('folds case when it compares alternatives (matching is case-insensitive)', () => {
    expect(checkPattern('(Y|y)+')).toMatch(/overlapping alternation/);
    expect(checkPattern('(x|y)+')).toBeUndefined();
  });

  it('bounds length and rejects empty or non-string patterns', () => {
    expect(checkPattern('a'.repeat(MAX_PATTERN_LENGTH + 1))).toMatch(/may be at most 512/);
    expect(checkPattern('')).toBe('must not be empty');
    expect(checkPattern(42)).toBe('must be a string');
  });
});
