/**
 * status.usage: the run's token sums folded from the event log (usage.ts, through agent-pass.ts)
 * and the cost estimate from the Agent's price table. The transcript is the recorded Claude Code
 * 2.1.330 one, read by the real transcript reader, so the duplicate-lines rule is checked on the
 * agent's own output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelPrice } from '../../../../controller/api/agent.js';
import type { AgentSessionStatus } from '../../../../controller/api/session.js';
import { newTranscriptState, transcriptEvents } from '../../../../controller/agents/claude-code.js';
import { foldAgent, foldRunUsage, type AgentStatus } from '../../../../controller/reconcilers/session/agent-pass.js';
import { foldUsage, priceFor } from '../../../../controller/reconcilers/session/usage.js';
import { type AgentEvent, LOG_START, type LogPosition } from '../../../../controller/store/eventlog.js';
import { fixturesDir } from '../../../support/claude-code.js';

const raw = fs
  .readFileSync(path.join(fixturesDir(), 'transcript.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The fixture's events for `run`, numbered as the log numbers them. */
function events(run = 1): AgentEvent[] {
  const st = newTranscriptState();
  return raw.flatMap((l) => transcriptEvents(l, run, st)).map((e, i) => ({ ...e, seq: i + 1 }) as AgentEvent);
}
const pos = (seq: number): LogPosition => ({ ...LOG_START, seq });

/** The expected sums, worked out apart from the fold: each message id's last reported usage, once. */
function expected() {
  const byId = new Map<string, Record<string, number>>();
  for (const l of raw) {
    const m = l.message as { id?: string; usage?: Record<string, number> } | undefined;
    if (l.type === 'assistant' && m?.id && m.usage) byId.set(m.id, m.usage);
  }
  const sum = (k: string) => [...byId.values()].reduce((a, u) => a + (u[k] ?? 0), 0);
  return {
    messages: byId.size,
    inputTokens: sum('input_tokens'),
    outputTokens: sum('output_tokens'),
    cacheReadTokens: sum('cache_read_input_tokens'),
    cacheCreationTokens: sum('cache_creation_input_tokens'),
  };
}

const PRICES: ModelPrice[] = [
  { model: 'claude-opus-*', inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25 },
  { model: 'claude-opus-5-5', inputPerMTok: 10, outputPerMTok: 50, cacheReadPerMTok: 1, cacheWritePerMTok: 12.5 },
];

describe('the usage fold on the recorded Claude Code transcript', () => {
  const evs = events();
  const want = expected();

  it('the recorded transcript repeats a message’s usage on each of its lines: each message counts once', () => {
    const withUsage = evs.filter((e) => (e.type === 'assistant_message' || e.type === 'tool_use') && e.usage);
    expect(withUsage.length).toBeGreaterThan(want.messages); // text + tool_use lines share one message id
    const u = foldUsage(undefined, 1, evs, undefined);
    const { messages: _, ...sums } = want;
    expect(u).toMatchObject({ run: 1, ...sums, model: 'claude-opus-5-5', priced: false });
    expect(u.totalTokens).toBe(want.inputTokens + want.outputTokens + want.cacheReadTokens + want.cacheCreationTokens);
    expect(u.costUSD).toBeUndefined();
  });

  it('in any batching, the same sums (a message split across two reconciles counts once)', () => {
    for (let cut = 0; cut <= evs.length; cut++) {
      const first = foldUsage(undefined, 1, evs.slice(0, cut), undefined);
      const both = foldUsage(first, 1, evs.slice(cut), undefined);
      expect(both.totalTokens, `cut at ${cut}`).toBe(foldUsage(undefined, 1, evs, undefined).totalTokens);
    }
  });

  it('a streamed message whose figures grow adds only the growth; a new id counts anew', () => {
    const e = (id: string, out: number, seq: number): AgentEvent => ({
      seq,
      ts: '2026-11-24T00:00:00Z',
      run: 1,
      source: 'transcript',
      type: 'assistant_message',
      text: 'x',
      messageId: id,
      model: 'claude-opus-5-5',
      usage: { inputTokens: 100, outputTokens: out },
    });
    const u = foldUsage(undefined, 1, [e('a', 3, 1), e('a', 40, 2), e('a', 40, 3), e('b', 5, 4)], undefined);
    expect(u).toMatchObject({ inputTokens: 200, outputTokens: 45, totalTokens: 245 });
  });

  it('a new run starts from zero; events of another run are not counted', () => {
    const run1 = foldUsage(undefined, 1, evs, undefined);
    const run2 = foldUsage(run1, 2, [...evs, ...events(2).slice(0, 2)], undefined);
    expect(run2.run).toBe(2);
    expect(run2.inputTokens).toBeLessThan(run1.inputTokens);
    const { hourly, ...sums } = run2;
    const { hourly: fresh, ...alone } = foldUsage(undefined, 2, events(2).slice(0, 2), undefined);
    expect(sums).toEqual(alone);
    // The budget's ledger goes on across runs: run 1's hours and run 2's.
    const total = (h: typeof hourly) => (h ?? []).reduce((a, b) => a + b.tokens, 0);
    expect(total(hourly)).toBe(run1.totalTokens + alone.totalTokens);
    expect(total(fresh)).toBe(alone.totalTokens);
  });
});

