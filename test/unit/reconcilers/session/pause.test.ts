/**
 * Rate-limit and budget pauses through the session's pure plan, on a fake clock: a limit pauses
 * the live run (phase stays Running, nothing fails, nothing restarts) until its reset plus the
 * jitter, then the continue message goes out and a confirmed delivery ends the pause; a pause the
 * agent ends itself ends early; a budget pauses an idle run (never a busy one) and resumes it when
 * the window has room; action Stop stops it at idle with reason BudgetExceeded and no restart;
 * admission refuses new sessions under an exceeded budget and does not count a run that gave its
 * slot up.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus, AgentSpec, SessionPolicy } from '../../../../controller/api/kinds.js';
import { clock } from '../../../../controller/api/pause.js';
import type { ScreenReading } from '../../../../controller/reconcilers/session/agent-state.js';
import { admit, effective, observedEvent } from '../../../../controller/reconcilers/session/decide.js';
import { freesSlot } from '../../../../controller/reconcilers/session/observe.js';
import { planPause } from '../../../../controller/reconcilers/session/pause.js';
import {
  type AgentFacts,
  gitKey,
  type Observed,
  plan,
  type PlanOutput,
} from '../../../../controller/reconcilers/session/plan.js';
import { type AgentEvent, LOG_START } from '../../../../controller/store/eventlog.js';

const T0 = Date.parse('2026-11-24T10:00:00Z');
const agent: AgentSpec = { command: ['sh'], promptDelivery: 'argument' };
const obj: AgentSession = {
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'AgentSession',
  metadata: { name: 's', namespace: 'default', uid: 'u-1', generation: 1 },
  spec: { prompt: 'do it', restartPolicy: 'OnFailure' },
};
const running: AgentSessionStatus = {
  phase: 'Running',
  run: 1,
  restarts: 0,
  tmuxSession: 'orchctl-s',
  workspace: '/ws/run-1',
  workdir: '/repo',
  startTime: new Date(T0 - 60_000).toISOString(),
  lifecycle: { runGeneration: 1 },
  reason: 'Running',
  message: 'running in tmux session orchctl-s',
  conditions: [],
};

const policy = (spec: SessionPolicy['spec'], status?: SessionPolicy['status']): SessionPolicy => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'team', namespace: 'default' },
  spec,
  ...(status ? { status } : {}),
});
const NO_JITTER = policy({ rateLimit: { jitter: '0s' } });

const screen = (state: string, extra: Partial<ScreenReading> = {}): ScreenReading => ({ state, at: T0, ...extra });
const limitScreen = (text: string) => screen('idle', { quotaExhausted: true, prompt: text, quotaText: text });

interface PassOptions {
  now?: number;
  policy?: SessionPolicy;
  events?: AgentEvent[];
  resumed?: Observed['resumed'];
  /** The run's live pane (keys go to it). */
  pane?: boolean;
  agentSpec?: AgentSpec;
}
function pass(status: AgentSessionStatus, reading: ScreenReading | undefined, o: PassOptions = {}): PlanOutput {
  const now = o.now ?? T0;
  const facts: AgentFacts = {
    run: 1,
    screen: reading,
    screenChangedAt: T0 - 60_000,
    events: o.events ?? [],
    next: LOG_START,
  };
  const observed: Observed = {
    pane: { kind: 'alive' },
    hasPanes: true,
    retag: [],
    agent: facts,
    gitKey: gitKey(status),
    ...(o.resumed ? { resumed: o.resumed } : {}),
    ...(o.pane ? { paneInfo: { paneId: '%7', dead: false, pid: 4242 } as Observed['paneInfo'] } : {}),
  };
  const resolved = {
    agent: o.agentSpec ?? agent,
    workdir: '/repo',
    policy: o.policy,
    effective: effective(obj.spec ?? {}, o.policy),
  };
  const out = plan({ key: 'default/s', obj: { ...obj, status }, status, observed, resolved, now });
  expect(out.done).toBe(true);
  return out;
}
const events = (out: PlanOutput) =>
  out.effects.flatMap((e) => (e.type === 'RecordEvent' ? [`${e.reason}: ${e.message}`] : []));
const sent = (out: PlanOutput) => out.effects.flatMap((e) => (e.type === 'SendContinue' ? [e.text] : []));
const at = (ms: number) => new Date(ms).toISOString();

