/**
 * renderDigestTemplate: deterministic plain text that always lists the notifications held back,
 * fits the channel's limit by cutting lists least important first (each ending "… N more"), and
 * never throws.
 */
import { describe, expect, it } from 'vitest';
import {
  collectDigest,
  type DigestData,
  DIGEST_MAX_CHARS,
  digestMaxChars,
  renderDigestTemplate,
} from '../../../../controller/notify/digest/index.js';
import { channel, evaluation, NOW, notif, policy, SINCE, session } from './digest-fixtures.js';

function busyDay(opts: { deferred?: number; failed?: number; timeZone?: string } = {}): DigestData {
  const p = policy();
  if (opts.timeZone) p.spec!.timeZone = opts.timeZone;
  const notifications = [
    notif({ reason: 'Started', session: 'a', created: '2026-06-01T08:00:00Z', phase: 'Suppressed' }),
    notif({ reason: 'Completed', session: 'a', created: '2026-06-01T09:00:00Z' }),
    notif({
      reason: 'Escalated',
      session: 'c',
      tier: 1,
      created: '2026-06-01T12:05:00Z',
      message: 'breaker opened 3x',
    }),
    notif({ reason: 'AutopilotNotice', session: 'd', created: '2026-06-01T13:00:00Z', message: 'restarted d' }),
  ];
  for (let i = 0; i < (opts.failed ?? 1); i++)
    notifications.push(
      notif({ reason: 'Error', session: `f${i}`, created: '2026-06-01T11:00:00Z', message: `Run 1 Failed: exit ${i}` }),
    );
  for (let i = 0; i < (opts.deferred ?? 2); i++)
    notifications.push(
      notif({
        reason: 'Completed',
        session: `held${String(i).padStart(3, '0')}`,
        created: '2026-06-01T21:14:00Z',
        phase: 'Digest',
        why: 'budget',
      }),
    );
  notifications.push(
    notif({
      reason: 'Stalled',
      session: 'quiet',
      tier: 2,
      created: '2026-06-01T23:10:00Z',
      phase: 'Deferred',
      why: 'quietHours',
      until: '2026-06-02T07:00:00Z',
    }),
  );
  return collectDigest({
    now: NOW,
    since: SINCE,
    policy: p,
    notifications,
    sessions: [session('w', { since: '2026-06-02T06:40:00Z', message: 'Proceed?\nIGNORE THIS\tline' })],
    evaluations: [evaluation('e1', { created: '2026-06-01T10:00:00Z', score: 4, session: 'a', run: 2 })],
    channels: [channel('default', 'command', { day: '2026-06-02', sent: 20, budget: 20, digest: 2, failing: true })],
  });
}

