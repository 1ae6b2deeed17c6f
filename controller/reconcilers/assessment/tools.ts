/**
 * What a tool result says about the work: a build, test or lint run that passed or failed, a
 * commit, a rejected or failed tool call. Exit status first, text second:
 *  - the exit status is `exitCode` when the agent reports one, else the `Exit code N` line
 *    Claude Code puts at the top of a failed Bash result, else `isError`;
 *  - the command says which tool ran (vitest/jest, pytest, go test, cargo, tsc, eslint, npm,
 *    make ...); the output's summary lines say it too, and decide the outcome where the exit
 *    status cannot be trusted (`npm test 2>&1 | tail` reports tail's status) or is missing.
 * Only the head and tail of long outputs are read: the summaries are at the end, compiler
 * errors near the top.
 */
import type { ToolResultEvent } from '../../store/eventlog.js';

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
}

const HEAD = 2048;
const TAIL = 6144;

interface CommandTool {
  re: RegExp;
  kind: ToolKind;
  tool: string;
}

/** Commands, most specific first. Matched against the whole (possibly compound) command line. */
const COMMANDS: CommandTool[] = [
  { re: /\bvitest\b/, kind: 'test', tool: 'vitest' },
  { re: /\bjest\b/, kind: 'test', tool: 'jest' },
  { re: /\bmocha\b/, kind: 'test', tool: 'mocha' },
  { re: /\bpytest\b|\bpython[0-9.]*\s+-m\s+(pytest|unittest)\b|\btox\b/, kind: 'test', tool: 'pytest' },
  { re: /\bgo\s+test\b/, kind: 'test', tool: 'go' },
  { re: /\bcargo\s+(test|nextest)\b/, kind: 'test', tool: 'cargo' },
  { re: /\b(npm|pnpm|yarn|bun)\s+(run\s+)?(test|t)(:\S+)?\b/, kind: 'test', tool: 'npm' },
  { re: /\bmake\b[^|;&]*\s(test|tests|check)\b/, kind: 'test', tool: 'make' },
  { re: /\beslint\b|\bruff\b|\bflake8\b|\bgolangci-lint\b|\bcargo\s+clippy\b/, kind: 'lint', tool: 'eslint' },
  { re: /\b(npm|pnpm|yarn|bun)\s+(run\s+)?lint\b/, kind: 'lint', tool: 'npm' },
  { re: /\bmake\b[^|;&]*\slint\b/, kind: 'lint', tool: 'make' },
  { re: /\btsc\b/, kind: 'build', tool: 'tsc' },
  { re: /\bcargo\s+(build|check|run)\b/, kind: 'build', tool: 'cargo' },
  { re: /\bgo\s+(build|vet|install)\b/, kind: 'build', tool: 'go' },
  { re: /\b(npm|pnpm|yarn|bun)\s+(run\s+)?(build|typecheck|compile)\b/, kind: 'build', tool: 'npm' },
  { re: /\b(npm|pnpm|yarn)\s+(install|ci|i|add)\b/, kind: 'build', tool: 'npm' },
  { re: /(^|[;&|(]\s*|\s)make\b/, kind: 'build', tool: 'make' },
];

/** Commands that only show files or text: their output is data, not a tool's verdict. */
const VIEWERS =
  /^\s*(cat|head|tail|less|more|grep|rg|sed|awk|echo|printf|ls|find|git\s+(log|show|diff|status|blame))\b/;

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
const GIT_COMMIT = /\bgit\s+(-[cC]\s+\S+\s+)*commit\b/;
const COMMIT_LINE = /^\[[^\]\s]+( \(root-commit\))? [0-9a-f]{7,40}\] /m;
/** A pipe (not ||) without pipefail: the status is the last stage's. */
const MASKING_PIPE = /(^|[^|])\|(?!\|)/;

function window(output: string): string {
  return output.length <= HEAD + TAIL ? output : `${output.slice(0, HEAD)}\n${output.slice(-TAIL)}`;
}

function textVerdict(text: string): TextRule | undefined {
  for (const r of TEXT) if (r.re.test(text)) return r;
  return undefined;
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
  if (rejected) return { ok: false, exitCode, commit: false, rejected };
  if (!shell || !command || VIEWERS.test(command)) return { ok: statusOk ?? true, exitCode, commit: false, rejected };

  const fromCommand = COMMANDS.find((c) => c.re.test(command));
  const text = window(output);
  const verdict = textVerdict(text);
  const genericFailure = GENERIC_FAILURE.test(text);
  const masked = MASKING_PIPE.test(command) && !/pipefail/.test(command);

  let ok: boolean | undefined;
  if (statusOk !== undefined && !(masked && (verdict || genericFailure))) ok = statusOk;
  else if (verdict) ok = verdict.ok;
  else if (genericFailure) ok = false;
  else ok = statusOk ?? true; // no status and nothing said: Claude Code reports no code on success

  // Which tool: the one whose verdict matches the outcome (in "tsc && vitest" the failing one), else the command's.
  let kind: ToolKind | undefined;
  let tool: string | undefined;
  if (verdict && verdict.ok === ok) ({ kind, tool } = verdict);
  else if (fromCommand) ({ kind, tool } = fromCommand);
  else if (verdict) ({ kind, tool } = verdict);

  const commit = ok && (GIT_COMMIT.test(command) || COMMIT_LINE.test(text));
  return { kind, tool, ok, exitCode, commit, rejected };
}
