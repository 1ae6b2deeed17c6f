/**
 * What a tool result says about the work: a build, test or lint run that passed or failed, a
 * commit, a rejected or failed tool call. Exit status first, text second:
 *  - the exit status is `exitCode` when the agent reports one, else the `Exit code N` line
 *    Claude Code puts at the top of a failed Bash result, else `isError`;
 *  - the command is split as the shell runs it (shell.ts) and each simple command says which
 *    tool ran (vitest/jest, pytest, go test, cargo, tsc, eslint, npm, make ...), or that it only
 *    shows text (echo, cat, grep: what it prints is data), or commits; any of them can carry a
 *    signal. The exit status speaks for the commands whose failure it would report (the last
 *    pipeline of the trailing && chain); a failing status is the failure of the last of them
 *    unless a summary line names another;
 *  - the output's summary lines say which tool passed or failed too, and decide the outcome of a
 *    command the status does not speak for (`npm test 2>&1 | tail` reports tail's status) or
 *    when there is no status.
 * Only the head and tail of long outputs are read: the summaries are at the end, compiler
 * errors near the top.
 */
import type { ToolResultEvent } from '../../store/eventlog.js';
import { basename, simpleCommands } from './shell.js';

export type ToolKind = 'test' | 'build' | 'lint';

export interface ToolOutcome {
  /** test | build | lint, when the tool is one we know; undefined for other tools. */
  kind?: ToolKind;
  /** Which tool (vitest, pytest, cargo, ...), when known. */
  tool?: string;
  /** Did it succeed? undefined when nothing tells. */
  ok?: boolean;
  /** The exit status used, when there was one. */
  exitCode?: number;
  /** A git commit was made. */
  commit: boolean;
  /** The user refused the tool call. */
  rejected: boolean;
  /** Each test, build or lint run in the command whose outcome is known, in order (`tsc && vitest`: two). */
  runs: ToolRun[];
}

export interface ToolRun {
  kind: ToolKind;
  tool: string;
  ok: boolean;
}

const HEAD = 2048;
const TAIL = 6144;

/** What one simple command of a command line is, for reading the result. */
type Role =
  | { kind: ToolKind; tool: string }
  /** Shows files or text: what it prints is data, not a tool's verdict. */
  | 'viewer'
  /** A shell builtin, file or git operation: says nothing about tests or builds. */
  | 'quiet'
  | 'commit'
  /** A program we do not know (`./ci.sh`, `node run.js`): its output may carry a tool's summary. */
  | 'unknown';

const VIEWERS = new Set(
  (
    'cat head tail less more grep egrep fgrep rg ag sed awk echo printf ls find fd wc sort uniq cut tr jq yq diff ' +
    'tree file stat nl column tee xxd od hexdump basename dirname realpath readlink curl wget gh'
  ).split(' '),
);
const QUIET = new Set(
  (
    'cd pushd popd exit return true false : export set unset source . sleep mkdir rm rmdir cp mv touch chmod chown ' +
    'ln test [ [[ which type pwd date read wait kill trap shift local declare alias umask ulimit git'
  ).split(' '),
);
/** Commands that do not fail in practice: a failing status is not theirs. */
const NEVER_FAILS = new Set('echo printf tail head tee wc sort uniq cut tr column nl true :'.split(' '));
const GIT_VIEWERS = new Set(['log', 'show', 'diff', 'status', 'blame', 'grep', 'shortlog', 'reflog']);
/** git options that take a value before the subcommand (`git -C dir commit`). */
const GIT_VALUED = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path']);
const TEST_RUNNERS = new Set(['vitest', 'jest', 'mocha']);
const LINTERS = new Set(['eslint', 'ruff', 'flake8', 'golangci-lint', 'pylint', 'biome']);
const SCRIPT = /^(test|t|tst|lint|build|typecheck|compile)(:\S+)?$/;

