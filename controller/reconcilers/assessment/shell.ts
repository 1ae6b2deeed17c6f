/**
 * A shell command line as the shell runs it: the simple commands of a compound command (`&&`,
 * `||`, `;`, pipes, subshells, groups, `if`/`for` bodies, `sh -c "…"` and `eval` scripts,
 * command substitutions), each with its words after variable assignments and wrappers (`env`,
 * `timeout 60`, `npx`, `uv run`, …) are taken off, and whether its failure would be the whole
 * command's exit status. shell-quote tokenises; what it does not know — newlines as command
 * separators, heredoc bodies, line continuations — is handled before it sees the text.
 */
import { parse, type ParseEntry } from 'shell-quote';

export interface SimpleCommand {
  /** Program and arguments, without leading assignments, wrappers and redirections. */
  argv: string[];
  /**
   * Its failure is the whole command's exit status: it is the last stage of its pipeline (any
   * stage with pipefail) and only `&&` (or `;` under `set -e`) follows it to the end.
   */
  exposed: boolean;
}

/** Nested `sh -c` scripts deeper than this are left as they are (a bound on recursion). */
const MAX_DEPTH = 4;
/** Longest command line split; longer ones are cut (only their start is classified). */
const MAX_SCRIPT = 64 * 1024;

type Op = '&&' | '||' | ';' | '|' | '&' | 'end';

interface Raw {
  words: string[];
  op?: Op;
  /** Nested commands (command and process substitutions): run, but their status is not the command's. */
  inner: SimpleCommand[];
  errexit: boolean;
  pipefail: boolean;
}

