/**
 * The context sequence (context.ts) with a fake clock: handoff → compact → (clear → rehydrate), at
 * idle only, with its timeouts, maxActionsPerRun, the statusline's figure and rate limits, and a
 * restarted controller going on from status.context.step.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSessionStatus } from '../../../../controller/api/session.js';
import type { ContextPolicy } from '../../../../controller/api/session-policy.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';
import {
  type ContextEffect,
  type ContextInput,
  planContext,
} from '../../../../controller/reconcilers/session/context.js';
import { HANDOFF_HEADING, rehydratePrompt } from '../../../../controller/reconcilers/session/rehydrate.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const iso = (t: number) => new Date(t).toISOString();
const CLAUDE = { compact: '/compact', clear: '/clear' };
const POLICY: ContextPolicy = { checkpointAt: 50, handoffTimeout: '3m', compactFocus: 'keep the plan' };
let seq = 0;

function hook(hookName: string, t: number, payload: Record<string, unknown> = {}): AgentEvent {
  return { seq: ++seq, ts: iso(t), run: 1, source: 'hook', type: 'hook', hook: hookName, payload };
}

/** A running session at `percent` whose agent ended a turn at `idleSince`. */
function status(percent: number, idleSince = T0 - 1000): AgentSessionStatus {
  return {
    run: 1,
    phase: 'Running',
    workspace: '/ws/1',
    agent: {
      run: 1,
      position: { seq: 0, offset: 0 },
      counts: {},
      hooks: true,
      turns: 1,
      state: 'idle',
      reported: { state: 'idle', since: iso(idleSince), detail: 'turn-done' },
    },
    context: {
      run: 1,
      usedTokens: percent * 10_000,
      windowTokens: 1_000_000,
      percent,
      lastStep: 0,
      source: 'statusline',
    },
  } as AgentSessionStatus;
}

/** One pass; the status is changed in place, as the plan does. */
function pass(s: AgentSessionStatus, now: number, extra: Partial<ContextInput> = {}): ContextEffect[] {
  const base = { status: s, policy: POLICY, commands: CLAUDE, events: [], ready: true, now };
  return planContext({ ...base, lastEvaluation: s.lastEvaluation, ...extra }).effects;
}
const kinds = (fx: ContextEffect[]) => fx.map((e) => (e.kind === 'event' ? `event:${e.reason}` : e.kind));
const actions = (s: AgentSessionStatus) => (s.context?.actions ?? []).map((a) => a.type);
/** The agent ended its turn at `t` (a Stop hook, folded into status.agent). */
function turnDone(s: AgentSessionStatus, t: number): void {
  s.agent!.reported = { state: 'idle', since: iso(t), detail: 'turn-done' };
  s.agent!.state = 'idle';
}
const statusline = (usedPercent: number | undefined, stamp: string) => ({
  stamp,
  record: { usedPercent, windowTokens: 1_000_000, rateLimits: [] },
});