function role(argv: string[]): Role {
  const prog = basename(argv[0]);
  const args = argv.slice(1);
  const sub = args.find((a) => !a.startsWith('-') && !a.startsWith('+'));
  if (TEST_RUNNERS.has(prog)) return { kind: 'test', tool: prog };
  if (prog === 'pytest' || prog === 'py.test' || prog === 'tox' || prog === 'nox')
    return { kind: 'test', tool: 'pytest' };
  if (/^python[0-9.]*$/.test(prog) && args[0] === '-m' && /^(pytest|unittest)$/.test(args[1] ?? ''))
    return { kind: 'test', tool: 'pytest' };
  if (prog === 'go') {
    if (sub === 'test') return { kind: 'test', tool: 'go' };
    if (sub === 'build' || sub === 'vet' || sub === 'install') return { kind: 'build', tool: 'go' };
  }
  if (prog === 'cargo') {
    if (sub === 'test' || sub === 'nextest' || sub === 't') return { kind: 'test', tool: 'cargo' };
    if (sub === 'clippy') return { kind: 'lint', tool: 'clippy' };
    if (sub && /^(build|check|run|b|c|r)$/.test(sub)) return { kind: 'build', tool: 'cargo' };
  }
  if (prog === 'npm' || prog === 'pnpm' || prog === 'yarn' || prog === 'bun') {
    const script = sub === 'run' || sub === 'run-script' ? args[args.indexOf(sub) + 1] : sub;
    if (sub && /^(install|ci|i|add)$/.test(sub) && prog !== 'bun') return { kind: 'build', tool: 'npm' };
    const m = script ? SCRIPT.exec(script) : null;
    if (m) {
      const kind: ToolKind = /^(test|t|tst)$/.test(m[1]) ? 'test' : m[1] === 'lint' ? 'lint' : 'build';
      return { kind, tool: 'npm' };
    }
  }
  if (prog === 'make' || prog === 'gmake') {
    const targets = makeTargets(args);
    if (targets.some((t) => /^(test|tests|check)$/.test(t))) return { kind: 'test', tool: 'make' };
    if (targets.includes('lint')) return { kind: 'lint', tool: 'make' };
    return { kind: 'build', tool: 'make' };
  }
  if (prog === 'tsc' || prog === 'vue-tsc') return { kind: 'build', tool: 'tsc' };
  if (LINTERS.has(prog)) return { kind: 'lint', tool: prog };
  if (prog === 'git') {
    let i = 0;
    while (i < args.length && args[i].startsWith('-')) i += GIT_VALUED.has(args[i]) ? 2 : 1;
    if (args[i] === 'commit') return 'commit';
    return GIT_VIEWERS.has(args[i]) ? 'viewer' : 'quiet';
  }
  if (VIEWERS.has(prog)) return 'viewer';
  if (QUIET.has(prog)) return 'quiet';
  return 'unknown';
}

/** make's targets: its words that are not options, option values or variable assignments. */
function makeTargets(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (/^-[CfIjlWo]$/.test(a) || a === '--directory' || a === '--file') i++;
    else if (!a.startsWith('-') && !a.includes('=')) out.push(a);
  }
  return out;
}
interface TextRule {
  re: RegExp;
  kind: ToolKind;
  tool: string;
  ok: boolean;
}

