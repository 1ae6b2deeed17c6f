#!/usr/bin/env node
/**
 * sim-agent — a simulated AI coding agent for the orchctl quickstart. Plain Node (>= 20), no
 * dependencies, no network, no API key. It behaves like a coding agent so that the controller has
 * something real to run, watch and restart:
 *
 *   - it takes its task from argv (promptDelivery: argument; `-p`/`--prompt TEXT` also works),
 *     else from stdin when stdin is not a terminal (promptDelivery: stdin), else it shows a
 *     `sim> ` prompt and reads what is pasted or typed into the terminal (promptDelivery: paste;
 *     bracketed-paste markers are stripped), and it falls back to $ORCHCTL_PROMPT_FILE when
 *     nothing arrives (promptDelivery: none);
 *   - it prints colourful progress over a few seconds, really edits files in its working
 *     directory and makes 1-3 real git commits there, "runs the tests" (a vitest-like summary),
 *     writes $ORCHCTL_RESULT_FILE ({status, summary, commits, filesChanged, ...}) and exits
 *     0 when the tests pass, 1 when they fail, 130 when interrupted (C-c);
 *   - on request it fails the way real runs fail (a network timeout, a missing package, a bad API
 *     key, failing tests), so the autopilot's error recovery has something real to classify.
 *
 * The outcome is deterministic, so the demo and tests are reproducible. Keywords in the prompt:
 *   [fail]          the tests fail on every run
 *   [flaky]         the tests fail on run 1 ($ORCHCTL_RUN) and pass on later runs; [flaky:N]
 *                   fails runs 1..N
 *   [slow] [fast]   4x slower / 4x faster steps
 *   [commits:N]     make N commits (1-3); otherwise 1-3, derived from the task text
 *   [exit:N]        exit code used when the tests fail or an [error:...] ends the run (default 1)
 *   [error:CLASS]   the run fails right after reading the repository, its last line an error of
 *                   that class (what autopilot/classify.ts reads), result.json {status: failure,
 *                   error}; CLASS is one of
 *                     transient   Error: connect ETIMEDOUT 203.0.113.7:443 (request to the model API timed out)
 *                     dependency  Error: Cannot find module 'left-pad'
 *                     auth        Error: 401 Unauthorized - invalid x-api-key
 *                     logic       the test run fails at once (the vitest-like failing summary)
 *   [error:CLASS:N] only runs 1..N ($ORCHCTL_RUN) fail so; later runs do the work (a recovery succeeds)
 *   [report]        keep a progress report in $ORCHCTL_WORKSPACE/status.json (executing, then complete with
 *                   notes; written whole: a temporary file renamed over it) and write handoff.md beside it
 *   [block:REASON]  (with [report]) run 1 reports `blocked` with REASON as its blocker and waits at the
 *                   `sim> ` prompt for a person's message; it prints it, then does the work and reports
 *                   complete, the message in its notes
 *   [idle]          when done, stay at the `sim> ` prompt like an interactive agent instead of exiting
 *                   (what is typed there is printed; `/exit` ends it)
 * Environment (wins over the keywords):
 *   SIM_AGENT_OUTCOME=success|fail|flaky   SIM_AGENT_FLAKY_RUNS=N   SIM_AGENT_EXIT_CODE=N
 *   SIM_AGENT_STEP_MS=700 (pace of the progress lines; 0 = as fast as possible)
 *   SIM_AGENT_INPUT_TIMEOUT_MS=15000 (how long the `sim> ` prompt waits before using the prompt file)
 *   NO_COLOR / FORCE_COLOR as usual.
 *
 * git runs through execFileSync with argument arrays (never a shell string), with the author set
 * by `-c` so it works on a machine with no git identity. Only the files it wrote are staged.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = '1.0.0';
const env = process.env;
const cwd = process.cwd();
const run = Math.max(1, Number.parseInt(env.ORCHCTL_RUN ?? '1', 10) || 1);
const session = env.ORCHCTL_SESSION ?? '(no session)';

// ---------------------------------------------------------------------------------- output

const useColor = !env.NO_COLOR && (process.stdout.isTTY || !!env.FORCE_COLOR);
const paint = (open) => (s) => (useColor ? `\x1b[${open}m${s}\x1b[0m` : String(s));
const bold = paint('1');
const red = paint('31');
const green = paint('32');
const yellow = paint('33');
const blue = paint('34');
const magenta = paint('35');
const cyan = paint('36');
const gray = paint('90');
const inverse = (s) => (useColor ? `\x1b[7m ${s} \x1b[0m` : `[${s}]`);

const say = (line = '') => process.stdout.write(`${line}\n`);
process.stdout.on('error', () => {}); // a closed pipe (`sim-agent ... | head`) is not a crash
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A terminal title (an OSC sequence), so `status.lastOutput` shows that OSC is stripped too. */
const setTitle = (t) => process.stdout.isTTY && process.stdout.write(`\x1b]0;${t}\x07`);