describe('the context sequence', () => {
  it('does nothing below checkpointAt, and nothing without a context policy', () => {
    const s = status(40);
    expect(pass(s, T0)).toEqual([]);
    const t = status(60);
    expect(planContext({ status: t, commands: CLAUDE, events: [], ready: true, now: T0 }).effects).toEqual([]);
    expect(t.context?.step).toBeUndefined();
  });

  it('asks for the handoff only at an idle agent, never mid-turn', () => {
    const s = status(55);
    expect(pass(s, T0, { ready: false })).toEqual([]);
    expect(s.context?.step).toBeUndefined();
    const fx = pass(s, T0 + 1000);
    expect(kinds(fx)).toEqual(['deliver', 'event:ContextCheckpoint']);
    expect(fx[0]).toMatchObject({ kind: 'deliver', text: expect.stringContaining('/ws/1/handoff.md') });
    expect(s.context?.step).toMatchObject({ name: 'Handoff', sentAt: iso(T0 + 1000), deadline: iso(T0 + 181_000) });
    expect(s.context?.actionsThisRun).toBe(1);
  });

  it('the handoff request says what comes next: compacted only when the agent can compact', () => {
    const text = (extra: Partial<ContextInput>) => {
      const fx = pass(status(55), T0, extra);
      return (fx[0] as { text: string }).text;
    };
    expect(text({})).toContain('55% full and will be compacted.');
    const clear = text({ policy: { ...POLICY, action: 'ClearAndRehydrate' } });
    expect(clear).toContain('will be cleared and the work will go on from your handoff');
    expect(clear).not.toContain('compacted');
    const none = text({ commands: {} });
    expect(none).toContain('a new run will continue from your handoff');
    expect(none).not.toMatch(/will be compacted/);
    expect(text({ commands: { clear: '/clear' } })).toContain('will be cleared');
  });

  it('handoff written + Stop → /compact at idle → PostCompact and the figure dropping → Compacted', () => {
    const s = status(55);
    pass(s, T0);
    // The file alone is not enough: the turn must have ended after the request.
    expect(pass(s, T0 + 5000, { handoff: { mtimeMs: T0 + 4000, text: 'state' } })).toEqual([]);
    turnDone(s, T0 + 6000);
    const fx = pass(s, T0 + 6500, { handoff: { mtimeMs: T0 + 4000, text: 'state' } });
    expect(kinds(fx)).toEqual(['event:HandoffWritten', 'command', 'event:CompactSent']);
    expect(fx[1]).toEqual({ kind: 'command', text: '/compact keep the plan' });
    expect(s.context?.step).toMatchObject({ name: 'Compact', sentAt: iso(T0 + 6500), percent: 55 });
    // Confirmed by the hook, but the figure has not dropped yet: still waiting.
    const confirm = [hook('PreCompact', T0 + 7000, { trigger: 'manual' }), hook('PostCompact', T0 + 9000)];
    expect(pass(s, T0 + 9100, { events: confirm })).toEqual([]);
    expect(s.context?.step?.confirmedAt).toBe(iso(T0 + 9000));
    const done = pass(s, T0 + 9200, { statusline: statusline(3, 'a') });
    expect(kinds(done)).toEqual(['event:Compacted']);
    expect(s.context?.step).toBeUndefined();
    expect(s.context?.percent).toBe(3);
    expect(actions(s)).toEqual(['HandoffRequested', 'HandoffWritten', 'CompactSent', 'Compacted']);
  });

  it('SessionStart(compact) confirms too', () => {
    const s = status(55);
    pass(s, T0);
    turnDone(s, T0 + 2000);
    pass(s, T0 + 2100, { handoff: { mtimeMs: T0 + 1500, text: 'h' } });
    pass(s, T0 + 3000, {
      events: [hook('SessionStart', T0 + 2900, { source: 'compact' })],
      statusline: statusline(2, 'b'),
    });
    expect(actions(s).at(-1)).toBe('Compacted');
  });

  it('no handoff within handoffTimeout: the checkpoint summary stands in; /compact waits for idle', () => {
    const s = status(55);
    pass(s, T0);
    s.agent!.state = 'busy';
    expect(pass(s, T0 + 179_000, { ready: false })).toEqual([]);
    const fx = pass(s, T0 + 181_000, { ready: false, checkpointSummary: 'did X' });
    expect(kinds(fx)).toEqual(['event:HandoffTimedOut']);
    expect(fx[0]).toMatchObject({ warning: true, message: expect.stringContaining('checkpoint summary stands in') });
    // Busy: the command is not typed (no deadline runs until it is).
    expect(s.context?.step).toMatchObject({ name: 'Compact' });
    expect(s.context?.step?.sentAt).toBeUndefined();
    expect(pass(s, T0 + 600_000, { ready: false })).toEqual([]);
    expect(kinds(pass(s, T0 + 601_000))).toEqual(['command', 'event:CompactSent']);
  });

  it('compaction fails (StopFailure) → /clear → SessionStart(clear) → rehydrate prompt → UserPromptSubmit', () => {
    const s = status(55);
    s.lastEvaluation = {
      name: 'e1',
      run: 1,
      score: 4,
      recommendation: 'continue',
      outcome: 'partial',
      evaluatedAt: iso(T0),
    } as AgentSessionStatus['lastEvaluation'];
    pass(s, T0);
    turnDone(s, T0 + 2000);
    const handoff = { mtimeMs: T0 + 1500, text: '# State\nhalf done\n# Next\nthe rest' };
    pass(s, T0 + 2100, { handoff });
    const failed = pass(s, T0 + 5000, {
      events: [
        hook('PreCompact', T0 + 3000, { trigger: 'manual' }),
        hook('StopFailure', T0 + 4000, { error: 'server_error', last_assistant_message: 'API Error: 500 boom' }),
      ],
    });
    expect(kinds(failed)).toEqual(['event:CompactFailed', 'command', 'event:ClearSent']);
    expect(failed[0]).toMatchObject({ warning: true, message: 'compaction failed: API Error: 500 boom' });
    expect(failed[1]).toEqual({ kind: 'command', text: '/clear' });
    const cleared = pass(s, T0 + 6000, {
      events: [
        hook('SessionEnd', T0 + 5500, { reason: 'clear' }),
        hook('SessionStart', T0 + 5600, { source: 'clear' }),
      ],
      statusline: statusline(undefined, 'c'),
      handoff,
      checkpointSummary: 'Title: did the first half',
    });
    expect(kinds(cleared)).toEqual(['event:Cleared', 'deliver']);
    const text = (cleared[1] as { text: string }).text;
    expect(text).toContain(HANDOFF_HEADING);
    expect(text).toContain('half done');
    expect(text).toContain('did the first half');
    expect(text).toContain('Run 1 was judged 4/5');
    expect(s.context?.percent).toBe(0); // used_percentage is null right after /clear
    const delivered = pass(s, T0 + 8000, { events: [hook('UserPromptSubmit', T0 + 7000, { prompt: text })] });
    expect(kinds(delivered)).toEqual(['event:Rehydrated']);
    expect(s.context?.step).toBeUndefined();
    expect(actions(s)).toEqual([
      'HandoffRequested',
      'HandoffWritten',
      'CompactSent',
      'CompactFailed',
      'ClearSent',
      'Cleared',
      'RehydrateDelivered',
    ]);
  });

  it('a compaction with no confirmation before its deadline fails; so does one whose figure never drops', () => {
    const s = status(55);
    pass(s, T0);
    turnDone(s, T0 + 1000);
    pass(s, T0 + 1100, { handoff: { mtimeMs: T0 + 500, text: 'h' } });
    const fx = pass(s, T0 + 1100 + 300_000);
    expect(fx[0]).toMatchObject({ reason: 'CompactFailed', message: expect.stringContaining('no PostCompact') });
    const t = status(55);
    pass(t, T0);
    turnDone(t, T0 + 1000);
    pass(t, T0 + 1100, { handoff: { mtimeMs: T0 + 500, text: 'h' } });
    pass(t, T0 + 2000, { events: [hook('PostCompact', T0 + 1900)], statusline: statusline(56, 'x') });
    const late = pass(t, T0 + 1100 + 300_000);
    expect(late[0]).toMatchObject({ reason: 'CompactFailed', message: expect.stringContaining('did not drop') });
  });

  it('ClearAndRehydrate skips /compact', () => {
    const s = status(55);
    const policy = { ...POLICY, action: 'ClearAndRehydrate' as const };
    pass(s, T0, { policy });
    turnDone(s, T0 + 1000);
    const fx = pass(s, T0 + 1100, { policy, handoff: { mtimeMs: T0 + 500, text: 'h' } });
    expect(kinds(fx)).toEqual(['event:HandoffWritten', 'command', 'event:ClearSent']);
    expect(fx[1]).toEqual({ kind: 'command', text: '/clear' });
  });

  it('an agent with neither command gets a new run with the rehydrate prompt; so does a /clear never confirmed', () => {
    const s = status(55);
    pass(s, T0, { commands: undefined });
    const fx = pass(s, T0 + 200_000, { commands: undefined });
    expect(kinds(fx)).toEqual(['event:HandoffTimedOut', 'restart', 'event:RestartedWithRehydrate']);
    expect(fx[1]).toMatchObject({ kind: 'restart', note: expect.stringContaining('55% full') });
    expect(s.context?.step).toBeUndefined();
    const t = status(55);
    pass(t, T0, { policy: { ...POLICY, action: 'ClearAndRehydrate' } });
    turnDone(t, T0 + 1000);
    pass(t, T0 + 1100, {
      policy: { ...POLICY, action: 'ClearAndRehydrate' },
      handoff: { mtimeMs: T0 + 500, text: 'h' },
    });
    expect(kinds(pass(t, T0 + 1100 + 61_000))).toEqual(['restart', 'event:RestartedWithRehydrate']);
  });

  it('maxActionsPerRun bounds the sequences of a run', () => {
    const s = status(55);
    const policy = { ...POLICY, maxActionsPerRun: 1 };
    pass(s, T0, { policy });
    turnDone(s, T0 + 1000);
    pass(s, T0 + 1100, { policy, handoff: { mtimeMs: T0 + 500, text: 'h' } });
    // Compacted, but the figure is still over checkpointAt: no second sequence.
    pass(s, T0 + 2000, { policy, events: [hook('PostCompact', T0 + 1900)], statusline: statusline(52, 'y') });
    expect(actions(s).at(-1)).toBe('Compacted');
    expect(pass(s, T0 + 10_000, { policy })).toEqual([]);
    expect(s.context?.step).toBeUndefined();
    expect(s.context?.actionsThisRun).toBe(1);
  });

  it('crash-only: a restarted controller goes on from status.context.step, or gives up at its deadline', () => {
    const s = status(55);
    pass(s, T0);
    turnDone(s, T0 + 1000);
    pass(s, T0 + 1100, { handoff: { mtimeMs: T0 + 500, text: 'h' } });
    // What the store holds; a new controller (no memory) reads it back.
    const stored: AgentSessionStatus = JSON.parse(JSON.stringify(s));
    expect(stored.context?.step).toMatchObject({ name: 'Compact', sentAt: iso(T0 + 1100) });
    // The confirmation arrived while no controller ran: it is in the log after the committed position.
    const resumed = pass(stored, T0 + 60_000, {
      events: [hook('PostCompact', T0 + 3000)],
      statusline: statusline(4, 'z'),
    });
    expect(kinds(resumed)).toEqual(['event:Compacted']);
    // Or nothing arrived and the deadline passed while it was down: it gives up, and clears.
    const other: AgentSessionStatus = JSON.parse(JSON.stringify(s));
    expect(kinds(pass(other, T0 + 400_000))).toEqual(['event:CompactFailed', 'command', 'event:ClearSent']);
    // A step's deadline is when to look again.
    const again: AgentSessionStatus = JSON.parse(JSON.stringify(s));
    const out = planContext({
      status: again,
      policy: POLICY,
      commands: CLAUDE,
      events: [],
      ready: true,
      now: T0 + 2000,
    });
    expect(out.wakeAt).toBe(T0 + 1100 + 300_000);
  });

  it('records an automatic compaction (PreCompact auto) with or without a policy', () => {
    const s = status(70);
    const fx = planContext({
      status: s,
      commands: CLAUDE,
      events: [hook('PreCompact', T0, { trigger: 'auto' })],
      ready: false,
      now: T0 + 100,
    }).effects;
    expect(kinds(fx)).toEqual(['event:AutoCompacted']);
    expect(actions(s)).toEqual(['AutoCompacted']);
  });
});

