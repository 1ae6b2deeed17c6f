/**
 * Regular expressions supplied in manifests (detector patterns, task-boundary patterns, agent
 * detection data): how they are compiled and whether they are safe to run on every message.
 *
 * A pattern is a JavaScript regular expression, matched case-insensitively. A leading `(?i)`
 * (the Rust/PCRE spelling used in seed 001) is accepted and dropped, since Node 20 has no inline
 * flags. Before a pattern is accepted it must compile and pass a conservative static check for
 * catastrophic backtracking — the two shapes that make a backtracking engine exponential:
 *  - a repeated group that itself contains a variable repetition (`(a+)+`, `(.*)*`, `(\w+\s?)*`);
 *  - a repeated alternation whose alternatives can start with the same character (`(a|ab)*`,
 *    `(\w|\d)+`, `(.|\s)*`) or can match the empty string (`(a|)*`).
 * The check may reject a pattern that is in fact harmless (`(\w+\.)+`); the message says how to
 * rewrite it. It cannot prove absence of polynomial blow-up (`.*a.*b.*c`), so the detector also
 * bounds the text it matches.
 */

export const MAX_PATTERN_LENGTH = 512;
/** Quotes a pattern for a message as written (JSON.stringify would double its backslashes). */
const q = (s: string) => `"${s}"`;
/** Repetitions up to this count are treated as fixed-size (they cannot blow up exponentially). */
const SMALL_REPEAT = 10;

/** Drops a leading `(?i)` (accepted for seed/Rust compatibility; matching is always case-insensitive). */
export function patternSource(src: string): string {
  return src.startsWith('(?i)') ? src.slice(4) : src;
}

/** Compiles a manifest pattern (case-insensitive). Throws SyntaxError on an invalid one. */
export function compilePattern(src: string): RegExp {
  return new RegExp(patternSource(src), 'i');
}

/** Why a pattern is not acceptable, or undefined when it is. */
export function checkPattern(src: unknown): string | undefined {
  if (typeof src !== 'string') return 'must be a string';
  if (!src.length) return 'must not be empty';
  if (src.length > MAX_PATTERN_LENGTH)
    return `is ${src.length} characters long; patterns may be at most ${MAX_PATTERN_LENGTH}`;
  const body = patternSource(src);
  try {
    new RegExp(body, 'i');
  } catch (e) {
    const why = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    return `invalid regular expression ${q(src)}: ${why}`;
  }
  let ast: Node;
  try {
    ast = new Parser(body).parse();
  } catch {
    return undefined; // valid for V8 but beyond our parser (rare syntax): nothing to say
  }
  const problem = findBacktracking(ast);
  return problem ? `regular expression ${q(src)} may backtrack catastrophically: ${problem}` : undefined;
}

// ---- character sets -----------------------------------------------------------------------

/** A set of characters: bit per code point 0..255, plus one bit for "anything above 255". */
class CharSet {
  readonly bits = new Uint32Array(8);
  high = false;

  static of(...codes: number[]): CharSet {
    const s = new CharSet();
    for (const c of codes) s.add(c);
    return s;
  }
  static range(lo: number, hi: number): CharSet {
    const s = new CharSet();
    s.addRange(lo, hi);
    return s;
  }
  static all(): CharSet {
    const s = CharSet.range(0, 255);
    s.high = true;
    return s;
  }
  add(c: number): void {
    if (c > 255) this.high = true;
    else this.bits[c >> 5] |= 1 << (c & 31);
  }
  addRange(lo: number, hi: number): void {
    if (hi > 255) this.high = true;
    for (let c = lo; c <= Math.min(hi, 255); c++) this.add(c);
  }
  union(o: CharSet): this {
    for (let i = 0; i < 8; i++) this.bits[i] |= o.bits[i];
    this.high ||= o.high;
    return this;
  }
  negate(): CharSet {
    const s = new CharSet();
    for (let i = 0; i < 8; i++) s.bits[i] = ~this.bits[i];
    s.high = true; // a negated class matches some character above 255 in any realistic case
    return s;
  }
  intersects(o: CharSet): boolean {
    for (let i = 0; i < 8; i++) if (this.bits[i] & o.bits[i]) return true;
    return this.high && o.high;
  }
  /** ASCII case folding (matching is case-insensitive). */
  folded(): CharSet {
    const s = new CharSet().union(this);
    for (let c = 65; c <= 90; c++) {
      const lower = c + 32;
      const hasUpper = (this.bits[c >> 5] >>> (c & 31)) & 1;
      const hasLower = (this.bits[lower >> 5] >>> (lower & 31)) & 1;
      if (hasUpper || hasLower) {
        s.add(c);
        s.add(lower);
      }
    }
    return s;
  }
}

const DIGIT = () => CharSet.range(48, 57);
const WORD = () => {
  const s = CharSet.range(48, 57).union(CharSet.range(65, 90)).union(CharSet.range(97, 122));
  s.add(95);
  return s;
};
const SPACE = () => {
  const s = CharSet.of(9, 10, 11, 12, 13, 32, 160);
  s.high = true; // Unicode spaces
  return s;
};
const DOT = () => {
  const s = CharSet.all();
  for (const c of [10, 13]) s.bits[c >> 5] &= ~(1 << (c & 31));
  return s;
};