function usage() {
  say(`sim-agent ${VERSION} — a simulated coding agent (orchctl quickstart)

usage: sim-agent [-p|--prompt] [TASK...]
       sim-agent < task.md
       sim-agent            (interactive: paste or type the task at the sim> prompt)

Prompt keywords: [fail] [flaky] [flaky:N] [slow] [fast] [commits:N] [exit:N]
                 [error:transient|dependency|auth|logic] [error:CLASS:N] (fail runs 1..N only)
                 [report] [block:REASON] (run 1 waits for a message) [idle] (stay at the prompt when done)
Environment: SIM_AGENT_OUTCOME=success|fail|flaky SIM_AGENT_STEP_MS SIM_AGENT_FLAKY_RUNS
             SIM_AGENT_EXIT_CODE SIM_AGENT_INPUT_TIMEOUT_MS ORCHCTL_RUN ORCHCTL_RESULT_FILE`);
}

// ---------------------------------------------------------------------------------- the task

function parseArgs(argv) {
  const words = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') return { help: true };
    if (a === '--version' || a === '-V') return { version: true };
    if (a === '-p' || a === '--prompt') {
      if (i + 1 < argv.length) words.push(argv[++i]);
      continue;
    }
    if (a.startsWith('--prompt=')) words.push(a.slice('--prompt='.length));
    else if (a === '--') {
      words.push(...argv.slice(i + 1));
      break;
    } else words.push(a);
  }
  return { text: words.join(' ') };
}

