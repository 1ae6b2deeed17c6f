/**
 * classifyFailure (autopilot/classify.ts): failed runs as Claude Code, npm, node, vitest, jest,
 * pytest, go, tsc, git and curl print them → Transient, Dependency, Auth, Logic or Unknown, with
 * the rule and the line it was read from; the order of the classes, the 40-line window, the
 * status facts (reason, phase, detector, judge), result.json, and that every rule is a safe regex.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DetectorState, Signal, SignalRecord } from '../../../../controller/api/assessment.js';
import type { ErrorClass } from '../../../../controller/api/autopilot.js';
import { LOG_START } from '../../../../controller/api/log-position.js';
import { checkPattern } from '../../../../controller/api/patterns.js';
import type { AgentSessionStatus } from '../../../../controller/api/session.js';
import {
  classifyFailure,
  EVIDENCE_MAX,
  TAIL_LINES,
  TEXT_RULES,
} from '../../../../controller/reconcilers/autopilot/classify.js';

/** status.agent of a run whose agent reported a rate or usage limit. */
const quota = (message: string): AgentSessionStatus['agent'] => ({
  run: 1,
  position: LOG_START,
  counts: {},
  hooks: true,
  turns: 3,
  quota: { since: '2026-06-01T10:00:00Z', message },
});

const failed = (lastOutput: string, over: Partial<AgentSessionStatus> = {}): AgentSessionStatus => ({
  phase: 'Failed',
  reason: 'Error',
  message: 'agent exited with code 1',
  exitCode: 1,
  run: 1,
  lastOutput,
  ...over,
});

/** [what printed it, the pane tail, class, rule, the evidence line] */
type Case = [string, string, ErrorClass, string, string];