describe('renderDigestTemplate', () => {
  it('writes every section as plain text, times on the digest’s wall clock', () => {
    const t = renderDigestTemplate(busyDay(), 16_000);
    expect(t.title).toBe('orchctl digest default/default: 2 need you, 1 failed run, 3 succeeded, 3 held back');
    expect(t.body).toBe(
      [
        'Since 2026-06-01 07:00 until 2026-06-02 07:00 (UTC).',
        'Needs you now: 2 (0 pending decisions, 1 waiting for input, 0 blocked, 1 open escalation).',
        'Runs: 1 started, 3 succeeded, 1 failed. Autopilot notices: 1. Evaluations: 1 (average 4/5).',
        'Held back: 3 (2 past the daily budget, 1 deferred).',
        '',
        'Needs you now (2):',
        '- session default/w waits for input since 06:40: Proceed? IGNORE THIS line',
        // Its session is not in the store any more: it cannot say it recovered, so it stays open.
        '- session default/c escalated since 06-01 12:05: breaker opened 3x',
        '',
        'What happened, per project (1):',
        '- (no project): runs 1 started, 3 succeeded, 1 failed (Error x1: f0)',
        '',
        'Evaluations (1):',
        '- a run 2: 4/5 success, complete',
        '',
        'Autopilot notices (1):',
        '- default/d AutopilotNotice at 06-01 13:00: restarted d',
        '',
        'Held back (3):',
        '- [tier 3] Completed: AgentSession default/held000 - past the daily budget, since 06-01 21:14 (default)',
        '- [tier 3] Completed: AgentSession default/held001 - past the daily budget, since 06-01 21:14 (default)',
        '- [tier 2] Stalled: AgentSession default/quiet - held for quietHours until 07:00, since 06-01 23:10 (default)',
        '',
        'Notification budget used (1):',
        '- default: 20/20 sent on 2026-06-02, 2 for the digest, FAILING',
      ].join('\n'),
    );
    // Deterministic: the same data gives the same text.
    expect(renderDigestTemplate(busyDay(), 16_000)).toEqual(t);
  });

  it('shows times in the digest’s time zone', () => {
    const t = renderDigestTemplate(busyDay({ timeZone: 'America/New_York' }), 16_000);
    expect(t.body).toMatch(/^Since 2026-06-01 03:00 until 2026-06-02 03:00 \(America\/New_York\)\./);
    expect(t.body).toContain('held for quietHours until 03:00, since 06-01 19:10');
  });

  it('cuts lists least important first to fit, each ending "… N more", and keeps the held-back list longest', () => {
    const d = busyDay({ deferred: 120, failed: 40 });
    const t = renderDigestTemplate(d, DIGEST_MAX_CHARS.slack);
    expect(t.body.length).toBeLessThanOrEqual(DIGEST_MAX_CHARS.slack);
    expect(t.body).toContain('Held back (121):');
    expect(t.body).toMatch(/- \[tier 3\] Completed: AgentSession default\/held000 - past the daily budget/);
    const heldShown = t.body.split('\n').filter((l) => l.startsWith('- [tier')).length;
    expect(heldShown).toBeGreaterThan(3);
    expect(t.body).toContain(`- … ${121 - heldShown} more`);
    // 40 failed runs are one line: grouped by how they ended, the first sessions named.
    expect(t.body).toContain(
      '- (no project): runs 1 started, 121 succeeded, 40 failed (Error x40: f0, f1, f2, f3, f4 and 35 more)',
    );
    // Needs you now is never cut.
    expect(t.body).toContain('- session default/w waits for input since 06:40');
    // Nothing is cut when it fits.
    const roomy = renderDigestTemplate(d, DIGEST_MAX_CHARS.email);
    expect(roomy.body).not.toContain('… ');
  });

  it('at the smallest limit, lists are cut to nothing but their "… N more" and the text still fits', () => {
    const t = renderDigestTemplate(busyDay({ deferred: 50, failed: 20 }), 700);
    expect(t.body.length).toBeLessThanOrEqual(700);
    expect(t.body).toContain('Held back (51):');
    expect(t.body).toMatch(/Autopilot notices \(1\):\n- … 1 more/);
    expect(t.body).toContain('Needs you now (2):\n- session default/w');
  });

  it('the title (an email subject) is never cut inside a word', () => {
    const d = busyDay();
    d.policy = `nightly-${'x'.repeat(100)}`;
    const full = `orchctl digest default/${d.policy}: 2 need you, 1 failed run, 3 succeeded, 3 held back`;
    const t = renderDigestTemplate(d, 16_000);
    expect(t.title.length).toBeLessThanOrEqual(150);
    expect(t.title.endsWith('…')).toBe(true);
    const kept = t.title.slice(0, -1);
    expect(full.startsWith(kept)).toBe(true);
    // What follows the kept text in the full title is a word boundary.
    expect(full.slice(kept.length)).toMatch(/^[ ,:]/);
  });

  it('never throws, not on broken data, not on a tiny limit', () => {
    const broken = { ...busyDay(), deferred: null } as unknown as DigestData;
    const t = renderDigestTemplate(broken, 500);
    expect(t.title).toBe('orchctl digest');
    expect(t.body).toMatch(/could not be written out/);
    expect(renderDigestTemplate(busyDay(), 10).body.length).toBeLessThanOrEqual(10);
  });

  it('has a limit per channel type: Slack, ntfy, command, email, JSON webhook', () => {
    expect(digestMaxChars('webhook', 'slack')).toBe(2800);
    expect(digestMaxChars('ntfy')).toBe(3500);
    expect(digestMaxChars('command')).toBe(4000);
    expect(digestMaxChars('email')).toBe(16_000);
    expect(digestMaxChars('webhook')).toBe(16_000);
    // ntfy counts bytes: the template at its limit stays under 4096 bytes.
    const t = renderDigestTemplate(busyDay({ deferred: 200 }), digestMaxChars('ntfy'));
    expect(Buffer.byteLength(t.body, 'utf8')).toBeLessThan(4096);
  });
});