describe('status.usage through the agent fold: exactly once across a restart', () => {
  const evs = events();
  const status = (agent?: AgentStatus, usage?: AgentSessionStatus['usage']): AgentSessionStatus => ({
    run: 1,
    conditions: [],
    startTime: '2026-11-24T00:00:00Z',
    ...(agent ? { agent } : {}),
    ...(usage ? { usage } : {}),
  });
  const pass = (s: AgentSessionStatus, batch: AgentEvent[]) => {
    const r = foldAgent({
      status: s,
      prev: s.agent,
      facts: { run: 1, events: batch, next: pos(batch.at(-1)?.seq ?? s.agent?.position.seq ?? 0) },
      agent: { command: ['claude'], pricing: PRICES },
      now: Date.parse('2026-11-24T00:01:00Z'),
    });
    return { ...s, agent: r.agent };
  };
  const launched: AgentStatus = { run: 1, position: LOG_START, counts: {}, hooks: false, turns: 0 };

  it('a restart re-reads from the committed position and counts nothing twice', () => {
    const cut = Math.floor(evs.length / 2);
    const committed = pass(status(launched), evs.slice(0, cut)); // written: sums + position together
    // A pass folded the rest but the controller died before its write: the next one starts from `committed`.
    pass(structuredClone(committed), evs.slice(cut));
    const restarted = pass(structuredClone(committed), evs.slice(cut));
    const once = pass(status(launched), evs);
    expect(restarted.usage).toEqual(once.usage);
    expect(restarted.usage?.inputTokens).toBe(expected().inputTokens);
    expect(restarted.agent.position.seq).toBe(evs.length);
  });

  it('sums left from an earlier run are not continued when the agent fold starts afresh', () => {
    const stale = foldUsage(undefined, 1, evs, undefined);
    expect(foldRunUsage(undefined, stale, 1, [], undefined).totalTokens).toBe(0);
    expect(foldRunUsage({ ...launched, run: 0 }, stale, 1, [], undefined).totalTokens).toBe(0);
    expect(foldRunUsage(launched, stale, 1, [], undefined).totalTokens).toBe(stale.totalTokens);
  });

  it('prices the run with the Agent’s table: the exact name before a glob', () => {
    const s = pass(status(launched), evs);
    const w = expected();
    const cost =
      (w.inputTokens * 10 + w.outputTokens * 50 + w.cacheReadTokens * 1 + w.cacheCreationTokens * 12.5) / 1e6;
    expect(s.usage).toMatchObject({ priced: true, model: 'claude-opus-5-5' });
    expect(s.usage?.costUSD).toBeCloseTo(cost, 6);
  });
});