describe('rate-limit pause', () => {
  const LIMIT = "You've hit your limit · Your usage resets in 10 seconds.";

  it('a limit on screen with a reset 10 s ahead: paused until then, Running, resumed with the continue message', () => {
    const hit = pass(running, limitScreen(LIMIT), { policy: NO_JITTER });
    expect(hit.status.phase).toBe('Running');
    expect(hit.status.pause).toMatchObject({
      run: 1,
      reason: 'RateLimited',
      since: at(T0),
      until: at(T0 + 10_000),
      holdsSlot: true,
    });
    expect(hit.status.reason).toBe('RateLimited');
    expect(hit.status.message).toMatch(new RegExp(`^paused \\(RateLimited\\) until ${clock(at(T0 + 10_000))}`));
    expect(hit.status.conditions?.find((c) => c.type === 'Paused')).toMatchObject({
      status: 'True',
      reason: 'RateLimited',
    });
    expect(events(hit)).toContain(
      `Paused: RateLimited until ${clock(at(T0 + 10_000))} (when the limit resets, ` +
        `${clock(at(T0 + 10_000))}): ${LIMIT}`,
    );
    expect(hit.requeueAfterMs).toBe(10_000);
    expect(sent(hit)).toEqual([]);

    // Before the reset: nothing is sent, the session waits for its due time.
    const waiting = pass(hit.status, limitScreen(LIMIT), { policy: NO_JITTER, now: T0 + 4000 });
    expect(sent(waiting)).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(6000);
    expect(events(waiting)).toEqual([]);

    // At the reset: the continue message (default text), once, with the time it went out in status.
    const due = pass(waiting.status, limitScreen(LIMIT), { policy: NO_JITTER, now: T0 + 10_000 });
    expect(sent(due)).toEqual(['Continue where you left off.']);
    expect(due.status.pause?.continueSentAt).toBe(at(T0 + 10_000));
    const again = pass(due.status, limitScreen(LIMIT), { policy: NO_JITTER, now: T0 + 11_000 });
    expect(sent(again)).toEqual([]);

    // Confirmed: the pause is over, the session says it runs again.
    const ok = {
      delivered: true,
      reason: 'Confirmed',
      message: 'the UserPromptSubmit hook fired',
      confirmedBy: 'hook' as const,
    };
    const done = pass(again.status, screen('idle'), { policy: NO_JITTER, now: T0 + 12_000, resumed: ok });
    expect(done.status.pause).toBeUndefined();
    expect(done.status.phase).toBe('Running');
    expect(done.status.reason).toBe('Running');
    expect(done.status.conditions?.find((c) => c.type === 'Paused')?.status).toBe('False');
    expect(events(done)).toEqual(['Resumed: Resumed after 12s RateLimited: continue message delivered (Confirmed)']);
    expect(done.effects).toContainEqual({ type: 'ResumeRecorded', run: 1 });
    // Nothing of it is a failure or a restart.
    expect(done.status.restarts).toBe(0);
    expect(done.status.exitCode).toBeUndefined();
  });

  it('the reset time in status.agent.quota.resetsAt wins; the jitter is added, the same every time', () => {
    const error: AgentEvent = {
      seq: 1,
      ts: at(T0),
      run: 1,
      source: 'transcript',
      type: 'assistant_message',
      text: 'API Error: 429 rate limit · Your usage resets in approximately 1 hour.',
    };
    const p = policy({ rateLimit: { jitter: '2m' } });
    const a = pass(running, screen('idle'), { policy: p, events: [error] });
    const until = Date.parse(a.status.pause!.until!);
    expect(until).toBeGreaterThanOrEqual(T0 + 3600_000);
    expect(until).toBeLessThan(T0 + 3600_000 + 120_000);
    // Drawn from the session's uid and the pause's start: a replayed pass draws the same.
    const b = pass(running, screen('idle'), { policy: p, events: [error] });
    expect(b.status.pause!.until).toBe(a.status.pause!.until);
  });

  it("the statusline's used-up window pauses until it resets, with no limit text at all", () => {
    const ctx = {
      run: 1,
      usedTokens: 1000,
      windowTokens: 200_000,
      percent: 0.5,
      lastStep: 0,
      rateLimits: [
        { window: 'five_hour', usedPercent: 100, resetsAt: at(T0 + 10_000) },
        { window: 'seven_day', usedPercent: 40, resetsAt: at(T0 + 86_400_000) },
      ],
    };
    const hit = pass({ ...running, context: ctx as AgentSessionStatus['context'] }, screen('idle'), {
      policy: NO_JITTER,
    });
    expect(hit.status.pause).toMatchObject({ reason: 'RateLimited', until: at(T0 + 10_000) });
    // A window not used up is no limit.
    const below = { ...ctx, rateLimits: [{ window: 'five_hour', usedPercent: 80, resetsAt: at(T0 + 10_000) }] };
    expect(pass({ ...running, context: below as never }, screen('idle')).status.pause).toBeUndefined();
  });

  it('no readable reset time: defaultWait', () => {
    const p = policy({ rateLimit: { jitter: '0s', defaultWait: '7m' } });
    const hit = pass(running, limitScreen('API Error: Request rejected (429) · rate limit'), { policy: p });
    expect(hit.status.pause?.until).toBe(at(T0 + 7 * 60_000));
    expect(hit.status.pause?.message).toMatch(/no reset time given: defaultWait 7m/);
  });

  it('rateLimit.pause false: only reported, as before; holdSlot false gives the slot up', () => {
    const off = pass(running, limitScreen('Your usage resets in 10 seconds.'), {
      policy: policy({ rateLimit: { pause: false } }),
    });
    expect(off.status.pause).toBeUndefined();
    expect(off.status.conditions?.find((c) => c.type === 'QuotaExhausted')?.status).toBe('True');

    const free = pass(running, limitScreen('Your usage resets in 10 seconds.'), {
      policy: policy({ rateLimit: { holdSlot: false } }),
    });
    expect(free.status.pause?.holdsSlot).toBe(false);
    expect(freesSlot(free.status)).toBe(true);
    expect(freesSlot(pass(running, limitScreen('Your usage resets in 10 seconds.')).status)).toBe(false);
  });

  it('a pause the agent ends itself (busy again, no limit) ends early', () => {
    const hit = pass(running, limitScreen('Your usage resets in approximately 4 hours.'), { policy: NO_JITTER });
    expect(hit.status.pause?.reason).toBe('RateLimited');
    const busy = pass(hit.status, screen('busy'), { policy: NO_JITTER, now: T0 + 60_000 });
    expect(busy.status.pause).toBeUndefined();
    expect(events(busy)).toEqual(['Resumed: Resumed after 1m RateLimited: went on by itself']);
    expect(sent(busy)).toEqual([]);
  });

  it('an unconfirmed continue message is tried again with backoff; a lost outcome is sent again after 2m', () => {
    const hit = pass(running, limitScreen('Your usage resets in 10 seconds.'), { policy: NO_JITTER });
    const due = pass(hit.status, screen('idle'), { policy: NO_JITTER, now: T0 + 10_000 });
    expect(sent(due)).toHaveLength(1);
    const failed = { delivered: false, reason: 'NotConfirmed', message: 'no hook, transcript line or screen change' };
    const f1 = pass(due.status, screen('idle'), { policy: NO_JITTER, now: T0 + 20_000, resumed: failed });
    expect(f1.status.pause).toMatchObject({ failedResumes: 1, until: at(T0 + 80_000) });
    expect(f1.status.pause?.continueSentAt).toBeUndefined();
    expect(events(f1)[0]).toMatch(
      /^ResumeFailed: the continue message was not confirmed \(NotConfirmed: .*trying again in 1m$/,
    );
    expect(f1.requeueAfterMs).toBe(60_000);
    const retry = pass(f1.status, screen('idle'), { policy: NO_JITTER, now: T0 + 80_000 });
    expect(sent(retry)).toHaveLength(1);
    const f2 = pass(retry.status, screen('idle'), { policy: NO_JITTER, now: T0 + 81_000, resumed: failed });
    expect(f2.status.pause?.until).toBe(at(T0 + 81_000 + 120_000));

    // A restarted controller knows nothing of the message it sent: it waits RESUME_CONFIRM_MS, then sends again.
    const r = pass(f2.status, screen('idle'), { policy: NO_JITTER, now: T0 + 201_000 });
    expect(sent(r)).toHaveLength(1);
    expect(sent(pass(r.status, screen('idle'), { policy: NO_JITTER, now: T0 + 201_000 + 119_000 }))).toEqual([]);
    expect(sent(pass(r.status, screen('idle'), { policy: NO_JITTER, now: T0 + 201_000 + 121_000 }))).toHaveLength(1);
  });

  it('a pause of an earlier run is over: the Paused condition turns False, without a Resumed', () => {
    const hit = pass(running, limitScreen('Your usage resets in 10 seconds.'), { policy: NO_JITTER });
    const stale = { ...hit.status, pause: { ...hit.status.pause!, run: 0 } };
    const next = pass(stale, screen('idle'), { policy: policy({ rateLimit: { pause: false } }), now: T0 + 1000 });
    expect(next.status.pause).toBeUndefined();
    expect(next.status.conditions?.find((c) => c.type === 'Paused')).toMatchObject({
      status: 'False',
      reason: 'NotPaused',
    });
    expect(events(next).filter((e) => e.startsWith('Resumed'))).toEqual([]);
  });

  it('a run that ends while paused takes its pause with it (no Resumed, no continue)', () => {
    const hit = pass(running, limitScreen('Your usage resets in 10 seconds.'), { policy: NO_JITTER });
    const ended = planPause({ status: { ...hit.status, phase: 'Failed' }, uid: 'u-1', now: T0 + 1000 });
    expect(ended.pause).toBeUndefined();
    expect(ended.events).toEqual([]);
    expect(ended.sendContinue).toBeUndefined();
  });
});

describe('budget pause and stop', () => {
  const exceeded = (action?: 'Pause' | 'Stop') =>
    policy(
      { budget: { maxTokens: 1000, window: '24h', ...(action ? { action } : {}) } },
      {
        budget: {
          windowStart: at(T0 - 86_400_000),
          usedTokens: 1200,
          usedCostUSD: 0,
          priced: false,
          exceeded: true,
          display: '1.2k/1k',
          since: at(T0 - 5000),
        },
      },
    );
  const roomy = () => {
    const p = exceeded();
    p.status!.budget = { ...p.status!.budget!, usedTokens: 10, exceeded: false, display: '10/1k' };
    delete p.status!.budget!.since;
    return p;
  };

  it('paused at the next idle point (never mid-turn), a BudgetExceeded Event; resumed when there is room', () => {
    const busy = pass(running, screen('busy'), { policy: exceeded() });
    expect(busy.status.pause).toBeUndefined();
    const idle = pass(busy.status, screen('idle'), { policy: exceeded(), now: T0 + 1000 });
    expect(idle.status.pause).toMatchObject({ reason: 'BudgetExceeded', holdsSlot: true });
    expect(idle.status.pause?.until).toBeUndefined();
    expect(idle.status.reason).toBe('BudgetExceeded');
    expect(events(idle)).toEqual([
      'BudgetExceeded: paused at an idle point: SessionPolicy "team" budget exceeded (1.2k/1k in 24h)',
    ]);
    // Held while the budget stays exceeded: no message, no due time of its own.
    const held = pass(idle.status, screen('idle'), { policy: exceeded(), now: T0 + 3600_000 });
    expect(held.status.pause?.reason).toBe('BudgetExceeded');
    expect(sent(held)).toEqual([]);
    expect(held.requeueAfterMs).toBeUndefined();
    // The window has room (or the budget was raised): the continue message.
    const room = pass(held.status, screen('idle'), { policy: roomy(), now: T0 + 3601_000 });
    expect(sent(room)).toEqual(['Continue where you left off.']);
  });

  const hard = (action?: 'Pause' | 'Stop') => {
    const p = exceeded(action);
    p.spec!.budget!.enforce = 'Hard';
    return p;
  };
  const keys = (out: PlanOutput) => out.effects.flatMap((e) => (e.type === 'SendKeys' ? [e.keys] : []));

  it('enforce Hard: a busy agent is interrupted (its interruptKeys) and paused at once, the overshoot recorded', () => {
    const claude: AgentSpec = { ...agent, interruptKeys: ['Escape'] };
    const busy = pass(running, screen('busy'), { policy: hard(), pane: true, agentSpec: claude });
    expect(keys(busy)).toEqual([['Escape']]);
    expect(busy.status.pause).toMatchObject({ reason: 'BudgetExceeded', interruptedAt: at(T0) });
    expect(events(busy)).toEqual([
      'BudgetExceeded: interrupted mid-turn and paused (enforce Hard): SessionPolicy "team" budget exceeded ' +
        '(1.2k/1k in 24h); overshoot +200 tokens',
    ]);
    // Still busy a moment later (the interrupt is on its way): not resumed, not interrupted again yet.
    const soon = pass(busy.status, screen('busy'), { policy: hard(), pane: true, now: T0 + 5000 });
    expect(keys(soon)).toEqual([]);
    expect(soon.status.pause?.reason).toBe('BudgetExceeded');
    expect(events(soon)).toEqual([]);
    // Still busy past INTERRUPT_AGAIN_MS: interrupted once more, still one BudgetExceeded.
    const later = pass(soon.status, screen('busy'), { policy: hard(), pane: true, now: T0 + 61_000 });
    expect(keys(later)).toEqual([['C-c']]);
    expect(later.status.pause?.interruptedAt).toBe(at(T0 + 61_000));
    expect(events(later)).toEqual([]);
    // Idle and held; the window has room: the continue message, as for any budget pause.
    const room = pass(later.status, screen('idle'), { policy: roomy(), pane: true, now: T0 + 120_000 });
    expect(sent(room)).toEqual(['Continue where you left off.']);
  });

  it('enforce IdlePoint (the default) never interrupts a busy agent', () => {
    const busy = pass(running, screen('busy'), { policy: exceeded(), pane: true });
    expect(keys(busy)).toEqual([]);
    expect(busy.status.pause).toBeUndefined();
  });

  it('enforce Hard with action Stop: interrupted, then stopped once idle', () => {
    const busy = pass(running, screen('busy'), { policy: hard('Stop'), pane: true });
    expect(keys(busy)).toEqual([['C-c']]);
    expect(events(busy)[0]).toMatch(/^BudgetExceeded: interrupted mid-turn and stopping \(enforce Hard\)/);
    const idle = pass(busy.status, screen('idle'), { policy: hard('Stop'), pane: true, now: T0 + 1000 });
    const stop = pass(idle.status, screen('idle'), { policy: hard('Stop'), pane: true, now: T0 + 2000 });
    expect(stop.status.phase).toBe('Stopping');
    expect(stop.status.lifecycle?.stopReason).toBe('BudgetExceeded');
  });

  it('action Stop: the run is stopped at an idle point, reason BudgetExceeded, and not restarted', () => {
    const s1 = pass(
      { ...running, agent: { run: 1, position: LOG_START, counts: {}, hooks: false, turns: 0, state: 'busy' } },
      screen('idle'),
      {
        policy: exceeded('Stop'),
      },
    );
    // The idle state is in status now; the next pass stops the run.
    const stop = pass(s1.status, screen('idle'), { policy: exceeded('Stop'), now: T0 + 1000 });
    expect(stop.status.phase).toBe('Stopping');
    expect(stop.status.reason).toBe('BudgetExceeded');
    expect(stop.status.lifecycle?.stopReason).toBe('BudgetExceeded');
    expect(stop.status.stopRequestTime).toBe(at(T0 + 1000)); // the stop keys go out, the grace runs
    expect(events(stop)).toContain(
      'BudgetExceeded: stopped at an idle point: SessionPolicy "team" budget exceeded (1.2k/1k in 24h)',
    );
    // Ended with that reason, an ended run of restartPolicy OnFailure is not restarted.
    const ended: AgentSessionStatus = { ...stop.status, phase: 'Killed', reason: 'BudgetExceeded' };
    const e = effective(obj.spec ?? {}, undefined);
    expect(
      observedEvent({
        phase: 'Killed',
        session: { ...obj, status: ended },
        pane: { kind: 'missing' },
        now: T0,
        effective: e,
      }),
    ).toBeUndefined();
  });

  it('admission: a new session under an exceeded budget waits (BudgetExceeded)', () => {
    const host = {
      cpu: 4,
      memoryAvailableBytes: 8e9,
      memoryTotalBytes: 16e9,
      diskFreeBytes: 1e11,
      loadAverage: [0, 0, 0],
    };
    expect(admit(exceeded(), 0, host as never)).toEqual({
      admitted: false,
      reason: 'BudgetExceeded',
      message: 'SessionPolicy "team" budget exceeded (1.2k/1k in 24h)',
    });
    expect(admit(roomy(), 0, host as never).admitted).toBe(true);
  });
});
