/**
 * Events shaped as the recorder writes them (client/events.ts), the shipped default policy, and a
 * small model of what the outbox will hand the decision: each decision applied to plain state.
 */
import fs from 'node:fs';
import { parse } from 'yaml';
import type { EventObject, EventType } from '../../../../controller/api/event.js';
import type { NotificationPolicy, NotificationPolicySpec } from '../../../../controller/api/notification.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import type { DecideResult, NotifierState } from '../../../../controller/reconcilers/notifier/decide.js';
import { eventKey } from '../../../../controller/reconcilers/notifier/matchers.js';
import { budgetDay } from '../../../../controller/notify/quiet-hours.js';

export const at = (iso: string): number => {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`bad time ${iso}`);
  return t;
};

export const HOUR = 3_600_000;

/** An Event about AgentSession `session` (namespace default) with the recorder's kind of name. */
export function ev(
  reason: string,
  session = 's1',
  opts: { type?: EventType; count?: number; kind?: string; message?: string } = {},
): EventObject {
  const now = '2026-06-01T12:00:00.000Z';
  return {
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { name: `${session}.${reason.toLowerCase()}`, namespace: 'default' },
    involvedObject: { apiVersion: API_VERSION, kind: opts.kind ?? 'AgentSession', name: session, namespace: 'default' },
    reason,
    message: opts.message ?? `${reason} on ${session}`,
    type: opts.type ?? 'Warning',
    count: opts.count ?? 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: { component: 'orchctl-controller', host: 'test' },
    reportingController: 'orchctl-controller',
  };
}

export function defaultPolicy(): NotificationPolicy {
  return parse(fs.readFileSync(new URL('./default-policy.yaml', import.meta.url), 'utf8')) as NotificationPolicy;
}

/**
 * The outbox as the decision sees it: sends count against the day's budget and stamp their
 * group, batches grow and empty when a message takes them along, warnings are remembered for
 * the day. A new day (in the policy's time zone) starts the count again.
 */
export class OutboxModel {
  state: NotifierState = {};
  private day = '';

  constructor(private readonly policy: NotificationPolicySpec) {}

  /** The state for a decision at `now` (a new budget day resets the counts). */
  at(now: number): NotifierState {
    const day = budgetDay(now, this.policy.timeZone ?? 'UTC').key;
    if (day !== this.day) {
      this.day = day;
      this.state.sentToday = {};
    }
    return this.state;
  }

  apply(now: number, event: EventObject | undefined, result: Pick<DecideResult, 'decisions' | 'warnings'>): void {
    const s = this.state;
    for (const w of result.warnings) s.budgetWarnedDay = { ...s.budgetWarnedDay, [w.channel]: w.day };
    for (const d of result.decisions) {
      if (d.action === 'suppress') continue;
      const channel = { ...s.groups?.[d.channel] };
      const g = { ...channel[d.groupKey] };
      channel[d.groupKey] = g;
      s.groups = { ...s.groups, [d.channel]: channel };
      if (event) g.notified = { ...g.notified, [eventKey(event)]: now };
      if (d.action === 'send') {
        s.sentToday = { ...s.sentToday, [d.channel]: (s.sentToday?.[d.channel] ?? 0) + 1 };
        g.lastSentAt = now;
        if (d.flushesBatch) delete s.batches?.[d.channel];
      }
      if (d.action === 'batch') {
        const b = s.batches?.[d.channel];
        s.batches = { ...s.batches, [d.channel]: { items: (b?.items ?? 0) + 1, openedAt: b?.openedAt ?? now } };
      }
    }
  }
}
