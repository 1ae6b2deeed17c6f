/** A pane capture → its state (idle / busy / waiting / dialog), read through a compiled profile. */
import stripAnsi from 'strip-ansi';
import {
  type ScreenClass,
  type Region,
  type CompiledPattern,
  type DetectionProfile,
  type PromptRule,
  MAX_PROMPT_BYTES,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// Classification

/** The limit notice kept from a screen (a few lines: the reset time is in them). */
const MAX_QUOTA_TEXT_BYTES = 600;

interface Screen {
  /** Non-empty lines of the tail, in order. */
  lines: string[];
  inputIdx: number; // index into lines, -1 without an input line
  above: string[];
  input: string[];
  footer: string[];
}

/**
 * Trailing ASCII blanks only: U+00A0 after ❯ is Claude Code's live-input marker. (A loop: the
 * regex /[ \t]+$/ is quadratic in long runs of inner spaces.)
 */
function trimAsciiEnd(l: string): string {
  let n = l.length;
  while (n > 0) {
    const c = l.charCodeAt(n - 1);
    if (c !== 32 && c !== 9 && c !== 13) break;
    n--;
  }
  return n === l.length ? l : l.slice(0, n);
}

function readScreen(text: string, p: DetectionProfile): Screen {
  const raw = (text.includes('\x1b') ? stripAnsi(text) : text).split('\n');
  // The header: a marker in the first lines of the capture; it and the lines it spans are cut.
  let start = 0;
  if (p.header) {
    const n = Math.min(raw.length, p.header.within);
    for (let i = 0; i < n; i++)
      if (p.header.match.test(raw[i])) {
        start = i + p.header.lines;
        break;
      }
  }
  // Walk up from the bottom collecting the last tailLines non-empty lines; blank lines are kept
  // as '' (they end an input region), ignored lines vanish.
  const kept: string[] = [];
  let count = 0;
  for (let i = raw.length - 1; i >= start && count < p.tailLines; i--) {
    const l = trimAsciiEnd(raw[i]);
    if (l === '' || l.trim() === '') {
      if (kept.length) kept.push('');
      continue;
    }
    if (p.ignore.some((re) => re.test(l))) continue;
    kept.push(l);
    count++;
  }
  kept.reverse();
  while (kept.length && kept[0] === '') kept.shift();

  let inputIdxRaw = -1;
  if (p.input) {
    let seen = 0;
    for (let i = kept.length - 1; i >= 0 && seen < p.input.within; i--) {
      if (kept[i] === '') continue;
      seen++;
      if (p.input.line.test(kept[i])) {
        inputIdxRaw = i;
        break;
      }
    }
  }
  const nonEmpty = (a: string[]) => a.filter((l) => l !== '');
  const lines = nonEmpty(kept);
  if (inputIdxRaw < 0) return { lines, inputIdx: -1, above: lines, input: [], footer: [] };
  const border = p.input!.border;
  const aboveRaw = nonEmpty(kept.slice(0, inputIdxRaw));
  while (aboveRaw.length && border?.test(aboveRaw[aboveRaw.length - 1])) aboveRaw.pop();
  const first = kept[inputIdxRaw].replace(p.input!.line, '');
  const input = [first];
  let j = inputIdxRaw + 1;
  for (; j < kept.length && kept[j] !== '' && !border?.test(kept[j]); j++) input.push(kept[j]);
  if (j < kept.length && border?.test(kept[j])) j++;
  return {
    lines,
    inputIdx: nonEmpty(kept.slice(0, inputIdxRaw)).length,
    above: aboveRaw,
    input,
    footer: nonEmpty(kept.slice(j)),
  };
}

function regionLines(s: Screen, r: Region): string[] {
  switch (r) {
    case 'above':
      return s.above;
    case 'input':
      return s.input;
    case 'footer':
      return s.footer;
    case 'screen':
      return s.lines;
    case 'last':
      return s.lines.slice(-1);
  }
}

function matcher(s: Screen) {
  const joined = new Map<string, string>();
  const textFor = (p: CompiledPattern): string => {
    const key = `${p.region}:${p.within ?? 0}:${p.since?.source ?? ''}`;
    let text = joined.get(key);
    if (text === undefined) {
      let ls = regionLines(s, p.region);
      if (p.since) {
        const since = p.since;
        let i = ls.length - 1;
        while (i >= 0 && !since.test(ls[i])) i--;
        ls = ls.slice(i + 1);
      }
      text = (p.within ? ls.slice(-p.within) : ls).join('\n');
      joined.set(key, text);
    }
    return text;
  };
  const test = (p: CompiledPattern): boolean => {
    if (p.box === 'present' && s.inputIdx < 0) return false;
    if (p.box === 'absent' && s.inputIdx >= 0) return false;
    return p.re.test(textFor(p));
  };
  return Object.assign(test, { textFor });
}

const BOX_ONLY = /^[\s─━═╌╍┄┅┈┉│┃║╭╮╯╰┌┐└┘├┤┬┴┼▔▁-]*$/;
const BORDER_LEFT = /^\s*[│┃║]\s?/;
const BORDER_RIGHT = /\s?[│┃║]\s*$/;

/** The question and options: from the prompt rule's start to the bottom, borders and rules dropped, ≤ 1 KB. */
function promptText(s: Screen, rule: PromptRule): string | undefined {
  const ls = s.lines;
  let from = Math.max(0, ls.length - rule.lines);
  for (let i = ls.length - 1; i >= 0; i--) {
    if (rule.from?.test(ls[i])) {
      from = i;
      break;
    }
    if (rule.after?.test(ls[i])) {
      from = i + 1;
      break;
    }
  }
  const out = unbox(ls.slice(from));
  return out.length ? capBytes(out.join('\n'), MAX_PROMPT_BYTES) : undefined;
}

/** Lines without box borders, padding and box-only lines (the text a person reads in a box). */
function unbox(ls: string[]): string[] {
  const out: string[] = [];
  for (const l of ls) {
    let t = l;
    for (let prev = ''; prev !== t; ) {
      prev = t;
      t = t.replace(BORDER_LEFT, '').replace(BORDER_RIGHT, ''); // nested boxes: │ │ text │ │
    }
    t = t.trim();
    if (t && !BOX_ONLY.test(t)) out.push(t);
  }
  return out;
}

/** At most `max` UTF-8 bytes; a longer text keeps its head (the question) and tail (the options) around an ellipsis. */
export function capBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  const cut = (s: string, bytes: number, fromEnd: boolean): string => {
    const chars = Array.from(s);
    const picked: string[] = [];
    let used = 0;
    for (let i = 0; i < chars.length; i++) {
      const c = fromEnd ? chars[chars.length - 1 - i] : chars[i];
      const b = Buffer.byteLength(c);
      if (used + b > bytes) break;
      used += b;
      picked.push(c);
    }
    return (fromEnd ? picked.reverse() : picked).join('');
  };
  const sep = '\n…\n';
  const room = max - Buffer.byteLength(sep);
  const head = Math.floor(room * 0.4);
  return cut(text, head, false).trimEnd() + sep + cut(text, room - head, true).trimStart();
}

