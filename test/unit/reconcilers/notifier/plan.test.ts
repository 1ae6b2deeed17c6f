/**
 * The router's plan on a fake clock, with a small model of the store applying each plan the way
 * the reconciler's transaction does: the Event cursor, idempotent names, deferrals coming due,
 * tier-3 batches flushed on time or early, the budget sending tier 2/3 to the digest, what is
 * never routed, and what is old enough to delete.
 */
import { describe, expect, it } from 'vitest';
import type { EventObject } from '../../../../controller/api/event.js';
import type { NotificationPolicy } from '../../../../controller/api/notification.js';
import type { Notification, NotificationPolicyStatus } from '../../../../controller/api/outbox.js';
import { planRouting, RETENTION_MS, type RouterPlan } from '../../../../controller/reconcilers/notifier/plan.js';
import { at, defaultPolicy, ev, HOUR } from './fixtures.js';

/** The store as the router sees it: the policy (with its cursor), the outbox, the Events with revisions. */
class World {
  policy: NotificationPolicy;
  outbox = new Map<string, Notification>();
  events: EventObject[] = [];
  rev = 0;
  uid = 0;
  /** What the router would read of the involved object's conditions (plan.ts RouterInput.stillTrue). */
  stillTrue?: (e: EventObject) => boolean | undefined;

  constructor(createdAt = '2026-06-01T09:00:00Z') {
    const metadata = { name: 'default', namespace: 'default', creationTimestamp: createdAt };
    this.policy = { ...defaultPolicy(), metadata };
  }

  /** Records an Event (or bumps its count, as the recorder does) at `time`. */
  event(e: EventObject, time: string): EventObject {
    const old = this.events.find((x) => x.metadata.name === e.metadata.name);
    const next: EventObject = {
      ...e,
      count: old ? old.count + 1 : e.count,
      lastTimestamp: time,
      metadata: { ...e.metadata, resourceVersion: String(++this.rev) },
    };
    this.events = [...this.events.filter((x) => x !== old), next];
    return next;
  }

  plan(
    now: string,
    opts: { channels?: Record<string, { dailyBudget?: number }>; retentionMs?: number } = {},
  ): RouterPlan {
    return planRouting({
      retentionMs: opts.retentionMs,
      now: at(now),
      policy: this.policy,
      channels: opts.channels ?? {},
      outbox: [...this.outbox.values()],
      events: this.events,
      silences: [],
      stillTrue: this.stillTrue,
    });
  }

  /** Plans and applies the plan as the transaction would (the store stamps creation times and uids). */
  step(now: string, opts: { channels?: Record<string, { dailyBudget?: number }> } = {}): RouterPlan {
    const p = this.plan(now, opts);
    for (const n of p.create) {
      if (this.outbox.has(n.metadata.name)) throw new Error(`AlreadyExists: ${n.metadata.name}`);
      const stamped = { uid: `u${++this.uid}`, creationTimestamp: now, resourceVersion: String(++this.rev) };
      const meta = { ...n.metadata, ...stamped };
      this.outbox.set(n.metadata.name, { ...n, metadata: meta });
    }
    for (const n of p.update) this.outbox.set(n.metadata.name, { ...n, metadata: { ...n.metadata } });
    for (const n of p.delete) this.outbox.delete(n.metadata.name);
    this.policy = { ...this.policy, status: p.status };
    return p;
  }

  /** Delivery's part: every Pending message sent at `now`. */
  deliver(now: string): void {
    for (const [k, n] of this.outbox) {
      if (n.status?.phase !== 'Pending') continue;
      this.outbox.set(k, { ...n, status: { ...n.status, phase: 'Sent', sentAt: now } });
    }
  }

  byPhase(phase: string): Notification[] {
    return [...this.outbox.values()].filter((n) => n.status?.phase === phase);
  }

  get cursor(): string | undefined {
    return (this.policy.status as NotificationPolicyStatus | undefined)?.eventRevision;
  }
}

