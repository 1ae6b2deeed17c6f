/**
 * The detection module's rules, one by one: data validation with paths, version selection, and
 * the reading rules (header cut, NBSP input line, busy only above the box, tail window, escape
 * sequences, prompt text) — with the real Claude Code 2.1.330 template and small made-up data.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  capBytes,
  classifyScreen,
  compareVersions,
  compileDetection,
  DetectionDataError,
  detectionFor,
  DetectionVersionError,
  echoesTyped,
  parseVersion,
  selectProfile,
  validateDetection,
  type DetectionProfile,
} from '../../../controller/agents/detection.js';
import type { AgentSpec } from '../../../controller/api/kinds.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CLAUDE_DIR = path.join(ROOT, 'test/support/fixtures/claude-code/2.1.330');
const claudeSpec = (): AgentSpec =>
  YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8')).spec;
const claude: DetectionProfile = detectionFor(claudeSpec(), '2.1.330')!;
const fixture = (f: string) => fs.readFileSync(path.join(CLAUDE_DIR, f), 'utf8');
const RULE = '─'.repeat(80);
const NBSP = '\u00a0';

/** A Claude-shaped screen: header, content lines, the input box with `typed`, footer. */
function claudeScreen(content: string[], typed = '', footer = '  ⏸ manual mode on · ? for shortcuts'): string {
  return [
    ' ▐▛███▛█   Claude Code v2.1.330',
    '▝▜██████▀  Opus 5.5 · API Usage Billing',
    ' ▝▝   ▝▝   /tmp/project',
    '',
    ...content,
    '',
    RULE,
    `❯${NBSP}${typed}`,
    RULE,
    footer,
    '',
  ].join('\n');
}

const minimal = (extra: Record<string, unknown> = {}) => ({
  agent: 'demo',
  profiles: [{ versions: ['1.0.0'], ...extra }],
});