/** What the classifier is told besides the capture. */
export interface ClassifyContext {
  /**
   * Texts orchctl delivered into the pane (the prompt, continue messages, interventions, `send`
   * text: agents/typed.ts). A limit is the agent's own report: lines echoing these are not read
   * for one, nor is anything above the latest echo (older than the input that followed it).
   */
  typed?: readonly string[];
}

const norm = (t: string) => t.replace(/\s+/g, ' ').trim();
/** A line echoing a typed text starts with at most this many characters of prompt marker. */
const MAX_ECHO_PREFIX = 24;

/**
 * Whether a screen line shows (part of) a typed text: a wrapped piece of it, or its start after
 * a prompt marker ("> ", "❯ ", "sim> "). Texts are normalised (whitespace runs → one space).
 */
export function echoesTyped(line: string, typed: readonly string[]): boolean {
  const l = norm(line);
  if (l.length < 4) return false;
  for (const t of typed) {
    if (l.length >= Math.min(8, t.length) && t.includes(l)) return true;
    const head = t.slice(0, Math.min(12, t.length));
    const i = l.indexOf(head);
    if (i >= 0 && i <= MAX_ECHO_PREFIX && t.startsWith(l.slice(i))) return true;
  }
  return false;
}

/**
 * The screen the limit patterns read: the agent's own output only — never the input box, never a
 * line echoing what orchctl typed, never what stood above the latest such echo.
 */
