/**
 * Turns counted once, whatever order the hook file and the transcript reach the event log in
 * (issue 24 item 3), on a real session event log: Claude Code 2.1.330 under the controller,
 * against the fake Messages API, six prompts (test/fixtures/assessment/record-claude-log.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionPolicy } from '../../../../controller/api/kinds.js';
import {
  assessStep,
  newAssessmentState,
  STOP_GRACE_MS,
  type AssessmentState,
  type StepResult,
} from '../../../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import { gitBaseFingerprint, gitFingerprint } from '../../../../controller/reconcilers/assessment/status.js';
import type { AgentEvent } from '../../../../controller/store/eventlog.js';

const LOG = path.join(import.meta.dirname, '../../../fixtures/assessment/claude-code-2.1.330/events.jsonl');
const RECORDED: AgentEvent[] = fs
  .readFileSync(LOG, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as AgentEvent);

/** The no-progress trip at 4 turns, as in the issue (nothing else trips on this log). */
const cfg = assessmentConfig({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'turns', uid: 'uid-turns', generation: 1 },
  spec: { breaker: { noProgressTurns: 4 } },
} as SessionPolicy);

const prompts = (events: AgentEvent[]) => events.filter((e) => e.type === 'user_message').length;
const lastTs = (events: AgentEvent[]) => Math.max(...events.map((e) => Date.parse(e.ts)));

/**
 * The events as a log holding them in this order would number them, through the step in batches
 * (`n` events read when the reconciler's clock is at `now`; by default one batch, read after
 * every grace ran out).
 */
function replay(
  order: AgentEvent[],
  batches?: { n: number; now: number }[],
  opts: { git?: string; gitBase?: string } = {},
) {
  const events = order.map((e, i) => ({ ...e, seq: i + 1 }));
  let state: AssessmentState = newAssessmentState(1);
  const all: Pick<StepResult, 'interventions' | 'transitions'> = { interventions: [], transitions: [] };
  let i = 0;
  for (const { n, now } of batches ?? [{ n: events.length, now: lastTs(events) + STOP_GRACE_MS }]) {
    const chunk = events.slice(i, i + n);
    i += n;
    const r = assessStep(state, { events: chunk, from: { seq: i - n, offset: 0 }, cfg, now, ...opts });
    state = r.state;
    all.interventions.push(...r.interventions);
    all.transitions.push(...r.transitions);
  }
  return { state, events, ...all };
}

/** Each Stop hook moved to just before its turn's last tool_result (the same pass read hooks first). */
function stopBeforeToolResult(events: AgentEvent[]): AgentEvent[] {
  const out = [...events];
  for (const stop of events.filter((e) => e.type === 'hook' && e.hook === 'Stop')) {
    const at = out.indexOf(stop);
    out.splice(at, 1);
    let j = at - 1;
    while (j >= 0 && out[j].type !== 'tool_result') j--;
    out.splice(j, 0, stop);
  }
  return out;
}

/** A small seeded PRNG (mulberry32): failures replay from the seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random interleaving of the transcript's events and the other sources' (hooks, pane), each
 * source in its own order. `lead`: how far (ms of event time) the hooks may run ahead of the
 * transcript; Infinity for any interleaving at all.
 */
function interleave(events: AgentEvent[], rand: () => number, lead: number): AgentEvent[] {
  const tr = events.filter((e) => e.source === 'transcript');
  const other = events.filter((e) => e.source !== 'transcript');
  const out: AgentEvent[] = [];
  while (tr.length || other.length) {
    const ahead = tr.length && other.length ? Date.parse(other[0].ts) - Date.parse(tr[0].ts) : 0;
    const takeOther = other.length && (!tr.length || (rand() < 0.5 && ahead < lead));
    out.push((takeOther ? other : tr).shift()!);
  }
  return out;
}

/**
 * The records as the feed could deliver them: each source (transcript, hooks, pane) late by up to
 * `maxDelay` ms, in its own order; the reconciler wakes at random moments and reads what arrived,
 * its clock at the moment it woke; a last read after every grace.
 */