const CASES: Case[] = [
  // ---- Auth: never retried
  [
    'Claude Code, bad key',
    [
      '> Fix the CSV export',
      '  ⎿  API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}} · ' +
        'Please run /login',
    ].join('\n'),
    'Auth',
    'http-401-403',
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
  ],
  ['Claude Code, key', '> hi\nInvalid API key · Please run /login', 'Auth', 'api-key', 'Invalid API key'],
  [
    'Claude Code, OAuth',
    'API Error: OAuth token has expired. Please obtain a new token or refresh your existing token.',
    'Auth',
    'api-key',
    'OAuth token has expired',
  ],
  ['Claude Code, logged out', 'Not logged in · Please run /login', 'Auth', 'login', 'Not logged in'],
  [
    'git over ssh',
    [
      '$ git push origin feat/csv',
      'git@github.com: Permission denied (publickey).',
      'fatal: Could not read from remote repository.',
      '',
      'Please make sure you have the correct access rights',
      'and the repository exists.',
    ].join('\n'),
    'Auth',
    'ssh-key',
    'Permission denied (publickey)',
  ],
  [
    'git over https',
    "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
    'Auth',
    'git-credentials',
    'could not read Username',
  ],
  [
    'git, wrong password',
    "remote: Invalid username or password.\nfatal: Authentication failed for 'https://github.com/acme/app.git/'",
    'Auth',
    'unauthorized',
    'Authentication failed',
  ],
  [
    'npm, private registry',
    'npm error code E401\nnpm error Unable to authenticate, need: Basic realm="GitHub Package Registry"',
    'Auth',
    'http-401-403',
    'npm error code E401',
  ],
  ['curl', 'curl: (22) The requested URL returned error: 403', 'Auth', 'http-401-403', 'returned error: 403'],
  ['gh', 'HTTP 401: Bad credentials (https://api.github.com/graphql)', 'Auth', 'http-401-403', 'HTTP 401'],
  [
    'OpenAI, out of quota (a 429 that needs a person)',
    'Error: 429 You exceeded your current quota, please check your plan and billing details.',
    'Auth',
    'billing',
    'plan and billing details',
  ],
  [
    'Anthropic, no credit',
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too ' +
      'low to access the Anthropic API."}}',
    'Auth',
    'billing',
    'credit balance is too',
  ],
  ['an unset key', 'Error: ANTHROPIC_API_KEY is not set', 'Auth', 'api-key', 'ANTHROPIC_API_KEY is not set'],
  [
    'curl, certificates',
    'curl: (60) SSL certificate problem: unable to get local issuer certificate',
    'Auth',
    'certificate',
    'SSL certificate problem',
  ],
  // ---- Dependency: retried with "install it first"
  [
    'node, CommonJS',
    [
      '$ node test/run.js',
      'node:internal/modules/cjs/loader:1228',
      '  throw err;',
      '  ^',
      '',
      "Error: Cannot find module 'left-pad'",
      'Require stack:',
      '- /home/dev/app/test/run.js',
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
      '    at Module._load (node:internal/modules/cjs/loader:1051:27) {',
      "  code: 'MODULE_NOT_FOUND',",
      "  requireStack: [ '/home/dev/app/test/run.js' ]",
      '}',
      '',
      'Node.js v20.11.1',
    ].join('\n'),
    'Dependency',
    'module-not-found',
    "Error: Cannot find module 'left-pad'",
  ],
  [
    'node, ESM',
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/dev/app/src/schema.js",
    'Dependency',
    'module-not-found',
    "Cannot find package 'zod'",
  ],
  [
    'tsc, a missing package (not the code: Dependency wins over Logic)',
    "src/pad.ts(1,21): error TS2307: Cannot find module 'left-pad' or its corresponding type declarations.",
    'Dependency',
    'module-not-found',
    'error TS2307',
  ],
  ['dash', '> vitest run\n\nsh: 1: vitest: not found', 'Dependency', 'command-not-found', 'sh: 1: vitest: not found'],
  ['bash', 'bash: pnpm: command not found', 'Dependency', 'command-not-found', 'pnpm: command not found'],
  [
    'npm, peer conflict',
    [
      'npm error code ERESOLVE',
      'npm error ERESOLVE unable to resolve dependency tree',
      'npm error',
      'npm error While resolving: app@1.0.0',
      'npm error Found: react@18.3.1',
    ].join('\n'),
    'Dependency',
    'npm-resolve',
    'ERESOLVE unable to resolve dependency tree',
  ],
  [
    'npm, no such script',
    'npm error Missing script: "build"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run',
    'Dependency',
    'npm-resolve',
    'Missing script: "build"',
  ],
  [
    'npm, no such package',
    [
      'npm ERR! code E404',
      'npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found',
      "npm ERR! 404  'left-padd@*' is not in this registry.",
    ].join('\n'),
    'Dependency',
    'npm-resolve',
    'npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd',
  ],
  [
    'python',
    'Traceback (most recent call last):\n  File "app.py", line 1, in <module>\n    import requests\n' +
      "ModuleNotFoundError: No module named 'requests'",
    'Dependency',
    'python-module',
    "No module named 'requests'",
  ],
  [
    'pip',
    'ERROR: Could not find a version that satisfies the requirement torch==9.9 (from versions: none)\n' +
      'ERROR: No matching distribution found for torch==9.9',
    'Dependency',
    'package-manager',
    'No matching distribution found',
  ],
  // ---- Transient: retried as it was
  [
    'Claude Code, timeouts',
    [
      '  ⎿  API Error (Request timed out.) · Retrying in 1 seconds… (attempt 1/10)',
      '  ⎿  API Error (Request timed out.) · Retrying in 2 seconds… (attempt 2/10)',
    ].join('\n'),
    'Transient',
    'timeout',
    'attempt 2/10',
  ],
  [
    'Claude Code, overloaded',
    'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    'Transient',
    'server-error',
    'API Error: 529',
  ],
  [
    'Claude Code, rate limited',
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has ' +
      'exceeded your per-minute rate limit"}}',
    'Transient',
    'rate-limit',
    'API Error: 429',
  ],
  ['Claude Code, usage limit', 'Claude AI usage limit reached|1750000000', 'Transient', 'rate-limit', 'usage limit'],
  ['Claude Code, offline', 'API Error: Connection error.', 'Transient', 'network-error', 'Connection error'],
  [
    'curl, DNS',
    'curl: (6) Could not resolve host: api.example.com',
    'Transient',
    'network-error',
    'Could not resolve host',
  ],
  [
    'curl, slow',
    'curl: (28) Operation timed out after 30002 milliseconds with 0 bytes received',
    'Transient',
    'timeout',
    'Operation timed out',
  ],
  [
    'git fetch',
    "fatal: unable to access 'https://github.com/acme/app.git/': Could not resolve host: github.com",
    'Transient',
    'network-error',
    'Could not resolve host: github.com',
  ],
  [
    'npm offline (a network error, not a missing package)',
    'npm error code EAI_AGAIN\nnpm error request to https://registry.npmjs.org/zod failed, reason: getaddrinfo ' +
      'EAI_AGAIN registry.npmjs.org',
    'Transient',
    'network-error',
    'getaddrinfo EAI_AGAIN',
  ],
  [
    'undici (a TypeError that is the network)',
    'TypeError: fetch failed\n    at node:internal/deps/undici/undici:13510:13\n  [cause]: Error: read ECONNRESET',
    'Transient',
    'network-error',
    'read ECONNRESET',
  ],
  ['a proxy', 'HTTP/1.1 503 Service Unavailable', 'Transient', 'server-error', 'HTTP/1.1 503'],
  // ---- Logic: retried with "fix the failing test"
  [
    'vitest',
    [
      ' FAIL  test/parse.test.ts > parse > handles quoted newlines',
      "AssertionError: expected 'a' to be 'b' // Object.is equality",
      '',
      '⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯',
      '',
      ' Test Files  1 failed | 4 passed (5)',
      '      Tests  1 failed | 31 passed (32)',
      '   Start at  09:12:44',
      '   Duration  1.21s (transform 310ms, setup 0ms, collect 1.02s, tests 88ms)',
    ].join('\n'),
    'Logic',
    'tests-failed',
    'Tests 1 failed | 31 passed (32)',
  ],
  [
    'vitest, a test timeout (the code hangs, not the network)',
    ' FAIL  test/api.test.ts > api > answers\nError: Test timed out in 5000ms.\n\n Test Files  1 failed (1)',
    'Logic',
    'tests-failed',
    'Test Files 1 failed (1)',
  ],
  [
    'jest',
    'Tests:       2 failed, 10 passed, 12 total\nSnapshots:   0 total\nTime:        2.31 s',
    'Logic',
    'tests-failed',
    'Tests: 2 failed, 10 passed, 12 total',
  ],
  [
    'pytest (its 404 is an assertion, not auth)',
    'FAILED tests/test_api.py::test_get - assert 404 == 200\n========= 1 failed, 3 passed in 0.42s =========',
    'Logic',
    'tests-failed',
    '1 failed, 3 passed in 0.42s',
  ],
  [
    'go test',
    '--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\nFAIL\texample.com/app\t0.012s',
    'Logic',
    'fail-marker',
    'FAIL\texample.com/app\t0.012s'.replace(/\s+/g, ' '),
  ],
  ['mocha', '  14 passing (32ms)\n  2 failing', 'Logic', 'tests-failed', '2 failing'],
  [
    'tsc',
    "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
    'Logic',
    'compile-error',
    'error TS2322',
  ],
  [
    'node, a bug',
    "file:///home/dev/app/src/index.js:3\nconst x = ;\n          ^\n\nSyntaxError: Unexpected token ';'",
    'Logic',
    'runtime-error',
    'SyntaxError',
  ],
  ['eslint', '✖ 3 problems (3 errors, 0 warnings)', 'Logic', 'build-failed', '3 problems'],
  [
    'npm run build',
    'npm error Lifecycle script `build` failed with error:\nnpm error code 2',
    'Logic',
    'build-failed',
    'Lifecycle script `build` failed',
  ],
  [
    'node, a wrong relative import (the code, not a package)',
    "Error: Cannot find module './config'\nRequire stack:\n- /home/dev/app/src/index.js",
    'Logic',
    'missing-file',
    "Cannot find module './config'",
  ],
  // ---- Unknown: a person looks
  ['a crash', 'Segmentation fault (core dumped)', 'Unknown', 'none', 'Segmentation fault (core dumped)'],
  [
    'a stack trace line number is not a status (401 below)',
    'Error: boom\n    at parse (src/util.js:401:12)',
    'Unknown',
    'none',
    'at parse (src/util.js:401:12)',
  ],
];