// ---- a parser for the analysis (the pattern already compiled, so it can be lenient) ---------

type Node =
  | { t: 'set'; set: CharSet }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; alts: Node[] }
  | { t: 'group'; body: Node }
  | { t: 'look'; body: Node } // lookaround: zero-width
  | { t: 'assert' } // ^ $ \b \B
  | { t: 'backref' }
  | { t: 'quant'; body: Node; min: number; max: number; text: string };

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(): Node {
    const n = this.alternation();
    if (this.i < this.s.length) throw new Error(`unexpected ${this.s[this.i]}`);
    return n;
  }

  private alternation(): Node {
    const alts = [this.sequence()];
    while (this.s[this.i] === '|') {
      this.i++;
      alts.push(this.sequence());
    }
    return alts.length === 1 ? alts[0] : { t: 'alt', alts };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.s.length && this.s[this.i] !== '|' && this.s[this.i] !== ')') {
      const start = this.i;
      let atom = this.atom();
      atom = this.quantified(atom, start);
      items.push(atom);
    }
    return { t: 'seq', items };
  }

  private quantified(atom: Node, start: number): Node {
    const c = this.s[this.i];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      min = c === '+' ? 1 : 0;
      max = c === '?' ? 1 : Infinity;
      this.i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return atom; // a literal "{"
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length;
    } else return atom;
    if (this.s[this.i] === '?') this.i++; // lazy: same backtracking behaviour on failure
    const node: Node = { t: 'quant', body: atom, min, max, text: this.s.slice(start, this.i) };
    return this.quantified(node, start); // "a{2}{3}" is a syntax error in V8 anyway
  }

  private atom(): Node {
    const c = this.s[this.i++];
    switch (c) {
      case '(':
        return this.group();
      case '[':
        return { t: 'set', set: this.charClass().folded() };
      case '.':
        return { t: 'set', set: DOT() };
      case '^':
      case '$':
        return { t: 'assert' };
      case '\\':
        return this.escape(false);
      default:
        return { t: 'set', set: CharSet.of(c.codePointAt(0)!).folded() };
    }
  }

  private group(): Node {
    let look = false;
    if (this.s.startsWith('?:', this.i)) this.i += 2;
    else if (this.s.startsWith('?=', this.i) || this.s.startsWith('?!', this.i)) {
      this.i += 2;
      look = true;
    } else if (this.s.startsWith('?<=', this.i) || this.s.startsWith('?<!', this.i)) {
      this.i += 3;
      look = true;
    } else if (this.s.startsWith('?<', this.i)) {
      const end = this.s.indexOf('>', this.i);
      if (end < 0) throw new Error('bad group name');
      this.i = end + 1;
    }
    const body = this.alternation();
    if (this.s[this.i] !== ')') throw new Error('missing )');
    this.i++;
    return look ? { t: 'look', body } : { t: 'group', body };
  }

  /** After "[": the class up to its "]". */
  private charClass(): CharSet {
    let negated = false;
    if (this.s[this.i] === '^') {
      negated = true;
      this.i++;
    }
    const set = new CharSet();
    while (this.i < this.s.length && this.s[this.i] !== ']') {
      const lo = this.classAtom();
      if (
        this.s[this.i] === '-' &&
        this.s[this.i + 1] !== ']' &&
        this.i + 1 < this.s.length &&
        typeof lo === 'number'
      ) {
        this.i++;
        const hi = this.classAtom();
        if (typeof hi === 'number') set.addRange(lo, hi);
        else {
          // "[a-\d]": a, "-" and the class, as V8 reads it outside unicode mode
          set.add(lo);
          set.add(45);
          set.union(hi);
        }
      } else if (typeof lo === 'number') set.add(lo);
      else set.union(lo);
    }
    if (this.s[this.i] !== ']') throw new Error('missing ]');
    this.i++;
    return negated ? set.negate() : set;
  }

  private classAtom(): number | CharSet {
    const c = this.s[this.i++];
    if (c !== '\\') return c.codePointAt(0)!;
    const e = this.escape(true);
    return e.t === 'set' ? e.set : CharSet.of(8);
  }

  /** After a backslash. */
  private escape(inClass: boolean): Node {
    const c = this.s[this.i++];
    const set = (s: CharSet): Node => ({ t: 'set', set: s });
    switch (c) {
      case 'd':
        return set(DIGIT());
      case 'D':
        return set(DIGIT().negate());
      case 'w':
        return set(WORD());
      case 'W':
        return set(WORD().negate());
      case 's':
        return set(SPACE());
      case 'S':
        return set(SPACE().negate());
      case 'b':
      case 'B':
        return inClass ? set(CharSet.of(8)) : { t: 'assert' };
      case 'n':
        return set(CharSet.of(10));
      case 'r':
        return set(CharSet.of(13));
      case 't':
        return set(CharSet.of(9));
      case 'f':
        return set(CharSet.of(12));
      case 'v':
        return set(CharSet.of(11));
      case 'x': {
        const m = /^[0-9a-fA-F]{2}/.exec(this.s.slice(this.i));
        if (!m) return set(CharSet.of(120));
        this.i += 2;
        return set(CharSet.of(parseInt(m[0], 16)).folded());
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(this.s.slice(this.i));
        if (!m) return set(CharSet.of(117));
        this.i += 4;
        return set(CharSet.of(parseInt(m[0], 16)).folded());
      }
      case 'c':
        this.i++;
        return set(CharSet.range(0, 31));
      case 'k': {
        if (this.s[this.i] === '<') this.i = this.s.indexOf('>', this.i) + 1;
        return { t: 'backref' };
      }
      default:
        if (c >= '1' && c <= '9' && !inClass) {
          while (/[0-9]/.test(this.s[this.i] ?? '')) this.i++;
          return { t: 'backref' };
        }
        if (c === '0') return set(CharSet.of(0));
        return set(CharSet.of(c.codePointAt(0)!).folded());
    }
  }
}