function agentOutput(s: Screen, typed: readonly string[] | undefined): Screen {
  const texts = (typed ?? []).map(norm).filter((t) => t.length >= 4);
  const nAbove = s.above.length;
  const footerFrom = s.lines.length - s.footer.length;
  const echo = s.lines.map((l) => texts.length > 0 && echoesTyped(l, texts));
  const lastEcho = echo.lastIndexOf(true);
  const keep = (i: number) => i > lastEcho && !echo[i];
  const above = s.above.filter((_, i) => keep(i));
  const footer = s.footer.filter((_, j) => keep(footerFrom + j));
  const lines = s.lines.filter((_, i) => keep(i) && (i < nAbove || i >= footerFrom));
  return { lines, inputIdx: s.inputIdx, above, input: [], footer };
}

/** Classifies one pane capture (plain or with escape sequences) with a compiled profile. */
export function classifyScreen(text: string, profile: DetectionProfile, ctx: ClassifyContext = {}): ScreenClass {
  const s = readScreen(text, profile);
  if (!s.lines.length) return { state: 'unknown' };
  const test = matcher(s);
  const out: ScreenClass = { state: 'unknown' };
  let prompt: PromptRule | undefined;
  const dialog = profile.dialogPatterns.find((d) => d.match.some(test));
  if (dialog) {
    out.state = 'dialog';
    out.dialog = dialog.name;
    prompt = dialog.prompt ?? profile.prompt;
  } else if (profile.waiting.some(test)) {
    out.state = 'waiting';
    prompt = profile.prompt;
  } else if (profile.busy.some(test)) out.state = 'busy';
  else if (profile.idle.some(test)) out.state = 'idle';
  else out.state = profile.otherwise;
  if (prompt) {
    const t = promptText(s, prompt);
    if (t) out.prompt = t;
  } else if (out.state === 'unknown') {
    // No pattern knows this screen: its text is what a person needs to decide (the part after the
    // last border, as for a question, else the last lines).
    const t = promptText(s, profile.prompt) ?? promptText(s, { lines: profile.prompt.lines });
    if (t) out.prompt = t;
  }
  const own = profile.quota.length ? matcher(agentOutput(s, ctx.typed)) : test;
  const quota = profile.quota.find(own);
  if (quota) {
    out.quotaExhausted = true;
    // The lines the limit was read from: they may say when it resets.
    // Unboxed: a dialog's padding would otherwise fill the cap and cut its reset line out.
    out.quotaText = capBytes(unbox(own.textFor(quota).split('\n')).join('\n'), MAX_QUOTA_TEXT_BYTES);
  }
  if (profile.interrupted.some(test)) out.interrupted = true;
  if (profile.input && s.inputIdx >= 0) {
    const typed = s.input
      .map((l) => l.trim())
      .join('\n')
      .trim();
    out.inputReady = profile.input.empty.some((re) => re.test(typed));
  } else if (profile.input) out.inputReady = false;
  return out;
}

/**
 * The reason a run that failed gave up, from its last output and the profile's `failures`: the
 * first that matches, with the lines it was found in (at most three, escape-free, ≤ 400 bytes).
 */
export function classifyFailure(
  output: string,
  profile: DetectionProfile,
): { reason: string; message: string } | undefined {
  if (!profile.failures.length || !output) return undefined;
  const text = output.includes('\x1b') ? stripAnsi(output) : output;
  for (const f of profile.failures) {
    const m = f.re.exec(text);
    if (!m) continue;
    const start = text.lastIndexOf('\n', m.index) + 1;
    const lines = text
      .slice(start)
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(0, 3)
      .join(' / ');
    const said = capBytes(lines, 400);
    return { reason: f.reason, message: f.hint ? `${f.hint} (the agent said: ${said})` : said };
  }
  return undefined;
}