describe('classifyFailure: real outputs', () => {
  it.each(CASES)('%s', (_what, output, cls, rule, evidence) => {
    const c = classifyFailure(failed(output));
    expect({ class: c.class, rule: c.rule }).toEqual({ class: cls, rule });
    expect(c.evidence).toContain(evidence);
    expect(c.evidence).not.toMatch(/\n|^\s|\s$/);
  });
});

describe('classifyFailure: order and window', () => {
  it('Auth wins over everything in the window; Dependency over Transient; Transient over Logic', () => {
    const tests = ' Test Files  1 failed (1)';
    expect(classifyFailure(failed(`Error: 401 Unauthorized\nread ECONNRESET\n${tests}`)).class).toBe('Auth');
    expect(classifyFailure(failed(`Error: Cannot find module 'zod'\nread ECONNRESET\n${tests}`)).class).toBe(
      'Dependency',
    );
    expect(classifyFailure(failed(`Error: connect ECONNREFUSED 127.0.0.1:5432\n${tests}`)).class).toBe('Transient');
  });

  it('within a class, the newest line is the evidence', () => {
    const c = classifyFailure(failed('Error: read ECONNRESET\nsome work\nError: socket hang up'));
    expect(c).toMatchObject({ class: 'Transient', evidence: 'Error: socket hang up', source: 'output' });
  });

  it(`looks only at the last ${TAIL_LINES} lines: an old hiccup does not speak for how the run ended`, () => {
    const work = Array.from({ length: TAIL_LINES }, (_, i) => `● step ${i}: edited src/part${i}.ts`);
    const out = ['Error: connect ETIMEDOUT 203.0.113.7:443', ...work, ' Test Files  1 failed (1)'].join('\n');
    expect(classifyFailure(failed(out))).toMatchObject({ class: 'Logic', rule: 'tests-failed' });
    // Within the window the same line would win (Transient before Logic).
    const near = ['Error: connect ETIMEDOUT 203.0.113.7:443', ...work.slice(-10), ' Test Files  1 failed (1)'];
    expect(classifyFailure(failed(near.join('\n'))).class).toBe('Transient');
  });

  it('reads a raw pane tail: escape sequences and carriage-return overwrites are gone from the evidence', () => {
    const raw =
      '\x1b[2K\x1b[36m⠋\x1b[0m working\r\x1b[2K\x1b[31mError: 401 Unauthorized - invalid x-api-key\x1b[0m\r\n';
    expect(classifyFailure(failed(raw))).toMatchObject({
      class: 'Auth',
      evidence: 'Error: 401 Unauthorized - invalid x-api-key',
    });
  });

  it(`clips the evidence to ${EVIDENCE_MAX} characters`, () => {
    const c = classifyFailure(failed(`Error: connect ETIMEDOUT ${'x'.repeat(600)}`));
    expect(c.class).toBe('Transient');
    expect(c.evidence).toHaveLength(EVIDENCE_MAX);
    expect(c.evidence.endsWith('…')).toBe(true);
  });
});

