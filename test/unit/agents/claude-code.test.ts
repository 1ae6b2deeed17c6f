/** The Claude Code transcript normaliser, on the transcript recorded from the real CLI (2.1.330). */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  claudeSessionId,
  claudeSettings,
  claudeTranscriptPath,
  newTranscriptState,
  transcriptEvents,
} from '../../../controller/agents/claude-code.js';
import type { NewEvent } from '../../../controller/store/eventlog.js';
import { fixturesDir } from '../../support/claude-code.js';

const lines = fs
  .readFileSync(path.join(fixturesDir(), 'transcript.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Record<string, unknown>);

function normalise(): NewEvent[] {
  const st = newTranscriptState();
  return lines.flatMap((l) => transcriptEvents(l, 1, st));
}

describe('Claude Code transcript → events', () => {
  const events = normalise();

  it('turns typed prompts into numbered user messages, multi-line text kept', () => {
    const users = events.filter((e) => e.type === 'user_message' && !('interrupt' in e && e.interrupt));
    expect(users.length).toBeGreaterThanOrEqual(2);
    expect(users[0]).toMatchObject({ type: 'user_message', index: 0, source: 'transcript', run: 1 });
    expect((users[0] as { text: string }).text).toContain('\n(second line');
    expect((users[1] as { index: number }).index).toBe(1);
  });

  it('labels tool results with the tool and command of their tool_use, exit status first', () => {
    const results = events.filter((e) => e.type === 'tool_result') as Extract<NewEvent, { type: 'tool_result' }>[];
    const ok = results.find((r) => r.command?.startsWith('git add hello.txt'));
    expect(ok).toMatchObject({ tool: 'Bash', isError: false, exitCode: 0 });
    expect(ok!.output).toMatch(/spike: add hello/);
    const failed = results.find((r) => r.command === 'ls /nonexistent-orchctl-spike');
    expect(failed).toMatchObject({ tool: 'Bash', isError: true, exitCode: 2 });
    expect(failed!.output).toMatch(/No such file or directory/);
  });

  it('keeps assistant text with token usage and the stop reason', () => {
    const texts = events.filter((e) => e.type === 'assistant_message') as Extract<
      NewEvent,
      { type: 'assistant_message' }
    >[];
    const done = texts.find((t) => t.text.startsWith('Committed hello.txt'));
    expect(done?.stopReason).toBe('end_turn');
    expect(done?.usage?.inputTokens).toBeGreaterThan(10_000);
  });

  it('marks interrupt lines as the agent’s own markers, not messages a person wrote', () => {
    const st = newTranscriptState();
    const [e] = transcriptEvents(
      {
        type: 'user',
        timestamp: '2026-11-22T00:00:00Z',
        message: { role: 'user', content: '[Request interrupted by user for tool use]' },
      },
      2,
      st,
    );
    expect(e).toMatchObject({ type: 'user_message', interrupt: true, run: 2 });
    expect((e as { index?: number }).index).toBeUndefined();
    expect(st.users).toBe(0);
  });

  it('skips attachments, meta lines, sidechains and bookkeeping lines', () => {
    const st = newTranscriptState();
    expect(transcriptEvents({ type: 'attachment', attachment: {} }, 1, st)).toEqual([]);
    expect(transcriptEvents({ type: 'user', isMeta: true, message: { content: 'x' } }, 1, st)).toEqual([]);
    expect(
      transcriptEvents(
        { type: 'assistant', isSidechain: true, message: { content: [{ type: 'text', text: 'x' }] } },
        1,
        st,
      ),
    ).toEqual([]);
    expect(transcriptEvents({ type: 'last-prompt' }, 1, st)).toEqual([]);
  });

  it('bounds long tool output, keeping its head and tail', () => {
    const st = newTranscriptState();
    st.tools.set('t1', { tool: 'Bash', command: 'npm test' });
    const long = `start\n${'x'.repeat(50_000)}\nFAIL the end`;
    const [e] = transcriptEvents(
      {
        type: 'user',
        message: {
          content: [{ type: 'tool_result', tool_use_id: 't1', content: `Exit code 1\n${long}`, is_error: true }],
        },
      },
      1,
      st,
    );
    const out = (e as { output: string }).output;
    expect(out.length).toBeLessThan(9000);
    expect(out).toMatch(/^Exit code 1/);
    expect(out).toMatch(/FAIL the end$/);
  });
});

describe('Claude Code launch pieces', () => {
  it('derives a stable UUID per session run', () => {
    const a = claudeSessionId('0b7c9d3e-1111-2222-3333-444455556666', 3);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(claudeSessionId('0b7c9d3e-1111-2222-3333-444455556666', 3)).toBe(a);
    expect(claudeSessionId('0b7c9d3e-1111-2222-3333-444455556666', 4)).not.toBe(a);
  });

  it('encodes the working directory as Claude Code does for the transcript path', () => {
    expect(claudeTranscriptPath('/h/.claude', '/tmp/orchctl-claude-spike/project', 'id')).toBe(
      '/h/.claude/projects/-tmp-orchctl-claude-spike-project/id.jsonl',
    );
    expect(claudeTranscriptPath('/h/.claude', '/tmp/a.b_c', 'id')).toBe('/h/.claude/projects/-tmp-a-b-c/id.jsonl');
    expect(claudeTranscriptPath('/h/.claude', `/${'x'.repeat(250)}`, 'id')).toBeUndefined();
  });

  it('names a permission mode in the settings file, so the auto-mode opt-in dialog never opens', () => {
    const hook = ['/usr/bin/node', '/opt/orchctl', 'hook'];
    const mode = (args?: string[], settings?: Record<string, unknown>) =>
      (claudeSettings({ kind: 'claude-code', settings }, hook, args).permissions as { defaultMode?: string })
        .defaultMode;
    expect(mode(['--permission-mode', 'manual'])).toBe('default');
    expect(mode(['--permission-mode=acceptEdits'])).toBe('acceptEdits');
    expect(mode(['--permission-mode', 'plan', '--verbose'])).toBe('plan');
    expect(mode(undefined)).toBe('default');
    expect(mode(['--permission-mode', 'no-such-mode'])).toBe('default');
    // The Agent's own settings win; its other permission keys stay.
    expect(
      claudeSettings(
        { kind: 'claude-code', settings: { permissions: { defaultMode: 'auto', allow: ['Bash(ls)'] } } },
        hook,
        ['--permission-mode', 'manual'],
      ).permissions,
    ).toEqual({ defaultMode: 'auto', allow: ['Bash(ls)'] });
  });

  it('installs the hook command on every event, quoted for sh, and merges the Agent’s settings', () => {
    const s = claudeSettings(
      {
        kind: 'claude-code',
        settings: {
          permissions: { defaultMode: 'default' },
          hooks: { Stop: [{ hooks: [{ type: 'command', command: 'mine' }] }] },
        },
      },
      ['/usr/bin/node', "/opt/it's/bin/orchctl", 'hook'],
    );
    const hooks = s.hooks as Record<string, { matcher?: string; hooks: { command: string }[] }[]>;
    expect(Object.keys(hooks)).toEqual(
      expect.arrayContaining([
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse',
        'PermissionRequest',
        'PostToolUse',
        'PostToolUseFailure',
        'Notification',
        'Stop',
        'StopFailure',
        'SessionEnd',
      ]),
    );
    expect(hooks.PreToolUse[0].matcher).toBe('*');
    expect(hooks.SessionStart[0].hooks[0].command).toBe(`'/usr/bin/node' '/opt/it'\\''s/bin/orchctl' 'hook'`);
    expect(hooks.Stop).toHaveLength(2);
    expect(s.permissions).toEqual({ defaultMode: 'default' });
    // The statusline: the exact context figure and rate limits (agents/statusline.ts).
    expect(s.statusLine).toEqual({
      type: 'command',
      command: `'/usr/bin/node' '/opt/it'\\''s/bin/orchctl' 'hook' statusline`,
      padding: 0,
    });
    expect(Object.keys(hooks)).toEqual(expect.arrayContaining(['PreCompact', 'PostCompact']));
  });
});