function delivered(events: AgentEvent[], rand: () => number, maxDelay: number) {
  const seen = new Map<string, number>();
  const timed = events.map((e) => {
    const at = Math.max(seen.get(e.source) ?? 0, Date.parse(e.ts) + rand() * maxDelay);
    seen.set(e.source, at);
    return { e, at };
  });
  timed.sort((a, b) => a.at - b.at);
  const batches: { n: number; now: number }[] = [];
  let n = 0;
  timed.forEach((t, i) => {
    n++;
    const next = timed[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    if (rand() < 0.3 || next === Number.POSITIVE_INFINITY) {
      batches.push({ n, now: t.at + rand() * Math.min(next - t.at, maxDelay) });
      n = 0;
    }
  });
  batches.push({ n: 0, now: lastTs(events) + maxDelay + STOP_GRACE_MS });
  return { order: timed.map((t) => t.e), batches };
}

const outcome = (r: ReturnType<typeof replay>) => ({
  turns: r.state.turn.count,
  breaker: r.state.breaker,
  trips: r.interventions.map((iv) => iv.why),
});

describe('turns on a real Claude Code log', () => {
  it('the recorded log has six prompts and counts six turns', () => {
    expect(prompts(RECORDED)).toBe(6);
    expect(replay(RECORDED).state.turn.count).toBe(6);
  });

  it('each Stop read before its turn tool_result: still six turns; no-progress (4) trips at prompt 4', () => {
    const order = stopBeforeToolResult(RECORDED);
    // The reordering is the one the issue describes: every Stop ahead of its turn's last transcript lines.
    expect(order.findIndex((e) => e.type === 'hook' && e.hook === 'Stop')).toBeLessThan(
      order.findIndex((e) => e.type === 'tool_result'),
    );
    const r = replay(order);
    expect(r.state.turn.count).toBe(6);
    expect(r.interventions.map((iv) => iv.why)).toEqual([
      '4 turns without progress (no commit, no file written; threshold 4)',
    ]);
    const userSeqs = r.events.filter((e) => e.type === 'user_message').map((e) => e.seq);
    expect(r.interventions[0].seq).toBeGreaterThan(userSeqs[3]);
    expect(r.interventions[0].seq).toBeLessThan(userSeqs[4]);
    expect(outcome(r)).toEqual(outcome(replay(RECORDED)));
  });

  it('any interleaving of the hook and transcript records gives the same turns and breaker state', () => {
    const want = outcome(replay(RECORDED));
    expect(want.turns).toBe(6);
    for (let seed = 1; seed <= 100; seed++) {
      const order = interleave(RECORDED, rng(seed), Number.POSITIVE_INFINITY);
      expect({ seed, ...outcome(replay(order)) }).toEqual({ seed, ...want });
    }
  });

  it('delivered late by up to 8 s per source and read in batches as it arrives, the same again', () => {
    const want = outcome(replay(RECORDED));
    for (let seed = 1; seed <= 100; seed++) {
      const { order, batches } = delivered(RECORDED, rng(seed), 8000);
      expect({ seed, ...outcome(replay(order, batches)) }).toEqual({ seed, ...want });
    }
  });

  it('a Stop whose transcript lines never come ends its turn after the grace', () => {
    const firstTurn = RECORDED.slice(
      0,
      RECORDED.findIndex((e) => e.type === 'assistant_message' && e.stopReason === 'end_turn'),
    );
    const stop = RECORDED.find((e) => e.type === 'hook' && e.hook === 'Stop')!;
    const events = [...firstTurn, stop].map((e, i) => ({ ...e, seq: i + 1 }));
    const from = { seq: 0, offset: 0 };
    const early = assessStep(newAssessmentState(1), { events, from, cfg, now: Date.parse(stop.ts) + 1000 });
    expect(early.state.turn.count).toBe(0);
    expect(early.state.turn.stops).toHaveLength(1);
    const late = assessStep(early.state, { events: [], from, cfg, now: Date.parse(stop.ts) + STOP_GRACE_MS });
    expect(late.state.turn.count).toBe(1);
    expect(late.state.turn.stops).toBeUndefined();
  });
});

describe('git progress', () => {
  const head = 'f3a9c1d2e4b5a6978812345678901234567890ab';
  const firstTurn = RECORDED.slice(0, RECORDED.findIndex((e) => e.type === 'hook' && e.hook === 'Stop') + 1);

  it('the first turn of a run counts a git change since headBefore as progress', () => {
    const git = gitFingerprint({ head: 'b'.repeat(40), commits: 1, filesChanged: 1, insertions: 2, deletions: 0 });
    const r = replay(firstTurn, undefined, { git, gitBase: gitBaseFingerprint(head) });
    expect(r.state.turn.count).toBe(1);
    expect(r.state.breaker.context.noProgressTurns).toBe(0);
    expect(r.state.gitMark).toBe(git);
  });

  it('and no change since headBefore is no progress', () => {
    const base = gitBaseFingerprint(head);
    const r = replay(firstTurn, undefined, { git: base, gitBase: base });
    expect(r.state.breaker.context.noProgressTurns).toBe(1);
  });
});
