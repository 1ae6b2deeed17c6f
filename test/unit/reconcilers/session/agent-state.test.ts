/** Agent state from hooks, transcript and screen (pure). */
import fs from 'node:fs';
import path from 'node:path';
import { jsonlTranscript } from '../../../../controller/agents/claude-code.js';
import { describe, expect, it } from 'vitest';
import {
  agentState,
  contextStep,
  foldEvents,
  newObservation,
  SCREEN_OVERRIDES_AFTER_MS,
  type AgentObservation,
} from '../../../../controller/reconcilers/session/agent-state.js';
import { LOG_START, type AgentEvent } from '../../../../controller/store/eventlog.js';
import { fixturesDir } from '../../../support/claude-code.js';

const T0 = Date.parse('2026-11-22T03:00:00Z');
let seq = 0;
const at = (ms: number) => new Date(T0 + ms).toISOString();
const hook = (name: string, ms: number, payload: Record<string, unknown> = {}): AgentEvent => ({
  seq: ++seq,
  ts: at(ms),
  run: 1,
  source: 'hook',
  type: 'hook',
  hook: name,
  payload: { hook_event_name: name, ...payload },
});
const fold = (events: AgentEvent[], o: AgentObservation = newObservation(1, LOG_START)) =>
  foldEvents(o, events, { seq: events.at(-1)?.seq ?? 0, offset: 0 }, jsonlTranscript.limitNotice);
const cond = (r: ReturnType<typeof agentState>, type: string) => r.conditions.find((c) => c.type === type)!;
const base = { stalledAfterMs: 600_000, startedAt: T0 };