describe('classifyFailure: the status facts', () => {
  it('the shell could not find the agent: Dependency, from the controller message or exit code 127 alone', () => {
    const st = failed('', {
      reason: 'CommandNotFound',
      exitCode: 127,
      message: 'claude: command not found — install it or run orchctl doctor (exit code 127)',
    });
    expect(classifyFailure(st)).toMatchObject({ class: 'Dependency', rule: 'command-not-found', source: 'message' });
    expect(classifyFailure({ phase: 'Failed', exitCode: 127 })).toMatchObject({
      class: 'Dependency',
      rule: 'exit-127',
      source: 'status',
    });
  });

  it('tmux vanished under the run: Transient', () => {
    const st = failed('● Editing src/a.ts', {
      phase: 'Killed',
      reason: 'TmuxSessionLost',
      exitCode: undefined,
      message: 'the tmux session disappeared without an exit status (killed outside orchctl, or the tmux server died)',
    });
    expect(classifyFailure(st)).toMatchObject({ class: 'Transient', rule: 'tmux-lost', source: 'status' });
  });

  it('the agent reported a usage limit: Transient', () => {
    const st = failed('● Thinking…', {
      agent: quota('Claude usage limit reached'),
    });
    expect(classifyFailure(st)).toMatchObject({ class: 'Transient', rule: 'rate-limit', source: 'quota' });
    const plain = failed('', { agent: quota('limit hit, resets 3pm') });
    expect(classifyFailure(plain)).toMatchObject({ class: 'Transient', rule: 'quota' });
  });

  it('a run stopped at its time box is TimeBox (not Logic) whatever its tail shows; only Auth wins over it', () => {
    const st = failed('● Editing src/a.ts', {
      phase: 'TimedOut',
      reason: 'TimedOut',
      exitCode: undefined,
      message: 'stopped after the time box of 45m, 2 commits',
    });
    expect(classifyFailure(st)).toMatchObject({
      class: 'TimeBox',
      rule: 'time-box',
      evidence: 'stopped after the time box of 45m, 2 commits',
    });
    expect(classifyFailure({ ...st, lastOutput: 'Tests  1 failed | 40 passed' }).class).toBe('TimeBox');
    expect(classifyFailure({ ...st, lastOutput: 'API Error: Connection error.' }).class).toBe('TimeBox');
    expect(classifyFailure({ ...st, lastOutput: 'Error: 401 Unauthorized - invalid x-api-key' }).class).toBe('Auth');
  });

  it("the detector's newest test signal of the run decides when the output says nothing", () => {
    const sig = (signal: Signal, detail?: string): SignalRecord => ({
      signal,
      seq: 1,
      msg: 1,
      at: '2026-06-01T10:00:00Z',
      ...(detail ? { detail } : {}),
    });
    const detector = (lastSignals: SignalRecord[], run = 1): DetectorState => ({
      run,
      events: lastSignals.length,
      messages: lastSignals.length,
      userMessages: 1,
      frustrationEma: 0,
      counts: {},
      lastSignals,
      trajectory: { stride: 1, points: [] },
    });
    const st = failed('done', { detector: detector([sig('TestSuccess'), sig('TestFailure', 'vitest (exit 1)')]) });
    expect(classifyFailure(st)).toMatchObject({
      class: 'Logic',
      rule: 'test-signal',
      evidence: 'TestFailure: vitest (exit 1)',
    });
    const fixed = failed('done', { detector: detector([sig('TestFailure'), sig('Commit'), sig('TestSuccess')]) });
    expect(classifyFailure(fixed).class).toBe('Unknown');
    const oldRun = failed('done', { run: 2, detector: detector([sig('TestFailure')], 1) });
    expect(classifyFailure(oldRun).class).toBe('Unknown');
  });

  it('the judge: its failures are evidence; "retry" with a failing test is Logic', () => {
    const st = failed('● Done.');
    expect(
      classifyFailure(st, { recommendation: 'retry', failures: ['2 tests in parser.test.ts still fail'] }),
    ).toEqual({
      class: 'Logic',
      rule: 'judge-retry',
      evidence: '2 tests in parser.test.ts still fail',
      source: 'judge',
    });
    expect(classifyFailure(st, { recommendation: 'escalate', failures: ['2 tests still fail'] }).class).toBe('Unknown');
    expect(
      classifyFailure(st, { recommendation: 'escalate', failures: ['npm install failed: ERESOLVE'] }),
    ).toMatchObject({ class: 'Dependency', source: 'judge' });
  });

  it("result.json: its error fields are read, not its summary's prose about the work", () => {
    const err = failed('', {
      message: undefined,
      result: { status: 'error', error: { message: 'getaddrinfo ENOTFOUND api.openai.com' } },
    });
    expect(classifyFailure(err)).toMatchObject({ class: 'Transient', source: 'result' });
    const prose = failed('', {
      message: undefined,
      result: { status: 'failure', summary: 'Added 401 handling to the API client' },
    });
    expect(classifyFailure(prose)).toEqual({ class: 'Unknown', rule: 'none', evidence: '' });
  });

  it('nothing to go on: Unknown, with the status message as the evidence', () => {
    expect(classifyFailure(failed(''))).toEqual({
      class: 'Unknown',
      rule: 'none',
      evidence: 'agent exited with code 1',
      source: 'message',
    });
  });
});

