import { describe, expect, it, vi } from 'vitest';

// Every phrase chrono-node is asked to read: the parser's work is bounded by these, not by a timing figure.
const phrases = vi.hoisted(() => [] as string[]);
vi.mock('chrono-node/en', async (importOriginal) => {
  const real = await importOriginal<typeof import('chrono-node/en')>();
  return {
    ...real,
    parseDate: (text: string, ...rest: Parameters<typeof real.parseDate> extends [string, ...infer R] ? R : never) => {
      phrases.push(text);
      return real.parseDate(text, ...rest);
    },
  };
});
import { jsonlTranscript } from '../../../../controller/agents/claude-code.js';
import { offsetMinutes, parseResetTime } from '../../../../controller/reconcilers/session/reset-time.js';

// 2026-11-24 14:30 UTC = 15:30 in Berlin (CET, +01:00).
const NOW = Date.parse('2026-11-24T14:30:00Z');
const EPOCH = jsonlTranscript.limitNotice?.resetEpoch;
const at = (text: string, tz = 'UTC') => {
  const t = parseResetTime(text, NOW, tz, EPOCH);
  return t === undefined ? undefined : new Date(t).toISOString();
};

describe('parseResetTime', () => {
  it("reads Claude Code's clock times as the next such time in the agent's zone", () => {
    expect(at("You've reached your usage limit · resets 3am")).toBe('2026-11-25T03:00:00.000Z');
    expect(at('5-hour limit reached ∙ resets 3pm')).toBe('2026-11-24T15:00:00.000Z');
    expect(at('5-hour limit reached ∙ resets 3pm', 'Europe/Berlin')).toBe('2026-11-25T14:00:00.000Z');
    expect(at('limit · resets 4:15pm', 'Europe/Berlin')).toBe('2026-11-24T15:15:00.000Z');
  });

  it('reads Codex\'s "Try again at" clock time; one to the minute that has just passed is now, not tomorrow', () => {
    expect(at('■ You’ve hit your usage limit. Try again at 3:05 PM.')).toBe('2026-11-24T15:05:00.000Z');
    expect(at('■ You’ve hit your usage limit. Try again at 4:05 PM.', 'Europe/Berlin')).toBe(
      '2026-11-24T15:05:00.000Z',
    );
    // Codex rounds the reset down to the minute: 14:30 read at 14:30:40 means it has just reset.
    const t = parseResetTime('You’ve hit your usage limit. Try again at 2:30 PM.', NOW + 40_000, 'UTC');
    expect(t).toBe(NOW + 40_000);
    expect(at('Try again later.')).toBeUndefined();
  });

  it("reads Codex's dated form, shown when the reset falls on another day (recorded from 0.171.0 at 23:36)", () => {
    const t = parseResetTime('■ You’ve hit your usage limit. Try again at Nov 27th, 2026 12:36 AM.', NOW, 'UTC');
    expect(new Date(t!).toISOString()).toBe('2026-11-27T00:36:00.000Z');
  });

  it('a zone named in the text wins over the default', () => {
    expect(at('Claude usage limit reached. Your limit will reset at 6pm (Europe/Berlin)')).toBe(
      '2026-11-24T17:00:00.000Z',
    );
    expect(at('Your limit will reset at 6pm (America/New_York)', 'Europe/Berlin')).toBe('2026-11-24T23:00:00.000Z');
  });

  it('reads a span from now', () => {
    expect(at('Your usage resets in approximately 4 hours.')).toBe('2026-11-24T18:30:00.000Z');
    expect(at('Your usage resets in 10 seconds.')).toBe('2026-11-24T14:30:10.000Z');
  });

  it("reads the epoch seconds of older transcripts, in the driver's form only", () => {
    expect(at('Claude AI usage limit reached|1795617000')).toBe(new Date(1795617000 * 1000).toISOString());
    expect(parseResetTime('Claude AI usage limit reached|1795617000', NOW, 'UTC')).toBeUndefined();
  });

  it('takes only the words after "reset": other times on screen are not it', () => {
    expect(at('✳ Working… (2m 18s · ↓ 4.8k tokens)\nAPI Error: Request rejected (429) · rate limit')).toBeUndefined();
    expect(at("You've hit your limit. Please wait and try again later.")).toBeUndefined();
    expect(at('Stop and wait for limit to reset')).toBeUndefined();
  });

  it('refuses what cannot be a reset: stale, or further than a week ahead', () => {
    expect(at('Claude AI usage limit reached|1700000000')).toBeUndefined();
    expect(at('usage resets in 30 days')).toBeUndefined();
  });

  it('the last notice on screen is the current one', () => {
    expect(at('resets 3am\n…\nYour usage resets in approximately 1 hour.')).toBe('2026-11-24T15:30:00.000Z');
  });

  it('is bounded on long and hostile text: at most 4 phrases of at most 80 characters are parsed', () => {
    const long = `${'resets '.repeat(20_000)}resets in 2 hours`;
    phrases.length = 0;
    expect(at(long)).toBe('2026-11-24T16:30:00.000Z');
    expect(phrases.length).toBeGreaterThan(0);
    expect(phrases.length).toBeLessThanOrEqual(4);
    expect(Math.max(...phrases.map((p) => p.length))).toBeLessThanOrEqual(80);
  });

  it('knows zone offsets, and not unknown zones', () => {
    expect(offsetMinutes('Europe/Berlin', NOW)).toBe(60);
    expect(offsetMinutes('America/New_York', NOW)).toBe(-300);
    expect(offsetMinutes('UTC', NOW)).toBe(0);
    expect(offsetMinutes('Mars/Olympus', NOW)).toBeUndefined();
  });
});

describe('status.agent.quota.resetsAt from the transcript and hooks', () => {
  it('an API error or the usage-limit line in the transcript says when it resets', async () => {
    const { foldEvents, newObservation } = await import('../../../../controller/reconcilers/session/agent-state.js');
    const { LOG_START } = await import('../../../../controller/store/eventlog.js');
    const ts = '2026-11-24T14:30:00.000Z';
    const o = foldEvents(
      newObservation(1, LOG_START),
      [{ seq: 1, run: 1, ts, type: 'assistant_message', text: 'Claude AI usage limit reached|1795617000' }] as never,
      LOG_START,
      jsonlTranscript.limitNotice,
    );
    expect(o.quota).toEqual({
      since: ts,
      message: 'Claude AI usage limit reached|1795617000',
      resetsAt: new Date(1795617000 * 1000).toISOString(),
    });
    const stop = foldEvents(
      newObservation(1, LOG_START),
      [
        {
          seq: 1,
          run: 1,
          ts,
          type: 'hook',
          hook: 'StopFailure',
          payload: { error: 'rate_limit', last_assistant_message: 'API Error: 429 · Your usage resets in 2 hours' },
        },
      ] as never,
      LOG_START,
      jsonlTranscript.limitNotice,
    );
    expect(stop.quota?.resetsAt).toBe('2026-11-24T16:30:00.000Z');
  });
});