/** Summary lines, failures first (a run that prints both failed). */
const TEXT: TextRule[] = [
  // vitest:  "Test Files  1 failed | 2 passed (3)"  "Tests  1 failed | 5 passed (6)"
  { re: /^\s*Test Files\s+\d+ failed/m, kind: 'test', tool: 'vitest', ok: false },
  // jest:  "Tests:       1 failed, 2 passed, 3 total"  "Test Suites: 1 failed, 1 total"
  { re: /^(Tests|Test Suites):\s+(\d+ \w+, )*\d+ failed/m, kind: 'test', tool: 'jest', ok: false },
  // pytest:  "===== 2 failed, 3 passed in 0.12s =====", with -q "2 failed in 0.05s", "no tests ran in 0.01s"
  {
    re: /^(=+ )?((\d+ \w+, )*\d+ (failed|errors?)\b[^\n]*|no tests ran[^\n]*) in [\d.]+s\b/m,
    kind: 'test',
    tool: 'pytest',
    ok: false,
  },
  { re: /^=+ ERRORS =+$/m, kind: 'test', tool: 'pytest', ok: false },
  // go test:  "--- FAIL: TestAdd (0.00s)"  "FAIL\tpkg\t0.003s"  "FAIL\tpkg [build failed]"
  { re: /^FAIL\s+\S+\s+\[(build|setup) failed\]/m, kind: 'build', tool: 'go', ok: false },
  { re: /^(--- FAIL: |FAIL\s+\S+\s+[\d.]+s$)/m, kind: 'test', tool: 'go', ok: false },
  // cargo:  "test result: FAILED. 1 passed; 1 failed"  "error: could not compile `x`"
  { re: /^test result: FAILED\./m, kind: 'test', tool: 'cargo', ok: false },
  { re: /^error: could not compile `/m, kind: 'build', tool: 'cargo', ok: false },
  // tsc:  "src/a.ts(3,7): error TS2322: ..."  "Found 3 errors in 2 files."
  { re: /\berror TS\d+: |^Found \d+ errors?\b/m, kind: 'build', tool: 'tsc', ok: false },
  // eslint:  "✖ 3 problems (2 errors, 1 warning)"
  { re: /^✖ \d+ problems? \([1-9]\d* errors?/m, kind: 'lint', tool: 'eslint', ok: false },
  // successes
  { re: /^\s*Test Files\s+\d+ passed/m, kind: 'test', tool: 'vitest', ok: true },
  { re: /^Tests:\s+(\d+ (skipped|todo), )*\d+ passed, \d+ total/m, kind: 'test', tool: 'jest', ok: true },
  { re: /^(=+ )?\d+ passed\b[^\n]* in [\d.]+s\b/m, kind: 'test', tool: 'pytest', ok: true },
  { re: /^test result: ok\./m, kind: 'test', tool: 'cargo', ok: true },
  { re: /^ok\s+\S+\s+(\(cached\)|[\d.]+s)/m, kind: 'test', tool: 'go', ok: true },
  { re: /^\s*Finished .*target\(s\) in /m, kind: 'build', tool: 'cargo', ok: true },
  { re: /^✖ \d+ problems? \(0 errors/m, kind: 'lint', tool: 'eslint', ok: true },
];

/** Failure lines that say "something failed" without saying what kind of tool. */
const GENERIC_FAILURE = /^(npm ERR! |npm error |make(\[\d+\])?: \*\*\* )/m;

const REJECTED = /^The user doesn't want to (proceed with this tool use|take this action)/;
const EXIT_LINE = /^(?:Error: )?Exit code (\d+)/;
const COMMIT_LINE = /^\[[^\]\s]+( \(root-commit\))? [0-9a-f]{7,40}\] /m;

function window(output: string): string {
  return output.length <= HEAD + TAIL ? output : `${output.slice(0, HEAD)}\n${output.slice(-TAIL)}`;
}

function textVerdict(text: string): TextRule | undefined {
  for (const r of TEXT) if (r.re.test(text)) return r;
  return undefined;
}

interface Segment {
  argv: string[];
  exposed: boolean;
  role: Role;
}

/** A text verdict, or a generic failure line naming npm or make. */
type Verdict = { kind?: ToolKind; tool: string; ok: boolean };

/** How well a verdict fits a command: its own tool, its kind, a script runner, a program we do not know. */
function fit(s: Segment, v: Verdict): number {
  const r = s.role;
  if (typeof r === 'object') {
    if (r.tool === v.tool) return 4;
    if (v.kind && r.kind === v.kind) return 3;
    return r.tool === 'npm' || r.tool === 'make' ? 2 : 0; // package scripts and make targets run other tools
  }
  return r === 'unknown' && v.kind ? 1 : 0;
}

/** The command the verdict is most likely about (the last of equals). */
function best(segs: Segment[], v: Verdict): Segment | undefined {
  let found: Segment | undefined;
  let score = 0;
  for (const s of segs) {
    const f = fit(s, v);
    if (f > 0 && f >= score) {
      found = s;
      score = f;
    }
  }
  return found;
}

export function classifyToolResult(
  e: Pick<ToolResultEvent, 'tool' | 'command' | 'isError' | 'exitCode' | 'output'>,
): ToolOutcome {
  const output = e.output ?? '';
  const rejected = REJECTED.test(output);
  let exitCode = typeof e.exitCode === 'number' ? e.exitCode : undefined;
  if (exitCode === undefined && e.isError) {
    const m = EXIT_LINE.exec(output);
    if (m) exitCode = Number(m[1]);
  }
  const statusOk = exitCode !== undefined ? exitCode === 0 : e.isError ? false : undefined;
  const command = e.command ?? '';
  const shell =
    !e.tool || /^(Bash|bash|shell|sh|exec_command|run_shell_command|local_shell)$/.test(e.tool) || command !== '';
  if (rejected) return { ok: false, exitCode, commit: false, rejected, runs: [] };
  if (!shell || !command) return { ok: statusOk ?? true, exitCode, commit: false, rejected, runs: [] };

  const segs: Segment[] = simpleCommands(command).map((c) => ({ ...c, role: role(c.argv) }));
  // Text is a verdict only when something in the command could have printed one (not echo, cat, grep …).
  const attributable = segs.some((s) => typeof s.role === 'object' || s.role === 'unknown');
  const text = attributable ? window(output) : '';
  const rule = textVerdict(text);
  const generic = GENERIC_FAILURE.exec(text);
  const verdict: Verdict | undefined = rule
    ? { kind: rule.kind, tool: rule.tool, ok: rule.ok }
    : generic
      ? { tool: generic[1].startsWith('make') ? 'make' : 'npm', ok: false }
      : undefined;
  // No exit status (Claude Code reports none on success): the text's verdict, else success.
  const status = statusOk ?? verdict?.ok ?? true;

  const exposed = segs.filter((s) => s.exposed);
  const hidden = segs.filter((s) => !s.exposed);
  // The status rules the commands it is about; the verdict says which failed, or speaks for one it hides.
  const about =
    verdict && (verdict.ok === status ? (best(exposed, verdict) ?? best(hidden, verdict)) : best(hidden, verdict));
  const outcome = new Map<Segment, boolean>();
  if (status) for (const s of exposed) outcome.set(s, true);
  else {
    // The last command that could have failed: `npm test | tail`, `make && echo done` fail in make.
    const failing = about?.exposed
      ? about
      : ([...exposed].reverse().find((s) => !NEVER_FAILS.has(basename(s.argv[0]))) ?? exposed[exposed.length - 1]);
    for (const s of exposed) {
      if (s === failing) break;
      outcome.set(s, true); // ran before it in the && chain, so passed
    }
    if (failing) outcome.set(failing, false);
  }
  if (about && !about.exposed) outcome.set(about, verdict!.ok);

  const runs: ToolRun[] = [];
  let commit = false;
  for (const s of segs) {
    const ok = outcome.get(s);
    if (ok === undefined) continue;
    if (s.role === 'commit' && ok) commit = true;
    // The summary names the tool more precisely than the command (`npm test` ran vitest; `go test` failed to build).
    const named = s === about && rule ? rule : typeof s.role === 'object' ? s.role : undefined;
    if (named) runs.push({ kind: named.kind, tool: named.tool, ok });
  }
  if (!commit && segs.some((s) => s.role === 'commit' || s.role === 'unknown'))
    commit = COMMIT_LINE.test(window(output));
  const failed = runs.filter((r) => !r.ok);
  const ok = status && failed.length === 0;
  const main = failed[failed.length - 1] ?? runs[runs.length - 1];
  return { kind: main?.kind, tool: main?.tool, ok, exitCode, commit, rejected, runs };
}