describe('validateDetection / compileDetection', () => {
  it('accepts the built-in shape and an empty profile list', () => {
    expect(validateDetection(claudeSpec().detection, 'spec.detection')).toEqual([]);
    expect(validateDetection({ profiles: [] }, 'spec.detection')).toEqual([]);
    expect(validateDetection(undefined, 'spec.detection')).toEqual([]);
  });

  it('names the field of a bad regex', () => {
    const errs = validateDetection(minimal({ busy: ['ok', { regex: '(unclosed' }] }), 'spec.detection');
    expect(errs).toEqual([
      {
        path: 'spec.detection.profiles[0].busy[1].regex',
        message: expect.stringMatching(/^invalid regular expression "\(unclosed": .*/),
      },
    ]);
  });

  it('rejects a regex that can backtrack catastrophically', () => {
    const errs = validateDetection(minimal({ waiting: ['^(a+)+$'] }), 'spec.detection');
    expect(errs).toEqual([
      { path: 'spec.detection.profiles[0].waiting[0]', message: expect.stringContaining('backtrack') },
    ]);
  });

  it('reports shape errors with their paths, unknown fields included', () => {
    const errs = validateDetection(
      {
        agent: 'demo',
        approveKeys: 'Enter',
        bussy: [],
        profiles: [
          { versions: [] },
          {
            versions: ['1.0.0'],
            input: { line: '^> ', within: 0 },
            dialogs: [{ name: 'Trust Dialog', answerKeys: ['Down Enter'] }],
            otherwise: 'sleepy',
          },
          { versions: ['1.0.0'], busy: [{ regex: 'x', region: 'middle', box: 'maybe', since: '[', speed: 1 }] },
        ],
      },
      'spec.detection',
    );
    const byPath = Object.fromEntries(errs.map((e) => [e.path, e.message]));
    expect(byPath).toMatchObject({
      'spec.detection.bussy': expect.stringContaining('unknown field'),
      'spec.detection.approveKeys': expect.stringContaining('list of tmux key names'),
      'spec.detection.profiles[0].versions': expect.stringContaining('non-empty list'),
      'spec.detection.profiles[1].input.within': 'must be an integer from 1 to 1000',
      'spec.detection.profiles[1].dialogs[0].name': expect.stringContaining('lowercase'),
      'spec.detection.profiles[1].dialogs[0].match': expect.stringContaining('required'),
      'spec.detection.profiles[1].dialogs[0].answerKeys[0]': expect.stringContaining('tmux key name'),
      'spec.detection.profiles[1].otherwise': expect.stringContaining('one of'),
      'spec.detection.profiles[2].versions[0]': 'version 1.0.0 is already listed by profiles[1]',
      'spec.detection.profiles[2].busy[0].region': expect.stringContaining('above'),
      'spec.detection.profiles[2].busy[0].box': 'must be present or absent',
      'spec.detection.profiles[2].busy[0].since': expect.stringContaining('invalid regular expression'),
      'spec.detection.profiles[2].busy[0].speed': expect.stringContaining('unknown field'),
    });
  });

  it('requires profiles, and compileDetection throws one error naming where and each path', () => {
    expect(validateDetection({ agent: 'x' }, 'spec.detection')).toEqual([
      { path: 'spec.detection.profiles', message: expect.stringContaining('required') },
    ]);
    let e: unknown;
    try {
      compileDetection(minimal({ idle: ['['] }), 'manifests/agents/demo.yaml');
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(DetectionDataError);
    expect((e as Error).message).toMatch(
      new RegExp(
        /^manifests\/agents\/demo\.yaml: invalid detection data: /.source +
          /spec\.detection\.profiles\[0\]\.idle\[0\]: invalid regular expression/.source,
      ),
    );
  });

  it('top-level fields are defaults a profile inherits or replaces', () => {
    const [a, b] = compileDetection(
      {
        agent: 'demo',
        approveKeys: ['y'],
        contextWindowTokens: 1000,
        profiles: [{ versions: ['1.0.0'] }, { versions: ['2.0.0'], approveKeys: ['1'] }],
      },
      'test',
    );
    expect([a.approveKeys, a.contextWindowTokens, a.denyKeys]).toEqual([['y'], 1000, ['Escape']]);
    expect([b.approveKeys, b.contextWindowTokens]).toEqual([['1'], 1000]);
  });
});

describe('versions', () => {
  const profiles = compileDetection(
    { agent: 'demo', profiles: [{ versions: ['1.2.0', '1.2.1'] }, { versions: ['1.10.0'] }, { versions: ['0.9.*'] }] },
    'test',
  );

  it('selects the profile listing the version, with wildcards', () => {
    expect(selectProfile(profiles, '1.2.1').versions).toEqual(['1.2.0', '1.2.1']);
    expect(selectProfile(profiles, '0.9.7').versions).toEqual(['0.9.*']);
  });

  it('without a version takes the newest profile (numeric, not lexical)', () => {
    expect(selectProfile(profiles).versions).toEqual(['1.10.0']);
    expect(compareVersions('1.10.0', '1.9.9')).toBeGreaterThan(0);
  });

  it('an unlisted version throws DetectionVersionError naming agent, version and the verified ones', () => {
    expect(() => selectProfile(profiles, '1.3.0')).toThrow(DetectionVersionError);
    expect(() => selectProfile(profiles, '1.3.0')).toThrow(
      'agent demo: no detection profile is verified for version 1.3.0 (verified: 1.2.0, 1.2.1, 1.10.0, 0.9.*)',
    );
  });

  it('parses the version out of --version outputs', () => {
    expect(parseVersion('2.1.330 (Claude Code)\n')).toBe('2.1.330');
    expect(parseVersion('codex-cli 0.169.0')).toBe('0.169.0');
    expect(parseVersion('GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)')).toBe('5.2.15');
    expect(parseVersion('aider v0.86.2')).toBe('0.86.2');
    expect(parseVersion('no version here')).toBeUndefined();
  });
});

describe('detectionFor', () => {
  it('caches the compiled profiles per spec object and per content', () => {
    const spec = claudeSpec();
    expect(detectionFor(spec)).toBe(detectionFor(spec));
    // An equal spec read again from the store (a fresh object) is not compiled again.
    expect(detectionFor(spec)).toBe(detectionFor(claudeSpec()));
    const other = claudeSpec();
    (other.detection!.profiles as { tailLines?: number }[])[0].tailLines = 7;
    expect(detectionFor(other)).not.toBe(detectionFor(spec));
    expect(() => detectionFor(spec, '9.9.9')).toThrow(DetectionVersionError);
  });

  it('gives a generic profile without detection data, and none for profiles: []', () => {
    const generic = detectionFor({ command: ['/usr/local/bin/mytool'] })!;
    expect(generic.agent).toBe('mytool');
    expect(classifyScreen('Overwrite the file? [y/N]', generic).state).toBe('waiting');
    expect(classifyScreen('working (esc to interrupt)', generic).state).toBe('busy');
    expect(classifyScreen('done\n$ ', generic)).toEqual({ state: 'idle', inputReady: true });
    expect(classifyScreen('sim agent v1\nsim> ', generic)).toEqual({ state: 'idle', inputReady: true });
    // An unknown screen carries its text: a person may have to read it (UnrecognisedScreen).
    expect(classifyScreen('sim> fix the bug\nthinking', generic)).toEqual({
      state: 'unknown',
      inputReady: false,
      prompt: 'sim> fix the bug\nthinking',
    });
    expect(detectionFor({ command: ['x'], detection: { profiles: [] } })).toBeUndefined();
  });

  it('throws DetectionDataError for bad data', () => {
    expect(() => detectionFor({ command: ['x'], detection: { profiles: [{ versions: ['1'], busy: ['('] }] } })).toThrow(
      DetectionDataError,
    );
  });
});

describe('classifyScreen rules (Claude Code 2.1.330 template)', () => {
  it('NBSP after ❯ marks the live input line; a trailing NBSP is not trimmed away', () => {
    expect(fixture('startup-idle.txt')).toContain(`❯${NBSP}\n`);
    expect(classifyScreen(claudeScreen([]), claude)).toEqual({ state: 'idle', inputReady: true });
    // The same screen with a plain space: no input box, so not idle.
    const plain = claudeScreen([]).replace(`❯${NBSP}`, '❯ ');
    expect(classifyScreen(plain, claude).state).toBe('unknown');
    expect(classifyScreen(plain, claude).inputReady).toBe(false);
  });

  it('history echoes (❯ + plain space) are not the input line', () => {
    const s = claudeScreen(['❯ fix the bug', '● Done.', '✻ Baked for 3s · done 2:40 AM'], 'next task');
    expect(classifyScreen(s, claude)).toEqual({ state: 'idle', inputReady: false });
  });

  it('matches the DONE line with its " · done <time>" suffix as idle, the spinner as busy', () => {
    expect(classifyScreen(claudeScreen(['● Done.', '✻ Cogitated for 1m 42s · done 2:40 AM']), claude).state).toBe(
      'idle',
    );
    expect(classifyScreen(claudeScreen(['✢ Warping… (2s · ↓ 71 tokens)']), claude).state).toBe('busy');
    expect(
      classifyScreen(
        claudeScreen(['✳ Simplifying recompute_tangents… (2m 18s · ↓ 4.8k tokens)', '  ⎿  ◻ task list items...']),
        claude,
      ).state,
    ).toBe('busy');
  });

  it('busy counts only above the box: busy words typed into the box or in the footer hint do not', () => {
    expect(classifyScreen(claudeScreen([], 'press esc to interrupt (3s · ↓ 5 tokens)'), claude)).toEqual({
      state: 'idle',
      inputReady: false,
    });
    expect(classifyScreen(claudeScreen([], '', '  ⏸ manual mode on · esc to interrupt'), claude).state).toBe('busy');
  });

  it('never matches the header: a project path full of busy and dialog words changes nothing', () => {
    const s = claudeScreen(['● Done.']).replace(
      '/tmp/project',
      '/tmp/esc to interrupt/Do you want to proceed?/Yes, I trust this folder',
    );
    expect(classifyScreen(s, claude)).toEqual({ state: 'idle', inputReady: true });
  });

  it('ignores the rotating tips and the animated mascot', () => {
    const a = claudeScreen(['● Done.', '  ⎿  Tip: esc to interrupt Do you want to proceed?']);
    expect(classifyScreen(a, claude)).toEqual({ state: 'idle', inputReady: true });
    const frames = ['▐▛███▛█', '▐▂███▂█', '▗▟▛███▛█▄'].map((m) => claudeScreen(['● Done.']).replace('▐▛███▛█', m));
    for (const f of frames) expect(classifyScreen(f, claude).state).toBe('idle');
  });

  it('looks only at the last tailLines non-empty lines', () => {
    const old = ['Do you want to proceed?', ' ❯ 1. Yes', '   2. No', ' Esc to cancel · Tab to amend'];
    const filler = Array.from({ length: 60 }, (_, i) => `output line ${i}`);
    const noBox = (lines: string[]) => lines.join('\n');
    expect(classifyScreen(noBox([...old, ...filler.slice(0, 10)]), claude).state).toBe('waiting');
    expect(classifyScreen(noBox([...old, ...filler]), claude).state).toBe('unknown');
  });

  it('reads captures with escape sequences the same as plain ones', () => {
    for (const f of ['busy', 'permission-bash']) {
      const plain = classifyScreen(fixture(`${f}.txt`), claude);
      const ansi = classifyScreen(fixture(`${f}.ansi.txt`), claude);
      expect(fixture(`${f}.ansi.txt`)).toContain('\x1b[');
      expect(ansi).toEqual(plain);
    }
  });

  it('permission prompt: waiting, with the question and options and without rules or tips', () => {
    const c = classifyScreen(fixture('permission-bash.txt'), claude);
    expect(c.state).toBe('waiting');
    expect(c.prompt!.split('\n')).toEqual([
      'Bash command',
      'Commit hello.txt',
      'git add hello.txt && git commit -q -m "spike: add hello" && git log --oneline -1',
      'This command requires approval',
      'Do you want to proceed?',
      '❯ 1. Yes',
      "2. Yes, and don't ask again for git add and git commit commands in /tmp/orchctl-claude-spike/project",
      '3. Yes, and switch to auto mode · auto mode handles these prompts for you',
      '4. No',
      'Esc to cancel · Tab to amend',
    ]);
  });

  it('reference samples: an older Bash dialog, a Chrome permission, a usage-limit menu', () => {
    const a2 = [
      '⏺ Bash(npm test 2>&1 | tail -50) timeout: 3m 0s',
      '  ⎿  Running…',
      '',
      RULE,
      ' Bash command',
      '',
      '   npm test 2>&1 | tail -50',
      '   Run unit tests',
      '',
      ' Do you want to proceed?',
      ' ❯ 1. Yes',
      "   2. Yes, and don't ask again for npm test commands",
      '   3. No',
      '',
      ' Esc to cancel · Tab to add additional instructions',
    ].join('\n');
    expect(classifyScreen(a2, claude)).toMatchObject({
      state: 'waiting',
      prompt: expect.stringMatching(/^Bash command\nnpm test 2>&1 \| tail -50\n/),
    });
    const a5 = [
      '  ⏺ Calling claude-in-chrome…',
      '',
      '  Claude in Chrome wants to run JavaScript on localhost:8787',
      '',
      '  http://localhost:8787/',
      '',
      '  ❯ 1. Allow',
      '    2. Allow all actions on localhost:8787 for this session',
      '    3. Deny (esc)',
    ].join('\n');
    expect(classifyScreen(a5, claude)).toMatchObject({
      state: 'waiting',
      prompt: expect.stringContaining('wants to run JavaScript'),
    });
    const a4 = [
      "You've reached your usage limit · resets 3am",
      '',
      '❯ 1. Continue with usage credits',
      '  2. Stop and wait for limit to reset',
    ].join('\n');
    expect(classifyScreen(a4, claude)).toMatchObject({ state: 'waiting', quotaExhausted: true });
  });

  it('quota text and the interrupt notice are flags next to the state', () => {
    expect(classifyScreen(fixture('api-error-429.txt'), claude)).toEqual({
      state: 'idle',
      quotaExhausted: true,
      // The lines the notice was read from (a reset time would be in them), unboxed and trimmed.
      quotaText:
        "● API Error: Request rejected (429) · This request would exceed your account's rate limit. " +
        'Please try again\nlater.',
      inputReady: true,
    });
    expect(
      classifyScreen(
        claudeScreen([
          "You've hit your limit. Please wait and try again later.",
          'Your usage resets in approximately 4 hours.',
        ]),
        claude,
      ).quotaExhausted,
    ).toBe(true);
    // A quota notice followed by a new prompt that is being worked on is stale.
    const retried = claudeScreen([
      "● API Error: Request rejected (429) · This request would exceed your account's rate limit.",
      '❯ try again',
      '● Working on it.',
      '✢ Warping… (2s · ↓ 71 tokens)',
    ]);
    expect(classifyScreen(retried, claude)).toEqual({ state: 'busy', inputReady: true });
    expect(classifyScreen(fixture('interrupted.txt'), claude)).toEqual({
      state: 'idle',
      interrupted: true,
      inputReady: true,
    });
    // Not the latest thing any more: a later turn finished after the interruption.
    const later = claudeScreen([
      '  ⎿ \u00a0Interrupted · What should Claude do instead?',
      '❯ try again',
      '● Done.',
      '✻ Baked for 2s · done 2:41 AM',
    ]);
    expect(classifyScreen(later, claude).interrupted).toBeUndefined();
  });

  it('a limit is read from the agent output only: never from echoed typed text or the input box', () => {
    const generic = detectionFor({ command: ['some-cli'] })!;
    const cont = 'The usage limit has reset. Continue where you left off.';
    const prompt = 'Add rate limit middleware to the API';
    // The continue message echoed after the notice it answers: neither is a limit now.
    const resumed = ['> Fix the flaky test', 'Error: usage limit reached. Please try again later.', `> ${cont}`, '>'];
    expect(classifyScreen(resumed.join('\n'), generic).quotaExhausted).toBe(true); // nothing known of the typed text
    expect(classifyScreen(resumed.join('\n'), generic, { typed: ['Fix the flaky test', cont] })).toEqual({
      state: 'idle',
      inputReady: true,
    });
    // A prompt about rate limits, echoed and wrapped over two lines at the pane's width.
    const wrapped = ['> Add rate limit midd', 'leware to the API', 'Working on it.', '>'].join('\n');
    expect(classifyScreen(wrapped, generic, { typed: [prompt] }).quotaExhausted).toBeUndefined();
    // A real limit after the echoed prompt still counts, with the lines it was read from.
    const real = ['> Add rate limit middleware to the API', 'Error: usage limit reached.', '>'].join('\n');
    expect(classifyScreen(real, generic, { typed: [prompt] })).toMatchObject({
      quotaExhausted: true,
      quotaText: 'Error: usage limit reached.',
    });
    // Claude Code: text typed in the box (not yet sent) is not the agent's.
    const box = claudeScreen(['● Done.'], "You've hit your limit");
    expect(classifyScreen(box, claude).quotaExhausted).toBeUndefined();
  });

  it('echoesTyped: wrapped pieces and a prompt-marked start of a typed text, not the agent own lines', () => {
    const t = ['The usage limit has reset. Continue where you left off.'];
    expect(echoesTyped('> The usage limit has reset. Continue where', t)).toBe(true);
    expect(echoesTyped('sim> The usage limit has reset.', t)).toBe(true);
    expect(echoesTyped('❯ The usage limit has reset. Continue where you left off.', t)).toBe(true);
    expect(echoesTyped(' you left off.', t)).toBe(true);
    expect(echoesTyped('Error: usage limit reached.', t)).toBe(false);
    expect(echoesTyped('The usage limit has not reset yet', t)).toBe(false);
    expect(echoesTyped('off.', t)).toBe(false); // too short to tell
  });

  it('dialogs win over waiting and carry their name and text', () => {
    expect(classifyScreen(fixture('dialog-api-key.txt'), claude)).toMatchObject({
      state: 'dialog',
      dialog: 'custom-api-key',
      prompt: expect.stringContaining('Do you want to use this API key?'),
    });
    const mcp = [
      RULE,
      ' New MCP server found in .mcp.json: postgres',
      ' ❯ 1. Use this and all future MCP servers in this project',
      '   2. Continue without using this MCP server',
      ' Enter to confirm · Esc to cancel',
    ].join('\n');
    expect(classifyScreen(mcp, claude)).toMatchObject({ state: 'dialog', dialog: 'mcp-server' });
  });

  it('an empty capture is unknown', () => {
    expect(classifyScreen('\n\n   \n', claude)).toEqual({ state: 'unknown' });
  });
});

describe('capBytes', () => {
  it('keeps short text and cuts long text to the limit, keeping head and tail', () => {
    expect(capBytes('short', 1024)).toBe('short');
    const long = ['Question?', ...Array.from({ length: 200 }, (_, i) => `line ${i} ✓ ünïcode`), '1. Yes', '2. No'].join(
      '\n',
    );
    const c = capBytes(long, 1024);
    expect(Buffer.byteLength(c)).toBeLessThanOrEqual(1024);
    expect(c.startsWith('Question?')).toBe(true);
    expect(c.endsWith('2. No')).toBe(true);
    expect(c).toContain('\n…\n');
  });
});
