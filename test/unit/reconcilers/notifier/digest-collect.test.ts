/**
 * collectDigest: what the digest reports, from the outbox and the other objects — counted once per
 * Event occurrence whatever the number of channels, inside the [since, now) window, with the
 * sessions waiting now, the notifications held back whenever recorded, and the budget per channel.
 */
import { describe, expect, it } from 'vitest';
import { collectDigest, type DigestInput } from '../../../../controller/notify/digest/index.js';
import { channel, evaluation, NOW, notif, policy, SINCE, session } from './digest-fixtures.js';

const input = (over: Partial<DigestInput> = {}): DigestInput => ({
  now: NOW,
  since: SINCE,
  policy: policy(),
  notifications: [],
  sessions: [],
  evaluations: [],
  channels: [],
  ...over,
});

describe('collectDigest', () => {
  it('counts runs started, succeeded and failed by reason, once per Event occurrence across channels', () => {
    const notifications = [
      notif({ reason: 'Started', session: 'a', created: '2026-06-01T08:00:00Z', tier: 4, phase: 'Suppressed' }),
      notif({ reason: 'Started', session: 'a', channel: 'slack', created: '2026-06-01T08:00:00Z', tier: 4 }),
      // The same Event again with its count bumped is another occurrence.
      notif({ reason: 'Started', session: 'a', count: 2, created: '2026-06-01T10:00:00Z', phase: 'Suppressed' }),
      notif({ reason: 'Started', session: 'b', created: '2026-06-01T09:00:00Z', phase: 'Suppressed' }),
      notif({ reason: 'Completed', session: 'a', created: '2026-06-01T09:30:00Z' }),
      notif({ reason: 'Completed', session: 'a', channel: 'slack', created: '2026-06-01T09:30:00Z' }),
      notif({ reason: 'Error', session: 'b', created: '2026-06-01T11:00:00Z', message: 'Run 1 Failed: exit 1' }),
      notif({ reason: 'TimedOut', session: 'c', created: '2026-06-01T12:00:00Z' }),
      notif({ reason: 'Escalated', session: 'c', tier: 1, created: '2026-06-01T12:05:00Z' }),
      notif({ reason: 'AutopilotNotice', session: 'd', created: '2026-06-01T13:00:00Z' }),
      notif({ reason: 'AutopilotNotice', session: 'd', channel: 'slack', created: '2026-06-01T13:00:00Z' }),
      // Not a run's end: a Project's Error, and a session's Stalled.
      notif({ reason: 'Error', kind: 'Project', session: 'p', created: '2026-06-01T14:00:00Z' }),
      notif({ reason: 'Stalled', session: 'e', tier: 2, created: '2026-06-01T14:00:00Z' }),
    ];
    const d = collectDigest(input({ notifications }));
    expect(d.runs).toEqual({ started: 3, succeeded: 1, failed: 2 });
    expect(d.failedRuns.map((e) => [e.object, e.reason, e.message])).toEqual([
      ['default/b', 'Error', 'Run 1 Failed: exit 1'],
      ['default/c', 'TimedOut', 'TimedOut on c'],
    ]);
    expect(d.escalations.map((e) => e.object)).toEqual(['default/c']);
    expect(d.autopilot.map((e) => [e.object, e.at])).toEqual([['default/d', '2026-06-01T13:00:00Z']]);
    expect(d.empty).toBe(false);
  });

  it('takes the window [since, now) in whole seconds, and only this policy’s notifications', () => {
    const notifications = [
      notif({ reason: 'Completed', session: 'before', created: '2026-06-01T06:59:59Z' }),
      notif({ reason: 'Completed', session: 'first', created: '2026-06-01T07:00:00Z' }),
      notif({ reason: 'Completed', session: 'last', created: '2026-06-02T06:59:59Z' }),
      notif({ reason: 'Completed', session: 'at-now', created: '2026-06-02T07:00:00Z' }),
      notif({ reason: 'Completed', session: 'other', created: '2026-06-01T12:00:00Z', policy: 'other' }),
    ];
    // `since` with milliseconds (a lastDigestAt) starts at its second, as the store's stamps do.
    const d = collectDigest(input({ notifications, since: SINCE + 300 }));
    expect(d.runs.succeeded).toBe(2);
    expect(d.since).toBe('2026-06-01T07:00:00.000Z');
    expect(d.until).toBe('2026-06-02T07:00:00.000Z');
    // The next digest, from this one's `now`, counts the one stamped at now: each is counted once.
    const next = collectDigest(input({ notifications, since: NOW, now: NOW + 24 * 3600_000 }));
    expect(next.runs.succeeded).toBe(1);
  });

  it('lists the notifications held back now, whenever recorded, and names the Digest ones as digestItems', () => {
    const overBudget = notif({
      reason: 'Completed',
      session: 'x',
      created: '2026-05-30T21:00:00Z', // before the window: still held back, still listed
      phase: 'Digest',
      why: 'budget',
    });
    const sameOnSlack = notif({
      ...{ reason: 'Completed', session: 'x' },
      channel: 'slack',
      created: '2026-05-30T21:00:00Z',
      phase: 'Digest',
    });
    const quiet = notif({
      reason: 'Stalled',
      session: 'y',
      tier: 2,
      created: '2026-06-01T23:10:00Z',
      phase: 'Deferred',
      why: 'quietHours',
      until: '2026-06-02T07:00:00Z',
    });
    const batch = notif({
      reason: 'x',
      source: 'batch',
      title: '3 updates from orchctl',
      created: '2026-06-01T23:00:00Z',
      phase: 'Deferred',
    });
    const sent = notif({ reason: 'Completed', session: 'z', created: '2026-06-01T10:00:00Z', phase: 'Sent' });
    const otherPolicy = notif({
      reason: 'Completed',
      created: '2026-06-01T10:00:00Z',
      phase: 'Digest',
      policy: 'other',
    });
    const d = collectDigest(input({ notifications: [quiet, overBudget, sameOnSlack, batch, sent, otherPolicy] }));
    expect(d.deferred).toEqual([
      {
        name: overBudget.metadata.name,
        channels: ['default', 'slack'],
        tier: 3,
        title: 'Completed: AgentSession default/x',
        at: '2026-05-30T21:00:00Z',
        phase: 'Digest',
        why: 'budget',
      },
      {
        name: batch.metadata.name,
        channels: ['default'],
        tier: 3,
        title: '3 updates from orchctl',
        at: '2026-06-01T23:00:00Z',
        phase: 'Deferred',
      },
      {
        name: quiet.metadata.name,
        channels: ['default'],
        tier: 2,
        title: 'Stalled: AgentSession default/y',
        at: '2026-06-01T23:10:00Z',
        phase: 'Deferred',
        why: 'quietHours',
        until: '2026-06-02T07:00:00Z',
      },
    ]);
    expect(d.digestItems).toEqual([overBudget.metadata.name, sameOnSlack.metadata.name].sort());
  });

  it('lists the sessions waiting for input now, oldest first', () => {
    const sessions = [
      session('busy'),
      session('late', { since: '2026-06-02T06:40:00Z', message: 'Proceed with the migration? (y/n)' }),
      session('early', { since: '2026-06-01T22:00:00Z', message: 'Which branch?' }),
    ];
    const d = collectDigest(input({ sessions }));
    expect(d.waiting).toEqual([
      { session: 'default/early', since: '2026-06-01T22:00:00Z', message: 'Which branch?' },
      { session: 'default/late', since: '2026-06-02T06:40:00Z', message: 'Proceed with the migration? (y/n)' },
    ]);
    expect(d.empty).toBe(false);
  });

  it('lists a run a budget with action Stop ended as blocked (after blocked work); a budget pause is not', () => {
    const withStatus = (name: string, status: Record<string, unknown>) => {
      const s = session(name);
      Object.assign(s.status!, status);
      return s;
    };
    const message = 'stopped at an idle point: SessionPolicy "team" budget exceeded (2.1M/2.0M in 24h)';
    const sessions = [
      withStatus('paused', { reason: 'BudgetExceeded', message: 'paused at an idle point: …' }),
      withStatus('stopped', { phase: 'Failed', reason: 'BudgetExceeded', message, completionTime: SINCE }),
      withStatus('reported', { report: { status: 'blocked', blocker: 'Which database?' } }),
    ];
    const d = collectDigest(input({ sessions }));
    expect(d.blocked).toEqual([
      { object: 'session default/reported', message: 'Which database?' },
      { object: 'session default/stopped', message, since: SINCE },
    ]);
  });

  it('takes evaluations judged in the window (or created, not judged yet) with their average score', () => {
    const evaluations = [
      evaluation('old', { created: '2026-05-31T12:00:00Z', score: 1 }),
      // Created before the window, judged inside it: this digest reports it.
      evaluation('late-verdict', {
        created: '2026-06-01T06:59:00Z',
        evaluatedAt: '2026-06-01T07:01:00.250Z',
        score: 4,
      }),
      evaluation('good', { created: '2026-06-01T10:00:00Z', score: 5, session: 's2', run: 3 }),
      evaluation('waiting', { created: '2026-06-01T11:00:00Z' }),
    ];
    const d = collectDigest(input({ evaluations }));
    expect(d.evaluations.map((e) => [e.name, e.score, e.phase])).toEqual([
      ['late-verdict', 4, 'Judged'],
      ['good', 5, 'Judged'],
      ['waiting', undefined, 'Pending'],
    ]);
    expect(d.evaluations[1]).toMatchObject({ session: 's2', run: 3, outcome: 'success', recommendation: 'complete' });
    expect(d.averageScore).toBe(4.5);
  });

  it("reports each of the policy's channels' budget from its status", () => {
    const channels = [
      channel('default', 'command', {
        day: '2026-06-02',
        sent: 20,
        budget: 20,
        digest: 4,
        deferred: 1,
        failing: false,
      }),
      channel('slack', 'webhook', { day: '2026-06-02', sent: 3, budget: 20, failing: true }),
      channel('unused', 'email', { sent: 9, budget: 10 }),
    ];
    const d = collectDigest(input({ channels }));
    expect(d.budget).toEqual([
      {
        channel: 'default',
        type: 'command',
        day: '2026-06-02',
        sent: 20,
        budget: 20,
        deferred: 1,
        batched: 0,
        digest: 4,
        failing: false,
      },
      {
        channel: 'slack',
        type: 'webhook',
        day: '2026-06-02',
        sent: 3,
        budget: 20,
        deferred: 0,
        batched: 0,
        digest: 0,
        failing: true,
      },
    ]);
  });

  it('is empty when nothing happened, nobody waits and nothing is held back; the data is plain JSON', () => {
    const d = collectDigest(input({ sessions: [session('idle')], channels: [channel('default', 'command')] }));
    expect(d.empty).toBe(true);
    expect(d.timeZone).toBe('UTC');
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });
});