describe('the statusline', () => {
  it('gives the figure (preferred from then on), a ContextWindow Event per reportEvery step, and the stamp', () => {
    const s = { run: 1, phase: 'Running', agent: { run: 1, hooks: true } } as AgentSessionStatus;
    const fx = planContext({
      status: s,
      policy: { reportEvery: 25 },
      events: [],
      ready: false,
      now: T0,
      statusline: {
        stamp: '10:1',
        record: { usedPercent: 56, windowTokens: 1_000_000, usedTokens: 560_000, rateLimits: [] },
      },
    }).effects;
    expect(s.context).toMatchObject({
      source: 'statusline',
      percent: 56,
      usedTokens: 560_000,
      lastStep: 50,
      stamp: '10:1',
    });
    // Every step crossed, not only the highest (seed 003: a report at every step).
    expect(fx).toEqual([
      {
        kind: 'event',
        warning: false,
        reason: 'ContextWindow',
        message: 'context window 25% used (now 56%: 560000 of 1000000 tokens)',
      },
      {
        kind: 'event',
        warning: false,
        reason: 'ContextWindow',
        message: 'context window 50% used (now 56%: 560000 of 1000000 tokens)',
      },
    ]);
  });

  it('puts rate_limits.*.resets_at into status.agent.quota.resetsAt; a window at 100 % is a limit reached', () => {
    const s = status(10);
    const resets = Math.floor(T0 / 1000) + 3600;
    planContext({
      status: s,
      events: [],
      ready: true,
      now: T0,
      statusline: {
        stamp: '1:1',
        record: {
          usedPercent: 10,
          windowTokens: 1_000_000,
          rateLimits: [
            { window: 'five_hour', usedPercent: 100, resetsAt: resets },
            { window: 'seven_day', usedPercent: 20, resetsAt: resets + 86_400 },
          ],
        },
      },
    });
    expect(s.agent?.quota).toMatchObject({
      resetsAt: iso(resets * 1000),
      message: expect.stringContaining('five_hour'),
    });
    // A limit seen elsewhere without a reset time takes the window nearest its limit.
    const t = status(10);
    t.context!.rateLimits = [{ window: 'seven_day', usedPercent: 90, resetsAt: iso(T0 + 7_200_000) }];
    t.agent!.quota = { since: iso(T0), message: 'API Error: 429' };
    planContext({ status: t, events: [], ready: true, now: T0 });
    expect(t.agent?.quota?.resetsAt).toBe(iso(T0 + 7_200_000));
  });
});

describe('the rehydrate prompt', () => {
  it('is the handoff, else the checkpoint summary standing in, bounded and without control characters', () => {
    const text = rehydratePrompt({ handoff: `a\u0003b${'x'.repeat(20_000)}`, reason: 'restarted' });
    expect(text).toContain(HANDOFF_HEADING);
    expect(text).not.toContain('\u0003');
    expect(text.length).toBeLessThan(9000);
    expect(rehydratePrompt({ checkpointSummary: 'did X', reason: 'cleared' })).toContain('stands in');
    expect(rehydratePrompt({ reason: 'restarted' })).toBe('');
    expect(rehydratePrompt({ reason: 'cleared' })).toContain('no handoff was written');
  });
});