// ---- the analysis ---------------------------------------------------------------------------

/** Can the node match the empty string? */
function nullable(n: Node): boolean {
  switch (n.t) {
    case 'set':
      return false;
    case 'seq':
      return n.items.every(nullable);
    case 'alt':
      return n.alts.some(nullable);
    case 'group':
      return nullable(n.body);
    case 'quant':
      return n.min === 0 || nullable(n.body);
    default:
      return true; // assertions, lookarounds; a backreference may be empty
  }
}

/** Characters a match of the node can start with. */
function firstSet(n: Node): CharSet {
  switch (n.t) {
    case 'set':
      return n.set;
    case 'seq': {
      const s = new CharSet();
      for (const item of n.items) {
        s.union(firstSet(item));
        if (!nullable(item)) break;
      }
      return s;
    }
    case 'alt':
      return n.alts.reduce((s, a) => s.union(firstSet(a)), new CharSet());
    case 'group':
    case 'quant':
      return firstSet(n.body);
    case 'backref':
      return CharSet.all(); // could be anything
    default:
      return new CharSet();
  }
}

const repeats = (q: { min: number; max: number }) => q.max > SMALL_REPEAT;
const varies = (q: { min: number; max: number }) => q.max > 1 && q.max !== q.min;

/** The first variable repetition inside a node, if any. */
function innerRepetition(n: Node): (Node & { t: 'quant' }) | undefined {
  switch (n.t) {
    case 'quant':
      return varies(n) ? n : innerRepetition(n.body);
    case 'seq':
      for (const i of n.items) {
        const r = innerRepetition(i);
        if (r) return r;
      }
      return undefined;
    case 'alt':
      for (const a of n.alts) {
        const r = innerRepetition(a);
        if (r) return r;
      }
      return undefined;
    case 'group':
    case 'look':
      return innerRepetition(n.body);
    default:
      return undefined;
  }
}

/** Alternations directly inside a repeated body (through groups and sequences). */
function alternationsIn(n: Node, out: (Node & { t: 'alt' })[] = []): (Node & { t: 'alt' })[] {
  switch (n.t) {
    case 'alt':
      out.push(n);
      for (const a of n.alts) alternationsIn(a, out);
      break;
    case 'seq':
      for (const i of n.items) alternationsIn(i, out);
      break;
    case 'group':
      alternationsIn(n.body, out);
      break;
    default:
      break; // nested quantifiers are reported on their own
  }
  return out;
}

function findBacktracking(n: Node): string | undefined {
  switch (n.t) {
    case 'quant': {
      if (repeats(n)) {
        const inner = innerRepetition(n.body);
        if (inner)
          return (
            `the repeated group ${q(n.text)} contains the repetition ${q(inner.text)} (nested quantifiers); ` +
            'repeat a single, fixed-length piece instead, e.g. "(ab)+" or "\\w+"'
          );
        for (const alt of alternationsIn(n.body)) {
          if (alt.alts.some(nullable))
            return `in the repeated group ${q(n.text)} an alternative can match the empty string`;
          for (let i = 0; i < alt.alts.length; i++)
            for (let j = i + 1; j < alt.alts.length; j++)
              if (firstSet(alt.alts[i]).intersects(firstSet(alt.alts[j])))
                return (
                  `in the repeated group ${q(n.text)} alternatives ${i + 1} and ${j + 1} can start with the same ` +
                  'character (overlapping alternation); make the alternatives start differently, ' +
                  'e.g. "ca(t|r)" instead of "(cat|car)"'
                );
        }
      }
      return findBacktracking(n.body);
    }
    case 'seq':
      for (const i of n.items) {
        const p = findBacktracking(i);
        if (p) return p;
      }
      return undefined;
    case 'alt':
      for (const a of n.alts) {
        const p = findBacktracking(a);
        if (p) return p;
      }
      return undefined;
    case 'group':
    case 'look':
      return findBacktracking(n.body);
    default:
      return undefined;
  }
}