describe('agent state from Claude Code hooks (payloads as recorded from 2.1.330)', () => {
  const recorded = fs
    .readFileSync(path.join(fixturesDir(), 'hooks.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { t?: number; payload?: Record<string, unknown> } & Record<string, unknown>)
    .map((r) => (r.payload ?? r) as Record<string, unknown>);

  it('a permission request means WaitingForInput with the command in the message', () => {
    const req = recorded.find((p) => p.hook_event_name === 'PermissionRequest')!;
    const o = fold([
      hook('SessionStart', 0),
      hook('UserPromptSubmit', 1000, { prompt: 'x' }),
      hook('PreToolUse', 2000),
      hook('PermissionRequest', 2100, req),
    ]);
    const r = agentState({ ...base, obs: o, now: T0 + 2200 });
    expect(r.state).toBe('waiting');
    expect(cond(r, 'WaitingForInput')).toMatchObject({ status: 'True', reason: 'PermissionPrompt' });
    expect(cond(r, 'WaitingForInput').message).toContain((req.tool_input as { command: string }).command);
    expect(cond(r, 'AgentBusy').status).toBe('False');
  });

  it('the tool running after approval clears it, and Stop marks the turn done with the last message', () => {
    const o = fold([
      hook('UserPromptSubmit', 0),
      hook('PermissionRequest', 100, { tool_name: 'Bash', tool_input: { command: 'git commit' } }),
      hook('PostToolUse', 900, { tool_name: 'Bash' }),
    ]);
    expect(agentState({ ...base, obs: o, now: T0 + 1000 }).state).toBe('busy');
    const done = fold([hook('Stop', 1500, { last_assistant_message: 'Committed.' })], o);
    const r = agentState({ ...base, obs: done, now: T0 + 1600 });
    expect(r.state).toBe('idle');
    expect(done.turns).toBe(1);
    expect(done.lastAssistantMessage).toBe('Committed.');
    expect(cond(r, 'AgentBusy')).toMatchObject({ status: 'False', reason: 'Idle' });
    expect(cond(r, 'WaitingForInput').status).toBe('False');
  });

  it('Esc fires no hook: a screen read well after the request that shows no prompt ends the wait', () => {
    const o = fold([hook('PermissionRequest', 0, { tool_name: 'Bash', tool_input: { command: 'rm -rf x' } })]);
    const early = agentState({ ...base, obs: o, now: T0 + 500, screen: { state: 'idle', at: T0 + 500 } });
    expect(early.state).toBe('waiting'); // the prompt may not be drawn yet
    const late = agentState({
      ...base,
      obs: o,
      now: T0 + SCREEN_OVERRIDES_AFTER_MS + 10,
      screen: { state: 'idle', at: T0 + SCREEN_OVERRIDES_AFTER_MS + 10 },
    });
    expect(late.state).toBe('idle');
    expect(late.source).toBe('pane');
  });

  it('a startup dialog on screen wins and is named in WaitingForInput', () => {
    const r = agentState({
      ...base,
      obs: newObservation(1, LOG_START),
      now: T0 + 800,
      screen: {
        state: 'dialog',
        dialog: 'workspace-trust',
        prompt: 'Is this a project you created or one you trust?',
        at: T0 + 800,
      },
    });
    expect(r.state).toBe('dialog');
    expect(cond(r, 'WaitingForInput')).toMatchObject({ status: 'True', reason: 'StartupDialog' });
    expect(cond(r, 'WaitingForInput').message).toMatch(/workspace-trust.*trust\?/);
  });

  it('StopFailure with a rate limit raises QuotaExhausted until the next prompt', () => {
    const o = fold([
      hook('UserPromptSubmit', 0),
      hook('StopFailure', 500, { error: 'rate_limit', last_assistant_message: 'API Error: Request rejected (429)' }),
    ]);
    expect(cond(agentState({ ...base, obs: o, now: T0 + 600 }), 'QuotaExhausted')).toMatchObject({
      status: 'True',
      reason: 'RateLimited',
    });
    const again = fold([hook('UserPromptSubmit', 700)], o);
    expect(cond(agentState({ ...base, obs: again, now: T0 + 800 }), 'QuotaExhausted').status).toBe('False');
  });

  it('an interrupt marker in the transcript raises Interrupted and ends a pending wait', () => {
    const o = fold([
      hook('PermissionRequest', 0, { tool_name: 'Bash' }),
      {
        seq: ++seq,
        ts: at(400),
        run: 1,
        source: 'transcript',
        type: 'user_message',
        text: '[Request interrupted by user for tool use]',
        interrupt: true,
      },
    ]);
    const r = agentState({ ...base, obs: o, now: T0 + 500 });
    expect(r.state).toBe('idle');
    expect(cond(r, 'Interrupted').status).toBe('True');
    expect(cond(r, 'WaitingForInput').status).toBe('False');
  });

  it('busy with no new events for stalledAfter → Stalled; any event is progress', () => {
    const o = fold([hook('UserPromptSubmit', 0)]);
    expect(cond(agentState({ ...base, obs: o, now: T0 + 599_000 }), 'Stalled').status).toBe('False');
    expect(cond(agentState({ ...base, obs: o, now: T0 + 601_000 }), 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'NoProgress',
    });
    const later = fold([hook('PreToolUse', 590_000)], o);
    expect(cond(agentState({ ...base, obs: later, now: T0 + 601_000 }), 'Stalled').status).toBe('False');
  });

  it('SessionEnd means exited', () => {
    const o = fold([hook('SessionEnd', 0, { reason: 'other' })]);
    expect(agentState({ ...base, obs: o, now: T0 }).state).toBe('exited');
    expect(o.ended?.reason).toBe('other');
  });

  it('events of another run only move the position', () => {
    const other: AgentEvent = { seq: 99, ts: at(0), run: 2, source: 'hook', type: 'hook', hook: 'Stop', payload: {} };
    const o = foldEvents(newObservation(1, LOG_START), [other], { seq: 99, offset: 1234 });
    expect(o.turns).toBe(0);
    expect(o.counts).toEqual({});
    expect(o.position).toEqual({ seq: 99, offset: 1234 });
  });
});

describe('agents without hooks: the screen decides', () => {
  it('busy/idle/waiting from the pane; Stalled counts screen changes as progress', () => {
    const o = newObservation(1, LOG_START);
    expect(agentState({ ...base, obs: o, now: T0, screen: { state: 'busy', at: T0 } }).state).toBe('busy');
    const w = agentState({ ...base, obs: o, now: T0, screen: { state: 'waiting', prompt: 'Proceed? [y/N]', at: T0 } });
    expect(cond(w, 'WaitingForInput')).toMatchObject({ status: 'True', reason: 'Question', message: 'Proceed? [y/N]' });
    const stalled = agentState({
      ...base,
      obs: o,
      now: T0 + 700_000,
      screenChangedAt: T0 + 10_000,
      screen: { state: 'busy', at: T0 + 700_000 },
    });
    expect(cond(stalled, 'Stalled').status).toBe('True');
    const moving = agentState({
      ...base,
      obs: o,
      now: T0 + 700_000,
      screenChangedAt: T0 + 650_000,
      screen: { state: 'busy', at: T0 + 700_000 },
    });
    expect(cond(moving, 'Stalled').status).toBe('False');
  });
});

describe('context window steps', () => {
  it('reports each 10 % step once', () => {
    expect(contextStep(15_000, 200_000, undefined)).toBeUndefined(); // 7.5 %
    expect(contextStep(41_000, 200_000, 0)).toEqual({ percent: 20.5, step: 20, steps: [10, 20] });
    expect(contextStep(41_000, 200_000, 20)).toBeUndefined();
    expect(contextStep(190_000, 200_000, 20)).toEqual({ percent: 95, step: 90, steps: [30, 40, 50, 60, 70, 80, 90] });
  });

  it('a reading that jumps from 23 % to 56 % records every step crossed: 30, 40 and 50', () => {
    expect(contextStep(46_000, 200_000, undefined)?.steps).toEqual([10, 20]);
    expect(contextStep(112_000, 200_000, 20)?.steps).toEqual([30, 40, 50]);
    expect(contextStep(112_000, 200_000, 20, 25)?.steps).toEqual([25, 50]);
    expect(contextStep(200_000, 200_000, 95, 10)?.steps).toEqual([100]); // after reportEvery changed from 5
  });
});
