/** buildLaunch/composePrompt (controller/agents/launch.ts): the argv and env an agent is started with. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASE_ENV, envNameMatches, pickEnv } from '../../../controller/api/environment.js';
import type { AgentSpec } from '../../../controller/api/kinds.js';
import {
  buildLaunch,
  composePrompt,
  LAUNCH_SCRIPT,
  LAUNCH_SCRIPT_STDIN,
  type LaunchInput,
} from '../../../controller/agents/launch.js';

const NASTY = `fix it; rm -rf / $(touch /tmp/x) \`touch /tmp/y\` 'single' "double" $HOME \\ back
second line\n\ttab & | > < * ? ~ !! %s {a,b} \${IFS}`;

function input(agent: Partial<AgentSpec> = {}, over: Partial<LaunchInput> = {}): LaunchInput {
  return {
    agent: { command: ['claude'], ...agent },
    prompt: 'Do the task.\n',
    promptFile: '/ws/.orchctl/prompt.md',
    resultFile: '/ws/.orchctl/result.json',
    workspace: '/ws',
    sessionKey: 'team-a/fix-bug',
    uid: '0b4c7a52-uid',
    run: 2,
    ...over,
  };
}

describe('buildLaunch: argv', () => {
  it('is sh -c <constant script> followed by the command and its args as separate elements', () => {
    const { argv } = buildLaunch(input({ command: ['npx', '@acme/agent'], args: ['--model', 'big one', '--yes'] }));
    expect(argv).toEqual(['sh', '-c', LAUNCH_SCRIPT, 'npx', '@acme/agent', '--model', 'big one', '--yes']);
  });

  it('the script is a constant: it runs its positional parameters and records their exit status', () => {
    // Run the real wrapper: the command and a hostile argument arrive literally, and the exit
    // status lands in $ORCHCTL_WORKSPACE/exit-code as well as in the wrapper's own status.
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-launch-'));
    const r = spawnSync(
      'sh',
      ['-c', LAUNCH_SCRIPT, 'sh', '-c', 'printf "%s" "$1" > "$2/arg"; exit 7', 'inner', NASTY, ws],
      {
        env: { ...process.env, ORCHCTL_WORKSPACE: ws, TMUX: '' },
        encoding: 'utf8',
      },
    );
    expect(r.status).toBe(7);
    expect(fs.readFileSync(path.join(ws, 'exit-code'), 'utf8')).toBe('7\n');
    expect(fs.readFileSync(path.join(ws, 'arg'), 'utf8')).toBe(NASTY);
    const prompt = path.join(ws, 'prompt.md');
    fs.writeFileSync(prompt, 'from the prompt file\n');
    const s = spawnSync('sh', ['-c', LAUNCH_SCRIPT_STDIN, 'cat'], {
      env: { ...process.env, ORCHCTL_WORKSPACE: ws, ORCHCTL_PROMPT_FILE: prompt, TMUX: '' },
      encoding: 'utf8',
    });
    expect(s.stdout).toBe('from the prompt file\n');
    expect(fs.readFileSync(path.join(ws, 'exit-code'), 'utf8')).toBe('0\n');
    fs.rmSync(ws, { recursive: true, force: true });
    // Whatever the input, the script element is one of the two constants.
    for (const delivery of ['paste', 'argument', 'stdin', 'none', undefined] as const) {
      const { argv } = buildLaunch(
        input(
          { command: [NASTY], args: [NASTY], promptDelivery: delivery, promptFlag: NASTY },
          { prompt: NASTY, promptFile: NASTY },
        ),
      );
      expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
      expect([LAUNCH_SCRIPT, LAUNCH_SCRIPT_STDIN]).toContain(argv[2]);
      expect(argv[2]).not.toContain(NASTY);
    }
  });

  it('paste delivery (the default) keeps the prompt out of argv', () => {
    expect(buildLaunch(input()).argv).toEqual(['sh', '-c', LAUNCH_SCRIPT, 'claude']);
    expect(buildLaunch(input({ promptDelivery: 'paste', promptFlag: '-p' })).argv).toEqual([
      'sh',
      '-c',
      LAUNCH_SCRIPT,
      'claude',
    ]);
  });

  it('none delivery keeps the prompt out of argv', () => {
    expect(buildLaunch(input({ promptDelivery: 'none', args: ['--x'] })).argv).toEqual([
      'sh',
      '-c',
      LAUNCH_SCRIPT,
      'claude',
      '--x',
    ]);
  });

  it('argument delivery appends the prompt as the last element', () => {
    expect(buildLaunch(input({ promptDelivery: 'argument', args: ['--print'] })).argv).toEqual([
      'sh',
      '-c',
      LAUNCH_SCRIPT,
      'claude',
      '--print',
      'Do the task.\n',
    ]);
  });

  it('argument delivery with a promptFlag appends [flag, prompt]', () => {
    expect(
      buildLaunch(input({ command: ['codex', 'exec'], promptDelivery: 'argument', promptFlag: '--prompt' })).argv,
    ).toEqual(['sh', '-c', LAUNCH_SCRIPT, 'codex', 'exec', '--prompt', 'Do the task.\n']);
  });

  it('argument delivery with an empty prompt appends nothing, not even the flag', () => {
    expect(buildLaunch(input({ promptDelivery: 'argument', promptFlag: '-p' }, { prompt: '' })).argv).toEqual([
      'sh',
      '-c',
      LAUNCH_SCRIPT,
      'claude',
    ]);
  });

  it('stdin delivery uses the stdin script and keeps the prompt out of argv', () => {
    const plan = buildLaunch(input({ promptDelivery: 'stdin', args: ['-'], promptFlag: '-p' }));
    expect(plan.argv).toEqual(['sh', '-c', LAUNCH_SCRIPT_STDIN, 'claude', '-']);
    // The script reads the prompt file named in the environment.
    expect(plan.env.ORCHCTL_PROMPT_FILE).toBe('/ws/.orchctl/prompt.md');
  });

  it('a hostile prompt reaches argv byte for byte, as one element', () => {
    const { argv } = buildLaunch(input({ promptDelivery: 'argument', promptFlag: '-p' }, { prompt: NASTY }));
    expect(argv).toHaveLength(6);
    expect(argv[4]).toBe('-p');
    expect(argv[5]).toBe(NASTY);
    expect(Buffer.from(argv[5]).equals(Buffer.from(NASTY))).toBe(true);
    expect(argv[2]).toBe(LAUNCH_SCRIPT);
    expect(argv.filter((a) => a.includes('$(touch /tmp/x)'))).toEqual([NASTY]);
  });

  it('hostile command and args are passed through as separate elements, unchanged', () => {
    const { argv } = buildLaunch(
      input({ command: ['/opt/my agent/bin', '--a=$(id)'], args: ['`whoami`', ';', "'", '"', 'a\nb', ''] }),
    );
    expect(argv).toEqual([
      'sh',
      '-c',
      LAUNCH_SCRIPT,
      '/opt/my agent/bin',
      '--a=$(id)',
      '`whoami`',
      ';',
      "'",
      '"',
      'a\nb',
      '',
    ]);
  });

  it('does not mutate the agent spec', () => {
    const agent: AgentSpec = {
      command: ['claude'],
      args: ['--x'],
      env: [{ name: 'A', value: '1' }],
      promptDelivery: 'argument',
    };
    const copy = structuredClone(agent);
    buildLaunch(input(agent));
    buildLaunch(input(agent));
    expect(agent).toEqual(copy);
    expect(buildLaunch(input(agent)).argv).toEqual(['sh', '-c', LAUNCH_SCRIPT, 'claude', '--x', 'Do the task.\n']);
  });
});

describe('buildLaunch: env', () => {
  it('sets the ORCHCTL_* variables', () => {
    expect(buildLaunch(input()).env).toEqual({
      ORCHCTL_SESSION: 'team-a/fix-bug',
      ORCHCTL_SESSION_UID: '0b4c7a52-uid',
      ORCHCTL_RUN: '2',
      ORCHCTL_WORKSPACE: '/ws',
      ORCHCTL_PROMPT_FILE: '/ws/.orchctl/prompt.md',
      ORCHCTL_RESULT_FILE: '/ws/.orchctl/result.json',
    });
  });

  it('merges agent env and session env, the session winning', () => {
    const { env } = buildLaunch(
      input(
        {
          env: [
            { name: 'MODEL', value: 'small' },
            { name: 'ONLY_AGENT', value: 'a' },
          ],
        },
        {
          sessionEnv: [
            { name: 'MODEL', value: 'big' },
            { name: 'ONLY_SESSION', value: 's' },
          ],
        },
      ),
    );
    expect(env).toMatchObject({ MODEL: 'big', ONLY_AGENT: 'a', ONLY_SESSION: 's', ORCHCTL_RUN: '2' });
  });

  it('a later duplicate in the same list wins', () => {
    expect(
      buildLaunch(
        input({
          env: [
            { name: 'X', value: '1' },
            { name: 'X', value: '2' },
          ],
        }),
      ).env.X,
    ).toBe('2');
  });

  it('an env var without a value is set to the empty string', () => {
    expect(buildLaunch(input({ env: [{ name: 'EMPTY' }] })).env.EMPTY).toBe('');
  });

  it('the ORCHCTL_* variables cannot be overridden by agent or session env', () => {
    const { env } = buildLaunch(
      input(
        { env: [{ name: 'ORCHCTL_RUN', value: '99' }] },
        { sessionEnv: [{ name: 'ORCHCTL_PROMPT_FILE', value: '/etc/passwd' }] },
      ),
    );
    expect(env.ORCHCTL_RUN).toBe('2');
    expect(env.ORCHCTL_PROMPT_FILE).toBe('/ws/.orchctl/prompt.md');
  });

  it('values are kept verbatim (no expansion)', () => {
    expect(buildLaunch(input({}, { sessionEnv: [{ name: 'V', value: NASTY }] })).env.V).toBe(NASTY);
  });

  it('the base goes to tmux; inherited variables go privately, under the Agent and session env', () => {
    const plan = buildLaunch(
      input(
        { env: [{ name: 'FROM_AGENT', value: 'agent' }] },
        {
          baseEnv: { PATH: '/usr/bin', HOME: '/home/u', ORCHCTL_RUN: '7' },
          inheritedEnv: { ANTHROPIC_API_KEY: 'sk-inherited', FROM_AGENT: 'inherited', HOME: '/other' },
          sessionEnv: [{ name: 'FROM_SESSION', value: 'session' }],
        },
      ),
    );
    // Base values are names and paths: on tmux's command line. Inherited ones may be secrets: never.
    expect(plan.tmuxEnv).toMatchObject({ PATH: '/usr/bin', HOME: '/home/u', ORCHCTL_RUN: '2' });
    expect(Object.values(plan.tmuxEnv)).not.toContain('sk-inherited');
    expect(plan.privateEnv).toEqual({
      ANTHROPIC_API_KEY: 'sk-inherited',
      FROM_AGENT: 'agent',
      HOME: '/other',
      FROM_SESSION: 'session',
    });
    // What the agent ends up with: the private variables are exported over the base.
    expect(plan.env).toMatchObject({ PATH: '/usr/bin', HOME: '/other', FROM_AGENT: 'agent', ORCHCTL_RUN: '2' });
  });

  it('an inherited ORCHCTL_* variable is dropped', () => {
    const plan = buildLaunch(input({}, { inheritedEnv: { ORCHCTL_HOME: '/h', ORCHCTL_RUN: '9' } }));
    expect(plan.env.ORCHCTL_HOME).toBeUndefined();
    expect(plan.env.ORCHCTL_RUN).toBe('2');
  });
});

describe('the agent base environment and inheritEnv patterns', () => {
  it('a name matches itself only; a pattern ending in * matches by prefix', () => {
    expect(envNameMatches('GITHUB_TOKEN', ['GITHUB_TOKEN'])).toBe(true);
    expect(envNameMatches('GITHUB_TOKEN_2', ['GITHUB_TOKEN'])).toBe(false);
    expect(envNameMatches('ANTHROPIC_BASE_URL', ['ANTHROPIC_*'])).toBe(true);
    expect(envNameMatches('MY_ANTHROPIC_KEY', ['ANTHROPIC_*'])).toBe(false);
  });

  it('pickEnv takes only the matching, set variables', () => {
    const env = { PATH: '/bin', LC_ALL: 'C', LC_TIME: 'C', SECRET_FOR_CONTROLLER: 's', HOME: undefined };
    expect(pickEnv(BASE_ENV, env)).toEqual({ PATH: '/bin', LC_ALL: 'C', LC_TIME: 'C' });
    expect(pickEnv([], env)).toEqual({});
  });
});

describe('composePrompt', () => {
  it('puts the system prompt first, then the task, separated by a blank line', () => {
    expect(composePrompt('You are a careful engineer.', 'Fix the bug.')).toBe(
      'You are a careful engineer.\n\nFix the bug.\n',
    );
  });

  it('puts extra sections between the system prompt and the task', () => {
    expect(composePrompt('SYS', 'TASK', ['extra one', 'extra two'])).toBe('SYS\n\nextra one\n\nextra two\n\nTASK\n');
  });

  it('trims each part and skips empty ones', () => {
    expect(composePrompt('  \n SYS \n\n', '\n TASK \n')).toBe('SYS\n\nTASK\n');
    expect(composePrompt(undefined, 'TASK')).toBe('TASK\n');
    expect(composePrompt('SYS', undefined)).toBe('SYS\n');
    expect(composePrompt('   ', 'TASK', ['', '  '])).toBe('TASK\n');
  });

  it('keeps inner newlines and special characters', () => {
    expect(composePrompt('line 1\nline 2', NASTY.trim())).toBe(`line 1\nline 2\n\n${NASTY.trim()}\n`);
  });

  it('always ends with exactly one newline', () => {
    expect(composePrompt(undefined, undefined)).toBe('\n');
    expect(composePrompt('a\n\n\n', undefined).endsWith('a\n')).toBe(true);
  });
});