const REDIRECTS = new Set(['>', '>>', '<', '>&', '<&', '&>', '&>>', '>|', '<>', '<<<', '<<', '<<-']);
const KEYWORDS_BEFORE = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '(', 'time']);
const CLOSERS = new Set(['}', 'fi', 'done', 'esac', ')']);
const HEADERS = new Set(['for', 'case', 'select', 'function', 'in']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh']);

/** Commands split lately, by text: agents run the same few commands again and again. */
const memo = new Map<string, readonly SimpleCommand[]>();
const MEMO = 512;
/** Nothing a shell would read specially: the words are the command. */
const PLAIN = /^[\w@%+=:,./ -]*$/;

/** The simple commands of `script`, in the order they appear (shared: do not change them). */
export function simpleCommands(script: string): readonly SimpleCommand[] {
  const hit = memo.get(script);
  if (hit) return hit;
  const text = script.length > MAX_SCRIPT ? script.slice(0, MAX_SCRIPT) : script;
  let out: SimpleCommand[];
  try {
    out = split(text, 0, { errexit: false, pipefail: false });
  } catch {
    // Whatever the text, classifying a tool result must not throw: one command of its words.
    out = [{ argv: text.split(/\s+/).filter(Boolean).slice(0, 64), exposed: true }];
  }
  if (memo.size >= MEMO) memo.delete(memo.keys().next().value as string);
  memo.set(script, out);
  return out;
}

function split(script: string, depth: number, opts: { errexit: boolean; pipefail: boolean }): SimpleCommand[] {
  let tokens: ParseEntry[];
  try {
    // Words only (`npm test`, `pytest -q tests/`): what shell-quote would return, without it.
    tokens = PLAIN.test(script)
      ? script.split(' ').filter(Boolean)
      : (parse(unfoldLines(script), (k) => `$${k}`) as ParseEntry[]);
  } catch {
    tokens = script.split(/\s+/).filter(Boolean);
  }
  const raws = segments(tokens, depth, opts);
  const out: SimpleCommand[] = [];
  raws.forEach((r, i) => {
    out.push(...r.inner);
    const exposed = isExposed(raws, i);
    const nested = shellScript(r.words);
    if (nested && depth < MAX_DEPTH) {
      const inner = split(nested.script, depth + 1, nested.opts);
      for (const c of inner) out.push({ argv: c.argv, exposed: c.exposed && exposed });
      return;
    }
    const argv = unwrap(r.words);
    if (argv.length) out.push({ argv, exposed });
  });
  return out;
}

/** Does a failure of raws[i] reach the end of the list as its exit status? */
function isExposed(raws: Raw[], i: number): boolean {
  const own = raws[i];
  const op = own.op ?? 'end';
  const first = op === 'end' || op === '&&' || (op === '|' && own.pipefail) || (op === ';' && own.errexit);
  if (!first) return false;
  for (let k = i + 1; k < raws.length; k++) {
    const o = raws[k].op ?? 'end';
    if (!(o === 'end' || o === '&&' || o === '|' || (o === ';' && raws[k].errexit))) return false;
  }
  return true;
}

/** Tokens into simple commands with the operator after each; substitutions parsed as nested commands. */
function segments(tokens: ParseEntry[], depth: number, opts: { errexit: boolean; pipefail: boolean }): Raw[] {
  const out: Raw[] = [];
  let cur: Raw = { words: [], inner: [], ...opts };
  let skipTarget = false;
  const flush = (op: Op | undefined) => {
    const words = stripKeywords(cur.words);
    if (words.length === 0) {
      // `}`, `fi`, `done`, `)`: the group's status is its last command's.
      const last = out[out.length - 1];
      // A trailing newline or `;` ends the list: the command before it is the last.
      const ends = (cur.words.length > 0 || op === 'end') && last?.op === ';';
      if (last && op && (last.op === undefined || ends)) last.op = op;
      if (cur.inner.length && last) last.inner.push(...cur.inner);
    } else {
      cur.words = words;
      cur.op = op;
      out.push(cur);
      setOptions(words, opts);
    }
    cur = { words: [], inner: [], ...opts };
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (typeof t === 'string') {
      if (skipTarget) skipTarget = false;
      else cur.words.push(t);
      continue;
    }
    if ('comment' in t) continue;
    if (t.op === 'glob') {
      if (skipTarget) skipTarget = false;
      else cur.words.push(t.pattern);
      continue;
    }
    const op = t.op;
    const last = cur.words[cur.words.length - 1];
    if ((op === '(' && last?.endsWith('$')) || op === '<(' || op === '>(') {
      // Nested deeper than MAX_DEPTH: skipped, not split (a bound on recursion and time).
      // $( … ), <( … ), >( … ): a nested command line up to the matching parenthesis.
      let level = 1;
      let j = i + 1;
      for (; j < tokens.length && level > 0; j++) {
        const u = tokens[j];
        if (typeof u === 'object' && 'op' in u) {
          if (u.op === '(' || u.op === '<(' || u.op === '>(') level++;
          else if (u.op === ')') level--;
        }
      }
      const inner = depth < MAX_DEPTH ? tokens.slice(i + 1, level === 0 ? j - 1 : j) : [];
      for (const r of segments(inner, depth + 1, { errexit: false, pipefail: false }))
        cur.inner.push(...r.inner, ...(unwrap(r.words).length ? [{ argv: unwrap(r.words), exposed: false }] : []));
      if (op === '(') cur.words[cur.words.length - 1] = `${last.slice(0, -1)}$(…)`;
      else cur.words.push('/dev/fd/…');
      i = j - 1;
      continue;
    }
    if (REDIRECTS.has(op)) {
      if (last !== undefined && /^\d+$/.test(last)) cur.words.pop(); // the 2 of 2>&1
      skipTarget = true;
      continue;
    }
    if (op === '(') {
      if (cur.words.length) flush(undefined);
      continue;
    }
    if (op === ')') {
      flush(undefined);
      continue;
    }
    flush(
      op === '&&' || op === '||' || op === '&' ? op : op === '|' || op === '|&' ? '|' : ';', // ; ;; ;& ;;&
    );
  }
  flush('end');
  return out;
}

function stripKeywords(words: string[]): string[] {
  let i = 0;
  while (i < words.length && KEYWORDS_BEFORE.has(words[i])) i++;
  const rest = words.slice(i);
  if (rest.length && (HEADERS.has(rest[0]) || CLOSERS.has(rest[0]))) return [];
  return rest;
}

/** `set -e`, `set -o pipefail`, `set -euo pipefail`: options for the commands after it. */
function setOptions(words: string[], opts: { errexit: boolean; pipefail: boolean }): void {
  if (words[0] !== 'set') return;
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    const on = w.startsWith('-');
    if (/^[-+][a-z]*e/.test(w)) opts.errexit = on;
    if (/^[-+][a-z]*o$/.test(w) && words[i + 1]) {
      const name = words[++i];
      if (name === 'pipefail') opts.pipefail = on;
      if (name === 'errexit') opts.errexit = on;
    }
  }
}

/** `sh -c "…"`, `bash -lc "…"`, `eval "…"`: the script the shell runs, and the options it starts with. */
function shellScript(words: string[]): { script: string; opts: { errexit: boolean; pipefail: boolean } } | undefined {
  const w = stripAssignments(words);
  const prog = basename(w[0] ?? '');
  if (prog === 'eval') return { script: w.slice(1).join(' '), opts: { errexit: false, pipefail: false } };
  if (!SHELLS.has(prog)) return undefined;
  const opts = { errexit: false, pipefail: false };
  let c = false;
  for (let i = 1; i < w.length; i++) {
    const a = w[i];
    if (a === '-o' || a === '+o') {
      if (w[i + 1] === 'pipefail') opts.pipefail = a === '-o';
      if (w[i + 1] === 'errexit') opts.errexit = a === '-o';
      i++;
    } else if (/^-[a-zA-Z]+$/.test(a)) {
      if (a.includes('c')) c = true;
      if (a.includes('e')) opts.errexit = true;
    } else if (a.startsWith('--')) continue;
    else return c ? { script: a, opts } : undefined;
  }
  return undefined;
}

function stripAssignments(words: string[]): string[] {
  let i = 0;
  while (i < words.length && ASSIGNMENT.test(words[i])) i++;
  return words.slice(i);
}