async function readAll(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/**
 * The `sim> ` prompt in a terminal. Raw mode (so long pasted lines are not cut at the tty's
 * line limit and C-c is ours), bracketed paste requested. Input ends once a line is complete and
 * nothing more arrived for 400 ms — pasted text without bracket markers arrives as typed keys with
 * CR for every newline, so the quiet period, not the first Enter, says the paste is over.
 */
function readInteractive(timeoutMs, quietMs = 400) {
  const stdin = process.stdin;
  return new Promise((resolve) => {
    let text = '';
    let pending = ''; // an escape sequence split across chunks
    let inPaste = false;
    let quiet;
    const finish = (value) => {
      clearTimeout(quiet);
      clearTimeout(overall);
      stdin.off('data', onData);
      process.stdout.write('\x1b[?2004l');
      try {
        stdin.setRawMode(false);
      } catch {
        /* not a tty any more */
      }
      stdin.pause();
      resolve(value);
    };
    const onData = (chunk) => {
      let s = pending + chunk;
      pending = '';
      const partial = s.match(/\x1b(\[(2(0([01]~?)?)?)?)?$/);
      if (partial) {
        pending = partial[0];
        s = s.slice(0, -pending.length);
      }
      let echo = '';
      for (let i = 0; i < s.length; i++) {
        if (s.startsWith(PASTE_START, i)) {
          inPaste = true;
          i += PASTE_START.length - 1;
        } else if (s.startsWith(PASTE_END, i)) {
          inPaste = false;
          i += PASTE_END.length - 1;
        } else if (s[i] === '\x03') {
          process.stdout.write('^C\r\n');
          finish(undefined);
          interrupted('SIGINT');
          return;
        } else if (s[i] === '\x04' && !text.trim()) return finish(null);
        else if (s[i] === '\r' || s[i] === '\n') {
          if (s[i] === '\n' && s[i - 1] === '\r') continue;
          text += '\n';
          echo += '\r\n';
        } else if (s[i] === '\x7f' || s[i] === '\b') {
          if (text && !text.endsWith('\n')) {
            text = text.slice(0, -1);
            echo += '\b \b';
          }
        } else if (s[i] >= ' ' || s[i] === '\t') {
          text += s[i];
          echo += s[i];
        }
      }
      if (echo) process.stdout.write(useColor ? `\x1b[36m${echo}\x1b[0m` : echo);
      clearTimeout(quiet);
      if (text.trim() && !inPaste && text.endsWith('\n')) quiet = setTimeout(() => finish(text), quietMs);
    };
    const overall = setTimeout(() => finish(text.trim() ? text : null), timeoutMs);
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    process.stdout.write('\x1b[?2004h' + bold(magenta('sim> ')));
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function readTask() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    usage();
    process.exit(0);
  }
  if (args.version) {
    say(`sim-agent ${VERSION}`);
    process.exit(0);
  }
  if (args.text.trim()) return { text: args.text, via: 'argument' };
  if (!process.stdin.isTTY) {
    const text = await readAll(process.stdin);
    if (text.trim()) return { text, via: 'stdin' };
  } else {
    const timeout = Number(env.SIM_AGENT_INPUT_TIMEOUT_MS ?? 15000);
    const text = await readInteractive(Number.isFinite(timeout) ? timeout : 15000);
    if (text?.trim()) return { text, via: 'terminal (pasted or typed)' };
    if (text === null) say(gray('(nothing arrived at the prompt)'));
  }
  const file = env.ORCHCTL_PROMPT_FILE;
  if (file && fs.existsSync(file)) {
    const text = fs.readFileSync(file, 'utf8');
    if (text.trim()) return { text, via: `prompt file ${file}` };
  }
  return { text: 'Tidy up the repository and make sure the tests pass.', via: 'built-in default' };
}

// ---------------------------------------------------------------------------------- the plan

/** FNV-1a: a small stable hash, so every choice is a function of the task text. */
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const STOP_WORDS = new Set(
  'a an the to and or of in on for with by it its is be as at from into this that beside next please make sure so'.split(
    ' ',
  ),
);

function analyse(raw) {
  const text = raw.replaceAll('\r', '').trim();
  const lower = text.toLowerCase();
  const kw = (name) => lower.match(new RegExp(`\\[${name}(?::(\\d+))?\\]`));
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
  // The controller puts the persona (Agent systemPromptFile) first and the task last.
  const persona =
    paragraphs.length > 1 && /^(you are|as an?)\b/i.test(paragraphs[0]) ? paragraphs[0].split('\n')[0] : undefined;
  const taskPara = paragraphs.find((p) => /^task:/i.test(p)) ?? paragraphs[paragraphs.length - 1] ?? text;
  const title =
    taskPara
      .split('\n')[0]
      .replace(/^task:\s*/i, '')
      .replace(/^#+\s*/, '')
      .replace(/\[[a-z]+(?::[a-z]+)?(?::\d+)?\]/gi, '')
      .replace(/\[block:[^\]]*\]/gi, '')
      .replace(/\s+/g, ' ')
      .trim() || 'Update the project';
  const slug =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, ' ')
      .split(' ')
      .filter((w) => w && !STOP_WORDS.has(w))
      .slice(0, 3)
      .join('-')
      .slice(0, 40)
      .replace(/-+$/, '') || 'change';

  const envOutcome = (env.SIM_AGENT_OUTCOME ?? '').toLowerCase();
  const outcome = ['success', 'fail', 'flaky'].includes(envOutcome)
    ? envOutcome
    : kw('fail')
      ? 'fail'
      : kw('flaky')
        ? 'flaky'
        : 'success';
  const flakyRuns = Number(env.SIM_AGENT_FLAKY_RUNS ?? kw('flaky')?.[1] ?? 1) || 1;
  const failsThisRun = outcome === 'fail' || (outcome === 'flaky' && run <= flakyRuns);
  const exitCode = Number(env.SIM_AGENT_EXIT_CODE ?? kw('exit')?.[1] ?? 1) || 1;
  const err = lower.match(/\[error:(transient|dependency|auth|logic)(?::(\d+))?\]/);
  const error = err && (!err[2] || run <= Number(err[2])) ? err[1] : undefined;
  const commits = Math.min(3, Math.max(1, Number(kw('commits')?.[1] ?? 1 + (hash(title) % 3))));
  let stepMs = Number(env.SIM_AGENT_STEP_MS ?? 700);
  if (!Number.isFinite(stepMs) || stepMs < 0) stepMs = 700;
  if (kw('slow')) stepMs *= 4;
  if (kw('fast')) stepMs /= 4;
  const block = text.match(/\[block:([^\]]+)\]/i)?.[1]?.trim();
  const report = !!kw('report') || !!block;
  const idle = !!kw('idle');
  return {
    title,
    slug,
    persona,
    outcome,
    flakyRuns,
    failsThisRun,
    exitCode,
    commits,
    stepMs,
    error,
    report,
    block: run === 1 ? block : undefined,
    idle,
  };
}

// ---------------------------------------------------------------------------------- git

const GIT_IDENTITY = [
  '-c',
  'user.name=sim-agent',
  '-c',
  'user.email=sim-agent@orchctl.invalid',
  '-c',
  'commit.gpgsign=false',
];

function git(args) {
  return execFileSync('git', [...GIT_IDENTITY, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function tryGit(args) {
  try {
    return git(args);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------- the work

const result = {
  status: 'running',
  summary: '',
  commits: 0,
  filesChanged: 0,
  files: [],
  tests: { passed: 0, failed: 0 },
  run,
  agent: `sim-agent ${VERSION}`,
};
const touched = new Set();

function writeResult() {
  const file = env.ORCHCTL_RESULT_FILE;
  if (!file) return;
  try {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(
      tmp,
      JSON.stringify({ ...result, files: [...touched].sort(), filesChanged: touched.size }, null, 2) + '\n',
    );
    fs.renameSync(tmp, file);
  } catch (e) {
    say(red(`could not write ${file}: ${e.message}`));
  }
}

let finished = false;
function interrupted(sig) {
  if (finished) return;
  finished = true;
  say('');
  say(yellow(`■ Interrupted (${sig}) — stopping; ${result.commits} commit(s) made so far.`));
  Object.assign(result, { status: 'interrupted', summary: `interrupted by ${sig} after ${result.commits} commit(s)` });
  writeResult();
  process.exit(sig === 'SIGTERM' ? 143 : 130);
}
process.on('SIGINT', () => interrupted('SIGINT'));
process.on('SIGTERM', () => interrupted('SIGTERM'));

/** Writes a file under the working directory and returns [added, removed] line counts. */
function writeFile(rel, content) {
  const abs = path.join(cwd, rel);
  const before = fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8').split('\n').length : 0;
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  touched.add(rel);
  const after = content.split('\n').length;
  return before ? [Math.max(1, after - before + 2), 2] : [after, 0];
}

function revisionOf(rel) {
  try {
    return Number(fs.readFileSync(path.join(cwd, rel), 'utf8').match(/revision = (\d+)/)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const camel = (slug) => slug.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase()).replace(/^[0-9]/, '_$&');

function edits(plan) {
  const fn = camel(plan.slug);
  const src = `src/${plan.slug}.js`;
  const test = `test/${plan.slug}.test.js`;
  const rev = revisionOf(src) + 1;
  return {
    src: () =>
      writeFile(
        src,
        `// ${plan.title}\n// Written by sim-agent (run ${run}); revision = ${rev}\n\nexport const revision = ${rev};\n\n` +
          `export function ${fn}(input) {\n  if (input === undefined || input === null) throw new TypeError('${fn}: input is required');\n` +
          `  return { ok: true, input, revision };\n}\n`,
      ),
    test: () =>
      writeFile(
        test,
        `import { describe, expect, it } from 'vitest';\nimport { ${fn}, revision } from '../src/${plan.slug}.js';\n\n` +
          `describe('${plan.slug}', () => {\n  it('returns ok', () => expect(${fn}('x').ok).toBe(true));\n` +
          `  it('rejects missing input', () => expect(() => ${fn}()).toThrow(TypeError));\n` +
          `  it('is at revision ${rev}', () => expect(revision).toBe(${rev}));\n});\n`,
      ),
    changelog: () => {
      const rel = 'CHANGELOG.md';
      const abs = path.join(cwd, rel);
      const old = fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : '# Changelog\n';
      writeFile(rel, `${old.trimEnd()}\n- ${plan.title} (sim-agent, run ${run}, revision ${rev})\n`);
      return [1, 0];
    },
    src_path: src,
    test_path: test,
  };
}

/**
 * The previous run's result.json, from the handoff workspace: the controller keeps one directory
 * per run ($ORCHCTL_HOME/sessions/<ns>/<name>/<run>/), so run N finds run N-1's beside its own.
 */
function previousResult() {
  if (run < 2 || !env.ORCHCTL_WORKSPACE) return undefined;
  try {
    return JSON.parse(
      fs.readFileSync(path.join(path.dirname(env.ORCHCTL_WORKSPACE), String(run - 1), 'result.json'), 'utf8'),
    );
  } catch {
    return undefined;
  }
}

async function step(plan, factor = 1) {
  await sleep(plan.stepMs * factor);
}

async function spinner(plan, label, factor = 1.5) {
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  const total = plan.stepMs * factor;
  if (!process.stdout.isTTY || total <= 0) {
    say(gray(`… ${label}`));
    return step(plan, factor);
  }
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < total; i++) {
    process.stdout.write(`\r\x1b[2K${cyan(frames[i % frames.length])} ${gray(label)}`);
    await sleep(80);
  }
  process.stdout.write(`\r\x1b[2K${gray(`✓ ${label}`)}\n`);
}

function commit(subject, files) {
  git(['add', '--', ...files]);
  git([
    'commit',
    '--no-verify',
    '--quiet',
    '-m',
    subject,
    '-m',
    `Made by sim-agent (orchctl quickstart), session ${session}, run ${run}.`,
  ]);
  const sha = git(['rev-parse', '--short', 'HEAD']);
  result.commits++;
  say(`  ${green('✔')} ${bold('commit')} ${yellow(sha)} ${subject}`);
}

function testFiles(plan) {
  let names = [];
  try {
    names = fs.readdirSync(path.join(cwd, 'test')).filter((f) => /\.test\.[cm]?js$/.test(f));
  } catch {
    /* no test directory */
  }
  return [...new Set([...names, `${plan.slug}.test.js`])].sort().map((f) => `test/${f}`);
}

const FAILURES = [
  ['handles an empty string', `AssertionError: expected '' to be 'ok' // Object.is equality`],
  ['rounds half to even', 'AssertionError: expected 0.30000000000000004 to be 0.3 // Object.is equality'],
  ['keeps the order of entries', `AssertionError: expected [ 'b', 'a' ] to deeply equal [ 'a', 'b' ]`],
  ['rejects negative input', 'AssertionError: expected [Function] to throw an error'],
];

async function runTests(plan) {
  say('');
  say(`${gray('$')} ${bold('npx vitest run')}`);
  await step(plan);
  say('');
  say(` ${inverse('RUN')} ${cyan('v3.2.4')} ${gray(cwd)}`);
  say('');
  let passed = 0;
  let failed = 0;
  const failedFile = `test/${plan.slug}.test.js`;
  const [failName, failMsg] = FAILURES[hash(plan.slug) % FAILURES.length];
  for (const f of testFiles(plan)) {
    await step(plan, 0.35);
    const n = f === failedFile ? 3 : 2 + (hash(f) % 4); // the test file it wrote has 3 tests
    const ms = 3 + (hash(f + 'ms') % 40);
    if (plan.failsThisRun && f === failedFile) {
      passed += n - 1;
      failed += 1;
      say(` ${red('❯')} ${f} ${gray(`(${n} tests | `)}${red('1 failed')}${gray(`) ${ms}ms`)}`);
      say(`   ${red('×')} ${plan.slug} > ${failName}`);
      say(`     ${red(`→ ${failMsg}`)}`);
    } else {
      passed += n;
      say(` ${green('✓')} ${f} ${gray(`(${n} tests) ${ms}ms`)}`);
    }
  }
  await step(plan, 0.5);
  const files = testFiles(plan).length;
  say('');
  if (failed) {
    say(
      `${bold(' Test Files ')} ${bold(red('1 failed'))} ${gray('|')} ${bold(green(`${files - 1} passed`))} ${gray(`(${files})`)}`,
    );
    say(
      `${bold('      Tests ')} ${bold(red(`${failed} failed`))} ${gray('|')} ${bold(green(`${passed} passed`))} ${gray(`(${passed + failed})`)}`,
    );
  } else {
    say(`${bold(' Test Files ')} ${bold(green(`${files} passed`))} ${gray(`(${files})`)}`);
    say(`${bold('      Tests ')} ${bold(green(`${passed} passed`))} ${gray(`(${passed})`)}`);
  }
  say(`${gray('   Duration ')} ${Math.round(plan.stepMs * (1 + files * 0.35)) + 120}ms`);
  result.tests = { passed, failed };
  return { failed, failName, failMsg, failedFile };
}

function testsFailed(plan, t) {
  Object.assign(result, {
    status: 'failure',
    summary: `${t.failed} test failing: ${plan.slug} > ${t.failName} (${t.failedFile}); ${result.commits} commit(s) made`,
  });
  say(
    `${bold(red('✘ Tests failed'))} ${gray(`— ${plan.slug} > ${t.failName}. Giving up on this attempt (exit ${plan.exitCode}).`)}`,
  );
  writeResult();
  process.exit(plan.exitCode);
}

/**
 * [error:CLASS]: what a run that fails that way prints, as a real agent and its tools print it, and
 * the error, its last line (autopilot/classify.ts reads the tail). `logic` runs the failing tests.
 */
const ERRORS = {
  transient: {
    before: [
      gray('  ⎿  API Error (Request timed out.) · Retrying in 1 seconds… (attempt 1/3)'),
      gray('  ⎿  API Error (Request timed out.) · Retrying in 2 seconds… (attempt 2/3)'),
    ],
    error: 'Error: connect ETIMEDOUT 203.0.113.7:443 (request to the model API timed out)',
  },
  auth: {
    before: [
      gray(
        '  ⎿  API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
      ),
    ],
    error: 'Error: 401 Unauthorized - invalid x-api-key',
  },
  dependency: {
    before: [
      `${gray('$')} ${bold('node test/setup.js')}`,
      'node:internal/modules/cjs/loader:1228',
      '  throw err;',
      '  ^',
      '',
    ],
    error: "Error: Cannot find module 'left-pad'",
  },
};

async function failWith(plan) {
  if (plan.error === 'logic') {
    const t = await runTests({ ...plan, failsThisRun: true });
    say('');
    finished = true;
    return testsFailed(plan, t);
  }
  const { before, error } = ERRORS[plan.error];
  await spinner(plan, 'Thinking…');
  for (const line of before) {
    say(line);
    await step(plan, 0.4);
  }
  say(red(error));
  finished = true;
  Object.assign(result, { status: 'failure', summary: `run ${run} failed before any change: ${error}`, error });
  writeResult();
  process.exit(plan.exitCode);
}

// ---------------------------------------------------------------------------------- progress report

const TASKS = [
  ['implement', 'Implement the change'],
  ['test', 'Cover it with tests'],
  ['verify', 'Run the test suite'],
];

/** $ORCHCTL_WORKSPACE/status.json, written whole (temporary file, rename), as the report protocol asks. */
function writeReport(status, done, extra = {}) {
  const ws = env.ORCHCTL_WORKSPACE;
  if (!ws) return;
  const tasks = TASKS.map(([id, subject], i) => ({
    id,
    subject,
    state: i < done ? 'done' : i === done && status === 'executing' ? 'in_progress' : 'pending',
  }));
  const file = path.join(ws, 'status.json');
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ status, tasks, ...extra }, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

/** $ORCHCTL_WORKSPACE/handoff.md: what the next phase (or run) needs to know. */
function writeHandoff(plan, received) {
  const ws = env.ORCHCTL_WORKSPACE;
  if (!ws) return;
  const lines = [
    `# Handoff: ${plan.title}`,
    '',
    `State: done in run ${run} of ${session}; ${result.commits} commit(s), files ${[...touched].sort().join(', ')}.`,
    `Next steps: build on src/${plan.slug}.js; its tests are in test/${plan.slug}.test.js.`,
    ...(received ? [`A person unblocked this phase with: ${received}`] : []),
  ];
  fs.writeFileSync(path.join(ws, 'handoff.md'), lines.join('\n') + '\n');
}

/** Waits at the `sim> ` prompt for a message (a terminal only); undefined when none can come. */
async function waitForMessage(label) {
  if (!process.stdin.isTTY) return undefined;
  for (;;) {
    say(gray(label));
    const text = await readInteractive(6 * 3600_000);
    if (text?.trim()) return text.trim();
  }
}

async function main() {
  const task = await readTask();
  const plan = analyse(task.text);
  setTitle(`sim-agent · ${plan.title}`);
  say('');
  say(`${bold(magenta('◆ sim-agent'))} ${gray(`v${VERSION} — a simulated coding agent (no model, no network)`)}`);
  say(gray(`  session ${session} · run ${run} · cwd ${cwd}`));
  say(gray(`  task received via ${task.via}`));
  if (plan.persona) say(gray(`  persona: ${plan.persona}`));
  say('');
  say(`${bold(blue('● Task:'))} ${plan.title}`);
  await step(plan);

  const inRepo = tryGit(['rev-parse', '--is-inside-work-tree']) === 'true';
  const head = inRepo ? tryGit(['rev-parse', '--short', 'HEAD']) : undefined;
  const branch = inRepo ? (tryGit(['symbolic-ref', '--quiet', '--short', 'HEAD']) ?? '(detached)') : undefined;
  const tracked = inRepo ? (tryGit(['ls-files']) ?? '').split('\n').filter(Boolean).length : 0;
  say(`${blue('●')} Reading the repository`);
  say(
    gray(
      inRepo
        ? `  ${tracked} tracked files · branch ${branch} · HEAD ${head ?? '(no commits yet)'}`
        : '  not a git repository — files will be edited but nothing committed',
    ),
  );
  await step(plan);
  if (plan.error) return failWith(plan);
  if (plan.report) writeReport('executing', 0);
  let received;
  if (plan.block) {
    writeReport('blocked', 0, { blocker: plan.block });
    say(`${bold(yellow('■ Blocked:'))} ${plan.block}`);
    received = await waitForMessage('  waiting for a person — type or paste a message at the prompt');
    if (received !== undefined) {
      say(`${blue('●')} Message received: ${received}`);
      writeReport('executing', 0);
    }
  }

  const previous = previousResult();
  if (previous) {
    say(`${blue('●')} Reading the handoff from run ${run - 1}`);
    say(gray(`  ${previous.status ?? 'unknown'}: ${previous.summary ?? '(no summary)'}`));
    await step(plan, 0.5);
  }
  await spinner(plan, previous?.status === 'failure' ? `Thinking about why run ${run - 1} failed…` : 'Thinking…');
  const e = edits(plan);
  say(`${blue('●')} Plan`);
  say(gray(`  1. implement ${e.src_path}`));
  say(gray(`  2. cover it in ${e.test_path}`));
  say(gray(`  3. note the change in CHANGELOG.md and run the test suite`));
  await step(plan);

  const subject1 =
    previous?.status === 'failure'
      ? `fix(${plan.slug}): ${plan.title} (attempt ${run})`
      : `feat(${plan.slug}): ${plan.title}`;
  const groups =
    plan.commits === 1
      ? [{ subject: subject1, parts: ['src', 'test', 'changelog'] }]
      : plan.commits === 2
        ? [
            { subject: subject1, parts: ['src'] },
            { subject: `test(${plan.slug}): cover ${plan.slug}`, parts: ['test', 'changelog'] },
          ]
        : [
            { subject: subject1, parts: ['src'] },
            { subject: `test(${plan.slug}): cover ${plan.slug}`, parts: ['test'] },
            { subject: `docs: changelog entry for ${plan.slug}`, parts: ['changelog'] },
          ];
  const paths = { src: e.src_path, test: e.test_path, changelog: 'CHANGELOG.md' };
  for (const [gi, g] of groups.entries()) {
    if (plan.report) writeReport('executing', Math.min(1, gi));
    for (const part of g.parts) {
      const [add, del] = e[part]();
      say(`${yellow('✎')} Edit ${bold(paths[part])} ${green(`+${add}`)} ${red(`-${del}`)}`);
      await step(plan, 0.6);
    }
    if (inRepo)
      commit(
        g.subject,
        g.parts.map((p) => paths[p]),
      );
    await step(plan, 0.4);
  }

  if (plan.report) writeReport('executing', 2);
  const t = await runTests(plan);
  say('');
  finished = true;
  if (t.failed) testsFailed(plan, t);
  Object.assign(result, {
    status: 'success',
    summary: `${plan.title} — ${result.commits} commit(s), ${touched.size} file(s) changed, ${result.tests.passed} tests passing`,
  });
  say(
    `${bold(green('✔ Done:'))} ${plan.title} ${gray(`(${result.commits} commit(s), ${touched.size} file(s), ${result.tests.passed} tests passing)`)}`,
  );
  writeResult();
  if (plan.report) {
    writeHandoff(plan, received);
    const notes = `${result.summary}${received ? `; resumed after: ${received}` : ''}`;
    writeReport('complete', TASKS.length, { notes });
  }
  if (plan.idle) {
    for (;;) {
      const text = await waitForMessage('  idle — type a message, or /exit');
      if (text === undefined || text === '/exit') break;
      say(`${blue('●')} Message received: ${text}`);
    }
  }
  process.exit(0);
}

main().catch((e) => {
  finished = true;
  say(red(`sim-agent crashed: ${e?.stack ?? e}`));
  Object.assign(result, { status: 'error', summary: String(e?.message ?? e) });
  writeResult();
  process.exit(2);
});