describe('the rules are safe regexes', () => {
  it('every rule passes the manifest patterns check (no catastrophic backtracking)', () => {
    for (const r of TEXT_RULES) expect(checkPattern(r.re.source), `${r.class}/${r.rule}`).toBeUndefined();
  });

  // The work is bounded by what the regexes see, not by a wall-clock figure (no timing in tests): each rule
  // tests at most LINE_MAX (1000) characters of a line, over the last TAIL_LINES lines plus a few fields.
  it('pathological lines: every regex sees at most 1000 characters, at most once per rule and line', () => {
    const nasty = [
      `no ${'a'.repeat(2000)}`,
      `sh: ${'x'.repeat(2000)}`,
      `Tests ${' '.repeat(2000)}1`,
      `assertion ${'a '.repeat(1000)}`,
      `lifecycle script ${'x'.repeat(2000)}`,
      `${'API_KEY '.repeat(250)}`,
      `${'error: '.repeat(300)}`,
    ];
    const out = Array.from({ length: TAIL_LINES }, (_, i) => nasty[i % nasty.length]).join('\n');
    const seen: number[] = [];
    const test = RegExp.prototype.test;
    const spy = vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, s: string) {
      if (TEXT_RULES.some((r) => r.re === this)) seen.push(s.length);
      return test.call(this, s);
    });
    try {
      classifyFailure(failed(out));
    } finally {
      spy.mockRestore();
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThanOrEqual(1000);
    // Each (rule, line) pair at most once: TAIL_LINES output lines + the message.
    expect(seen.length).toBeLessThanOrEqual(TEXT_RULES.length * (TAIL_LINES + 1));
  });
});