describe('the router plan', () => {
  it('routes only Events since the policy was created, then from its cursor', () => {
    const w = new World('2026-06-01T09:00:00Z');
    w.event(ev('Escalated', 'old'), '2026-06-01T08:59:00Z');
    w.event(ev('Escalated', 'new'), '2026-06-01T09:00:30Z');
    const p = w.step('2026-06-01T09:01:00Z');
    expect(p.create.map((n) => n.spec!.event!.involvedObject.name)).toEqual(['new']);
    expect(w.cursor).toBe('2');
    const third = w.event(ev('WaitingForInput', 'third', { type: 'Normal' }), '2026-06-01T09:02:00Z');
    expect(w.step('2026-06-01T09:02:01Z').create.map((n) => n.spec!.event!.reason)).toEqual(['WaitingForInput']);
    expect(w.cursor).toBe(third.metadata.resourceVersion);
  });

  it('records an Event once: a replay (cursor lost) makes the same names and nothing new', () => {
    const w = new World();
    w.event(ev('Escalated'), '2026-06-01T10:00:00Z');
    const first = w.step('2026-06-01T10:00:01Z');
    expect(first.create).toHaveLength(1);
    expect(first.create[0].status).toEqual({ phase: 'Pending', attempts: 0 });
    w.policy = { ...w.policy, status: {} }; // as if the cursor write had been lost
    w.policy.metadata.creationTimestamp = '2026-06-01T09:00:00Z';
    expect(w.step('2026-06-01T10:00:02Z').create).toEqual([]);
  });

  it('a count bump within the repeat interval is not recorded; after it, a new notification', () => {
    const w = new World();
    w.event(ev('Escalated'), '2026-06-01T10:00:00Z');
    w.step('2026-06-01T10:00:01Z');
    w.deliver('2026-06-01T10:00:01Z');
    w.event(ev('Escalated'), '2026-06-01T11:00:00Z');
    const bump = w.step('2026-06-01T11:00:01Z');
    expect(bump.create).toEqual([]);
    expect(bump.results).toEqual([{ channel: 'default', tier: 1, result: 'suppressed' }]);
    w.event(ev('Escalated'), '2026-06-01T14:30:00Z');
    const later = w.step('2026-06-01T14:30:01Z');
    expect(later.create.map((n) => [n.spec!.event!.count, n.status!.phase])).toEqual([[3, 'Pending']]);
  });

  it('tier 2 in quiet hours is deferred to their end, then sent; `next` wakes the router then', () => {
    const w = new World();
    w.event(ev('Stalled'), '2026-06-01T23:00:00Z');
    const night = w.step('2026-06-01T23:00:01Z');
    expect(night.create[0].status).toMatchObject({ phase: 'Deferred', reason: 'quietHours' });
    expect(night.create[0].status!.until).toBe('2026-06-02T07:00:00.000Z');
    expect(night.next).toBe(at('2026-06-02T07:00:00Z'));
    expect(w.step('2026-06-02T06:59:59Z').update).toEqual([]);
    const morning = w.step('2026-06-02T07:00:00Z');
    expect(morning.update.map((n) => n.status!.phase)).toEqual(['Pending']);
    expect(w.byPhase('Pending')).toHaveLength(1);
  });

  it('a deferral for quiet hours is decided again when the policy no longer has them, not at the old end', () => {
    const w = new World();
    w.event(ev('Stalled'), '2026-06-01T23:00:00Z');
    w.step('2026-06-01T23:00:01Z');
    expect(w.byPhase('Deferred')).toHaveLength(1);
    w.policy = { ...w.policy, spec: { ...w.policy.spec!, quietHours: undefined } };
    const p = w.step('2026-06-01T23:05:00Z');
    expect(p.update.map((n) => [n.spec!.event!.reason, n.status!.phase])).toEqual([['Stalled', 'Pending']]);
  });

  it('a deferral for quiet hours follows quiet hours that now end earlier', () => {
    const w = new World();
    w.event(ev('Stalled'), '2026-06-01T23:00:00Z');
    w.step('2026-06-01T23:00:01Z');
    w.policy = { ...w.policy, spec: { ...w.policy.spec!, quietHours: [{ start: '22:00', end: '05:00' }] } };
    const p = w.step('2026-06-01T23:05:00Z');
    expect(p.update.map((n) => [n.status!.phase, n.status!.until])).toEqual([['Deferred', '2026-06-02T05:00:00.000Z']]);
    expect(w.step('2026-06-01T23:06:00Z').update).toEqual([]);
  });

  it('a question answered within its grace is not sent; one still open after it is, at tier 1', () => {
    const w = new World();
    const open = new Set(['b']);
    w.stillTrue = (e) => open.has(e.involvedObject.name);
    w.event(ev('WaitingForInput', 'a', { type: 'Normal' }), '2026-06-01T10:00:00Z');
    w.event(ev('WaitingForInput', 'b', { type: 'Normal' }), '2026-06-01T10:00:00Z');
    const first = w.step('2026-06-01T10:00:01Z');
    expect(first.create.map((n) => [n.status!.phase, n.status!.reason])).toEqual([
      ['Deferred', 'groupWait'],
      ['Deferred', 'groupWait'],
    ]);
    const later = w.step('2026-06-01T10:02:01Z');
    expect(later.update.map((n) => [n.spec!.event!.involvedObject.name, n.spec!.tier, n.status!.phase])).toEqual([
      ['a', 1, 'Suppressed'],
      ['b', 1, 'Pending'],
    ]);
    expect(later.update[0].status!.reason).toBe('resolved');
  });

  it('the third Warning of one reason within the hour goes a tier up (tier 3 to 2, taking the batch along)', () => {
    const w = new World();
    for (const [i, s] of ['a', 'b', 'c'].entries()) w.event(ev('Error', s), `2026-06-01T10:0${i}:00Z`);
    const p = w.step('2026-06-01T10:03:00Z');
    expect(p.create.map((n) => [n.spec!.event!.involvedObject.name, n.spec!.tier, n.status!.phase])).toEqual([
      ['a', 3, 'Flushed'],
      ['b', 3, 'Flushed'],
      ['c', 2, 'Pending'],
    ]);
  });

  it('Warnings older than the repeat window do not count', () => {
    const w = new World();
    w.event(ev('Error', 'a'), '2026-06-01T08:00:00Z');
    w.event(ev('Error', 'b'), '2026-06-01T08:01:00Z');
    w.event(ev('Error', 'c'), '2026-06-01T10:00:00Z');
    const p = w.step('2026-06-01T10:00:01Z');
    expect(p.create.filter((n) => n.spec!.tier === 3)).toHaveLength(p.create.length);
  });

  it('tier 3 is batched and flushed as one message when the interval is up', () => {
    const w = new World();
    w.event(ev('Completed', 'a', { type: 'Normal' }), '2026-06-01T10:00:00Z');
    w.event(ev('Error', 'b'), '2026-06-01T10:30:00Z');
    w.step('2026-06-01T10:00:01Z');
    w.step('2026-06-01T10:30:01Z');
    expect(w.byPhase('Batched')).toHaveLength(2);
    const flush = w.step('2026-06-01T14:00:01Z');
    const [batch] = flush.create;
    expect(batch.spec).toMatchObject({ source: 'batch', tier: 3, title: '2 updates from orchctl' });
    expect(batch.spec!.items).toHaveLength(2);
    expect(batch.spec!.body).toContain('Completed: AgentSession default/a');
    expect(w.byPhase('Flushed').every((n) => n.status!.sentWith === batch.metadata.name)).toBe(true);
    expect(w.step('2026-06-01T14:00:02Z').create).toEqual([]);
  });

  it('a tier 1 message takes the pending batch along (an early flush)', () => {
    const w = new World();
    w.event(ev('Completed', 'a', { type: 'Normal' }), '2026-06-01T10:00:00Z');
    w.step('2026-06-01T10:00:01Z');
    w.event(ev('Escalated', 'b'), '2026-06-01T10:05:00Z');
    const p = w.step('2026-06-01T10:05:01Z');
    const urgent = p.create.find((n) => n.spec!.tier === 1)!;
    expect(urgent.spec!.body).toMatch(/Also \(1 update from orchctl\):\n- Completed: AgentSession default\/a/);
    expect(w.byPhase('Flushed')[0].status!.sentWith).toBe(urgent.metadata.name);
    expect(w.byPhase('Batched')).toEqual([]);
  });

  it('past the budget tier 2 goes to the digest and tier 1 is still sent; one warning at 80 %', () => {
    const w = new World();
    const channels = { default: { dailyBudget: 5 } };
    for (let i = 0; i < 4; i++) {
      w.event(ev('Escalated', `s${i}`), `2026-06-01T10:0${i}:00Z`);
      const p = w.step(`2026-06-01T10:0${i}:01Z`, { channels });
      w.deliver(`2026-06-01T10:0${i}:01Z`);
      expect(p.warnings.map((x) => x.used)).toEqual(i === 3 ? [4] : []);
    }
    expect((w.policy.status as NotificationPolicyStatus).budgetWarned).toEqual({ default: '2026-06-01' });
    w.event(ev('Escalated', 's4'), '2026-06-01T10:10:00Z');
    w.step('2026-06-01T10:10:01Z', { channels });
    w.deliver('2026-06-01T10:10:01Z');
    w.event(ev('Stalled', 's5'), '2026-06-01T10:11:00Z');
    w.event(ev('Escalated', 's6'), '2026-06-01T10:11:00Z');
    const over = w.step('2026-06-01T10:12:00Z', { channels });
    expect(over.warnings).toEqual([]);
    expect(over.create.map((n) => [n.spec!.event!.reason, n.status!.phase])).toEqual([
      ['Stalled', 'Digest'],
      ['Escalated', 'Pending'],
    ]);
    expect(over.create[0].status!.message).toBe('past the daily budget (5/5)');
  });

  it("tells a failing channel's NotificationFailed on the other channels, never itself; tier 4 is Suppressed", () => {
    const w = new World();
    w.event(ev('NotificationFailed', 'ops', { kind: 'NotificationChannel' }), '2026-06-01T10:00:00Z');
    w.event(ev('NotificationFailed', 'default', { kind: 'NotificationChannel' }), '2026-06-01T10:00:00Z');
    w.event(ev('NotificationBudget', 'ops', { kind: 'NotificationChannel' }), '2026-06-01T10:00:00Z');
    w.event(ev('Started', 's1', { type: 'Normal' }), '2026-06-01T10:00:00Z');
    const p = w.step('2026-06-01T10:00:01Z');
    expect(
      p.create.map((n) => [
        n.spec!.event!.reason,
        n.spec!.event!.involvedObject.name,
        n.spec!.channel,
        n.status!.phase,
      ]),
    ).toEqual([
      ['NotificationFailed', 'ops', 'default', 'Pending'],
      ['Started', 's1', 'default', 'Suppressed'],
    ]);
  });

  it('deletes finished notifications older than the retention, never pending ones', () => {
    const w = new World();
    w.event(ev('Escalated', 'a'), '2026-06-01T10:00:00Z');
    w.step('2026-06-01T10:00:01Z');
    w.deliver('2026-06-01T10:00:02Z');
    w.event(ev('Stalled', 'b'), '2026-06-01T23:00:00Z');
    w.step('2026-06-01T23:00:01Z');
    expect(w.byPhase('Deferred')).toHaveLength(1);
    const later = new Date(at('2026-06-01T10:00:02Z') + RETENTION_MS + HOUR).toISOString();
    w.policy.spec!.quietHours = [];
    const p = w.plan(later);
    expect(p.delete.map((n) => n.spec!.event!.involvedObject.name)).toEqual(['a']);
  });

  it('keeps settled notifications for the retention it is given (--notification-retention), not 48 h', () => {
    const w = new World();
    w.event(ev('Escalated', 'a'), '2026-06-01T10:00:00Z');
    w.step('2026-06-01T10:00:01Z');
    w.deliver('2026-06-01T10:00:02Z');
    const names = (p: RouterPlan) => p.delete.map((n) => n.spec!.event!.involvedObject.name);
    expect(names(w.plan('2026-06-01T10:04:00Z', { retentionMs: 5 * 60_000 }))).toEqual([]);
    expect(names(w.plan('2026-06-01T10:06:00Z', { retentionMs: 5 * 60_000 }))).toEqual(['a']);
    expect(names(w.plan('2026-06-01T10:06:00Z'))).toEqual([]);
  });
});