export function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Options of wrappers that take a value (`timeout -k 5 60 …`, `nice -n 5 …`). */
const WRAPPERS: Record<string, { valued: Set<string>; positional: number }> = {
  env: { valued: new Set(['-u', '--unset', '-C', '--chdir', '-S']), positional: 0 },
  timeout: { valued: new Set(['-k', '--kill-after', '-s', '--signal']), positional: 1 },
  nice: { valued: new Set(['-n', '--adjustment']), positional: 0 },
  nohup: { valued: new Set(), positional: 0 },
  time: { valued: new Set(['-f', '-o']), positional: 0 },
  command: { valued: new Set(), positional: 0 },
  exec: { valued: new Set(['-a']), positional: 0 },
  builtin: { valued: new Set(), positional: 0 },
  sudo: { valued: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U']), positional: 0 },
  stdbuf: { valued: new Set(['-i', '-o', '-e']), positional: 0 },
  unbuffer: { valued: new Set(), positional: 0 },
  'xvfb-run': { valued: new Set(['-n', '-s', '-f', '-e', '-p']), positional: 0 },
  npx: { valued: new Set(['-p', '--package', '-c', '--call']), positional: 0 },
  bunx: { valued: new Set(['-p', '--package']), positional: 0 },
  dotenv: { valued: new Set(['-e', '-c', '-v']), positional: 0 },
};
/** Package managers' and environment managers' `run`/`exec` (`pnpm exec vitest`, `uv run pytest`). */
const RUNNERS: Record<string, Set<string>> = {
  pnpm: new Set(['exec', 'dlx']),
  yarn: new Set(['exec', 'dlx']),
  npm: new Set(['exec']),
  uv: new Set(['run']),
  poetry: new Set(['run']),
  pipenv: new Set(['run']),
  pdm: new Set(['run']),
  hatch: new Set(['run']),
  bundle: new Set(['exec']),
};

/** Takes off assignments and wrappers: what remains is the program that does the work, and its arguments. */
function unwrap(words: string[]): string[] {
  let w = stripAssignments(words);
  for (let guard = 0; guard < 8 && w.length; guard++) {
    const prog = basename(w[0]);
    const wrapper = WRAPPERS[prog];
    const runner = RUNNERS[prog];
    if (wrapper) {
      let i = 1;
      let positional = wrapper.positional;
      while (i < w.length) {
        const a = w[i];
        if (a === '--') {
          i++;
          break;
        }
        if (wrapper.valued.has(a)) i += 2;
        else if (a.startsWith('-') && a.length > 1) i++;
        else if (prog === 'env' && ASSIGNMENT.test(a)) i++;
        else if (positional > 0) {
          positional--;
          i++;
        } else break;
      }
      w = w.slice(i);
    } else if (runner && w[1] && runner.has(w[1])) {
      let i = 2;
      while (i < w.length && w[i].startsWith('-')) i++;
      w = w.slice(i);
    } else break;
  }
  return w;
}

/**
 * The command line as one line per command for shell-quote: heredoc bodies left out (they are
 * the input of a command, not commands), `\`-newline joined, other unquoted newlines turned into
 * `;` (shell-quote reads a newline as a blank, and a comment as running to the end of the text).
 */
export function unfoldLines(script: string): string {
  let out = '';
  let quote: '"' | "'" | undefined;
  const heredocs: { word: string; tabs: boolean }[] = [];
  let i = 0;
  while (i < script.length) {
    const ch = script[i];
    if (quote === "'") {
      out += ch;
      if (ch === "'") quote = undefined;
      i++;
      continue;
    }
    if (ch === '\\' && i + 1 < script.length) {
      if (script[i + 1] === '\n') out += ' ';
      else out += ch + script[i + 1];
      i += 2;
      continue;
    }
    if (quote === '"') {
      out += ch;
      if (ch === '"') quote = undefined;
      i++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      out += ch;
      i++;
      continue;
    }
    if (ch === '#' && (i === 0 || /\s|[;&|()]/.test(script[i - 1]))) {
      // A comment: to the end of the line, not of the text.
      const nl = script.indexOf('\n', i);
      i = nl < 0 ? script.length : nl;
      continue;
    }
    if (ch === '<' && script.startsWith('<<', i) && script[i + 2] !== '<') {
      const m = /^<<(-?)[ \t]*(?:'([^'\n]*)'|"([^"\n]*)"|\\?([^\s;&|<>()]+))/.exec(script.slice(i));
      if (m) {
        heredocs.push({ word: m[2] ?? m[3] ?? m[4], tabs: m[1] === '-' });
        out += `<< ${m[2] ?? m[3] ?? m[4]}`;
        i += m[0].length;
        continue;
      }
    }
    if (ch === '\n') {
      i++;
      // The bodies of the heredocs opened on this line.
      for (const h of heredocs) {
        while (i < script.length) {
          const nl = script.indexOf('\n', i);
          const line = script.slice(i, nl < 0 ? script.length : nl);
          i = nl < 0 ? script.length : nl + 1;
          if ((h.tabs ? line.replace(/^\t+/, '') : line) === h.word) break;
        }
      }
      heredocs.length = 0;
      out += ' ; ';
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