describe('price lookup', () => {
  it('exact wins over a glob in any order; globs match whole names; unknown models are unpriced', () => {
    expect(priceFor('claude-opus-5-5', PRICES)?.inputPerMTok).toBe(10);
    expect(priceFor('claude-opus-4-1', PRICES)?.inputPerMTok).toBe(5);
    expect(priceFor('xclaude-opus-4', PRICES)).toBeUndefined();
    expect(priceFor('claude-sonnet-4', PRICES)).toBeUndefined();
    expect(priceFor('', PRICES)).toBeUndefined();
    expect(priceFor('claude-opus-1', undefined)).toBeUndefined();
    expect(priceFor('a.b', [{ ...PRICES[0], model: 'a.*' }])).toBeDefined();
    expect(priceFor('axb', [{ ...PRICES[0], model: 'a.b' }])).toBeUndefined(); // '.' is literal
  });

  it('a run using a model with no price is unpriced as a whole (no partial cost)', () => {
    const e = (model: string, seq: number): AgentEvent => ({
      seq,
      ts: '2026-11-24T00:00:00Z',
      run: 1,
      source: 'transcript',
      type: 'tool_use',
      tool: 'Bash',
      messageId: `m${seq}`,
      model,
      usage: { inputTokens: 1_000_000, outputTokens: 0 },
    });
    const priced = foldUsage(undefined, 1, [e('claude-opus-4', 1)], PRICES);
    expect(priced).toMatchObject({ priced: true, costUSD: 5 });
    const mixed = foldUsage(priced, 1, [e('gpt-x', 2)], PRICES);
    expect(mixed.priced).toBe(false);
    expect(mixed.costUSD).toBeUndefined();
    expect(mixed.byModel.map((b) => b.model)).toEqual(['claude-opus-4', 'gpt-x']);
  });
});

describe('the budget ledger (status.usage.hourly)', () => {
  const evs = events();
  const at = (ts: string, id: string, tokens: number, model = 'claude-opus-5-5', seq = 1): AgentEvent => ({
    seq,
    ts,
    run: 1,
    source: 'transcript',
    type: 'assistant_message',
    text: 'x',
    messageId: id,
    model,
    usage: { inputTokens: tokens, outputTokens: 0 },
  });

  it('sums the recorded transcript by the hour of each line, as much as the run’s sums, priced', () => {
    const u = foldUsage(undefined, 1, evs, PRICES);
    expect(u.hourly?.reduce((a, b) => a + b.tokens, 0)).toBe(u.totalTokens);
    expect(u.hourly?.reduce((a, b) => a + (b.costUSD ?? 0), 0)).toBeCloseTo(u.costUSD!, 6);
    for (const h of u.hourly ?? []) expect(h.hour).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
  });

  it('in any batching the same ledger (a streamed message counts once)', () => {
    const whole = foldUsage(undefined, 1, evs, PRICES).hourly;
    for (let cut = 0; cut <= evs.length; cut += 3) {
      const first = foldUsage(undefined, 1, evs.slice(0, cut), PRICES);
      expect(foldUsage(first, 1, evs.slice(cut), PRICES).hourly, `cut at ${cut}`).toEqual(whole);
    }
  });

  it('keeps the newest 25 hours; an hour with unpriced use has no cost', () => {
    let u = foldUsage(undefined, 1, [], PRICES);
    for (let h = 0; h < 30; h++)
      u = foldUsage(u, 1, [at(new Date(Date.UTC(2026, 10, 24, h)).toISOString(), `m${h}`, 1000)], PRICES);
    expect(u.hourly).toHaveLength(25);
    expect(u.hourly?.[0].hour).toBe('2026-11-24T05:00:00.000Z');
    expect(u.hourly?.at(-1)).toEqual({ hour: '2026-11-25T05:00:00.000Z', tokens: 1000, costUSD: 0.01 });
    const mixed = foldUsage(u, 1, [at('2026-11-25T05:10:00Z', 'x', 10, 'gpt-x')], PRICES);
    expect(mixed.hourly?.at(-1)).toEqual({ hour: '2026-11-25T05:00:00.000Z', tokens: 1010 });
  });

  it('a new run carries it over (through the agent fold) and adds to it; a refold of the same run does not', () => {
    const run1 = foldUsage(undefined, 1, [at('2026-11-24T10:05:00Z', 'a', 500)], PRICES);
    const launched: AgentStatus = { run: 2, position: LOG_START, counts: {}, hooks: false, turns: 0 };
    const run2 = foldRunUsage(launched, run1, 2, [{ ...at('2026-11-24T10:20:00Z', 'b', 300), run: 2 }], {
      command: ['claude'],
      pricing: PRICES,
    });
    expect(run2.totalTokens).toBe(300);
    expect(run2.hourly).toEqual([{ hour: '2026-11-24T10:00:00.000Z', tokens: 800, costUSD: 0.008 }]);
    expect(foldRunUsage(undefined, run1, 1, [], undefined).hourly).toBeUndefined();
  });
});
