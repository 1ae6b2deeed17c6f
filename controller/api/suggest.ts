/** "Did you mean" for names a person typed: the closest candidate within a small edit distance. */

/** Levenshtein distance (insert, delete, substitute), two rows of memory. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** The candidate closest to `input`, if it is close enough to be a typo (or `input` is its prefix). */
export function closest(input: string, candidates: string[]): string | undefined {
  const x = input.toLowerCase();
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = c.startsWith(x) && x.length >= 3 ? 0.5 : editDistance(x, c.toLowerCase());
    if (!best || d < best.d) best = { c, d };
  }
  return best && best.d <= Math.max(2, Math.floor(x.length / 3)) ? best.c : undefined;
}
