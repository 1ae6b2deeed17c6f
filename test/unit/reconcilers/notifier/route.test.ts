/**
 * The notification routing engine on a fake clock (`now` is an input): a table of Events with
 * the decision expected on each channel, then sequences run against a model of the outbox
 * (budget warning once a day, a tier-3 batch flushed early), routing and inheritance through the
 * route tree, and the default policy manifests/notifications/ is to ship.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventObject } from '../../../../controller/api/event.js';
import type {
  NotificationDecision,
  NotificationPolicySpec,
  NotificationTier,
  Silence,
} from '../../../../controller/api/notification.js';
import { validateNotificationPolicy } from '../../../../controller/api/notification.js';
import { API_VERSION, type Resource } from '../../../../controller/api/types.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import {
  decide,
  decideFlush,
  type DecideInput,
  type NotifierState,
} from '../../../../controller/reconcilers/notifier/decide.js';
import { eventKey, notificationFields } from '../../../../controller/reconcilers/notifier/matchers.js';
import { route } from '../../../../controller/reconcilers/notifier/route.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';
import { at, defaultPolicy, ev, HOUR, OutboxModel } from './fixtures.js';

const SAME_SESSION = ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name'];

/** Europe/Berlin, quiet 22:00–07:00, ten messages a day per channel. */
const POLICY: NotificationPolicySpec = {
  timeZone: 'Europe/Berlin',
  quietHours: [{ start: '22:00', end: '07:00' }],
  dailyBudget: 10,
  route: {
    channels: ['phone'],
    routes: [
      { matchers: ['reason=~"WaitingForInput|Escalated"'], tier: 1 },
      { matchers: ['labels.team="infra"'], continue: true, tier: 2, channels: ['pager'] },
      { matchers: ['reason=~"Stalled|BackOff"'], tier: 2 },
      { matchers: ['reason="Completed"'], tier: 3 },
    ],
  },
  inhibit: [
    {
      name: 'escalated-mutes-backoff',
      sourceMatchers: ['reason="Escalated"'],
      targetMatchers: ['reason="BackOff"'],
      equal: SAME_SESSION,
    },
  ],
};

const URGENT = 'route.routes[0]';
const INFRA = 'route.routes[1]';
const ACTION = 'route.routes[2]';
const SUMMARY = 'route.routes[3]';
const TIERS: Record<string, NotificationTier> = { route: 4, [URGENT]: 1, [INFRA]: 2, [ACTION]: 2, [SUMMARY]: 3 };

const gk = (r: string, session = 's1') =>
  `${r}:{involvedObject.kind="AgentSession",involvedObject.namespace="default",involvedObject.name="${session}"}`;

/** The expected decision on `channel` for an Event taken by route `r` about `session`. */
function want(channel: string, r: string, rest: Record<string, unknown>, session = 's1'): NotificationDecision {
  return { channel, tier: TIERS[r], route: r, groupKey: gk(r, session), ...rest } as NotificationDecision;
}

// Wednesday 3 June 2026 in Berlin (CEST, UTC+2): noon, and 23:30 with quiet hours until 07:00.
const DAY = '2026-06-03T10:00:00Z';
const NIGHT = '2026-06-03T21:30:00Z';
const MORNING = at('2026-06-04T05:00:00Z');

const silence = (name: string, matchers: string[], startsAt: string, endsAt: string): Silence => ({
  apiVersion: API_VERSION,
  kind: 'Silence',
  metadata: { name, namespace: 'default' },
  spec: { matchers, startsAt, endsAt, createdBy: 'test' },
});

type Case = {
  name: string;
  now: string;
  event: EventObject;
  labels?: Record<string, string>;
  policy?: Partial<NotificationPolicySpec>;
  channels?: DecideInput['channels'];
  state?: NotifierState;
  due?: DecideInput['due'];
  repeats?: number;
  expect: NotificationDecision[];
};

const notifiedAt = (r: string, event: EventObject, t: number, session = 's1'): NotifierState => ({
  groups: { phone: { [gk(r, session)]: { notified: { [eventKey(event)]: t } } } },
});

const CASES: Case[] = [
  // ---- tiers and the budget
  {
    name: 'tier 1 is sent at once',
    now: DAY,
    event: ev('WaitingForInput'),
    expect: [want('phone', URGENT, { action: 'send' })],
  },
  {
    name: 'tier 1 is sent in quiet hours',
    now: NIGHT,
    event: ev('Escalated'),
    expect: [want('phone', URGENT, { action: 'send' })],
  },
  {
    name: 'budget exhausted: tier 1 still sends',
    now: DAY,
    event: ev('Escalated'),
    state: { sentToday: { phone: 10 } },
    expect: [want('phone', URGENT, { action: 'send' })],
  },
  {
    name: 'budget exhausted: tier 2 goes to the digest',
    now: DAY,
    event: ev('Stalled'),
    state: { sentToday: { phone: 10 } },
    expect: [want('phone', ACTION, { action: 'digest', why: 'budget', used: 10, budget: 10 })],
  },
  {
    name: 'budget exhausted: tier 3 goes to the digest, not into the batch',
    now: DAY,
    event: ev('Completed', 's1', { type: 'Normal' }),
    state: { sentToday: { phone: 12 } },
    expect: [want('phone', SUMMARY, { action: 'digest', why: 'budget', used: 12, budget: 10 })],
  },
  {
    name: "a channel's own dailyBudget wins over the policy's",
    now: DAY,
    event: ev('Stalled'),
    channels: { phone: { dailyBudget: 3 } },
    state: { sentToday: { phone: 3 } },
    expect: [want('phone', ACTION, { action: 'digest', why: 'budget', used: 3, budget: 3 })],
  },
  {
    name: 'one under the budget: tier 2 is sent',
    now: DAY,
    event: ev('Stalled'),
    state: { sentToday: { phone: 9 } },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'tier 4 (no route takes the Event) is never sent',
    now: DAY,
    event: ev('Started', 's1', { type: 'Normal' }),
    expect: [want('phone', 'route', { action: 'suppress', why: 'tier4' })],
  },
  // ---- quiet hours
  {
    name: 'tier 2 in quiet hours waits for 07:00 Berlin',
    now: NIGHT,
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  {
    name: 'quiet hours past midnight: 00:30 Berlin waits for 07:00 the same morning',
    now: '2026-06-03T22:30:00Z',
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  {
    name: 'quiet hours: 06:59 Berlin still waits',
    now: '2026-06-04T04:59:00Z',
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  {
    name: 'quiet hours: 07:00 Berlin is sent (07:00 UTC would have been 09:00)',
    now: '2026-06-04T05:00:00Z',
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'the night clocks go forward (29 March 2026): 07:00 CEST is 05:00 UTC',
    now: '2026-03-28T22:30:00Z', // 23:30 CET
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: at('2026-03-29T05:00:00Z') })],
  },
  {
    name: 'the night clocks go back (25 October 2026): 07:00 CET is 06:00 UTC',
    now: '2026-10-24T21:30:00Z', // 23:30 CEST
    event: ev('Stalled'),
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: at('2026-10-25T06:00:00Z') })],
  },
  // ---- batching
  {
    name: 'tier 3 opens a batch flushed 4h later',
    now: DAY,
    event: ev('Completed', 's1', { type: 'Normal' }),
    expect: [want('phone', SUMMARY, { action: 'batch', flushAt: at(DAY) + 4 * HOUR })],
  },
  {
    name: 'tier 3 joins the open batch and its flush time',
    now: DAY,
    event: ev('Completed', 's1', { type: 'Normal' }),
    state: { batches: { phone: { items: 2, openedAt: at(DAY) - HOUR } } },
    expect: [want('phone', SUMMARY, { action: 'batch', flushAt: at(DAY) + 3 * HOUR })],
  },
  {
    name: "the policy's batchInterval sets the flush",
    now: DAY,
    event: ev('Completed', 's1', { type: 'Normal' }),
    policy: { batchInterval: '1h' },
    expect: [want('phone', SUMMARY, { action: 'batch', flushAt: at(DAY) + HOUR })],
  },
  {
    name: 'tier 3 in quiet hours is batched (its flush waits for the morning instead)',
    now: NIGHT,
    event: ev('Completed', 's1', { type: 'Normal' }),
    expect: [want('phone', SUMMARY, { action: 'batch', flushAt: at(NIGHT) + 4 * HOUR })],
  },
  {
    name: 'tier 2 takes the pending batch along',
    now: DAY,
    event: ev('Stalled'),
    state: { batches: { phone: { items: 3, openedAt: at(DAY) - HOUR } } },
    expect: [want('phone', ACTION, { action: 'send', flushesBatch: 3 })],
  },
  {
    name: 'tier 1 in quiet hours takes the pending batch along',
    now: NIGHT,
    event: ev('WaitingForInput'),
    state: { batches: { phone: { items: 2, openedAt: at(NIGHT) - HOUR } } },
    expect: [want('phone', URGENT, { action: 'send', flushesBatch: 2 })],
  },
  {
    name: 'a deferred tier 2 does not take the batch',
    now: NIGHT,
    event: ev('Stalled'),
    state: { batches: { phone: { items: 2, openedAt: at(NIGHT) - HOUR } } },
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  // ---- inhibition and silences
  {
    name: 'inhibit: Escalated mutes BackOff for the same session',
    now: DAY,
    event: ev('BackOff', 's1', { type: 'Normal' }),
    state: { inhibitSources: [notificationFields(ev('Escalated', 's1'))] },
    expect: [want('phone', ACTION, { action: 'suppress', why: 'inhibited', rule: 'escalated-mutes-backoff' })],
  },
  {
    name: "inhibit: another session's Escalated does not mute this BackOff",
    now: DAY,
    event: ev('BackOff', 's2', { type: 'Normal' }),
    state: { inhibitSources: [notificationFields(ev('Escalated', 's1'))] },
    expect: [want('phone', ACTION, { action: 'send' }, 's2')],
  },
  {
    name: 'inhibit: an Event matching source and target does not mute itself',
    now: DAY,
    event: ev('BackOff', 's1', { type: 'Normal' }),
    policy: { inhibit: [{ sourceMatchers: ['reason=~"BackOff|Escalated"'], targetMatchers: ['reason="BackOff"'] }] },
    state: { inhibitSources: [notificationFields(ev('BackOff', 's1', { type: 'Normal' }))] },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'inhibit: a tier-4 source never mutes a more urgent target (a less urgent Event mutes nothing above it)',
    now: DAY,
    event: ev('Stalled', 's1'),
    policy: { inhibit: [{ sourceMatchers: ['reason="Started"'], targetMatchers: ['reason="Stalled"'] }] },
    state: { inhibitSources: [notificationFields(ev('Started', 's1', { type: 'Normal' }))] },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'inhibit: a source as urgent as the target mutes it',
    now: DAY,
    event: ev('Stalled', 's1'),
    policy: { inhibit: [{ sourceMatchers: ['reason="BackOff"'], targetMatchers: ['reason="Stalled"'] }] },
    state: { inhibitSources: [notificationFields(ev('BackOff', 's1', { type: 'Normal' }))] },
    expect: [want('phone', ACTION, { action: 'suppress', why: 'inhibited', rule: 'inhibit[0]' })],
  },
  {
    name: 'a Warning whose reason was recorded more than twice within the hour goes one tier up',
    now: DAY,
    event: ev('Stalled', 's1'),
    repeats: 3,
    expect: [{ ...want('phone', ACTION, { action: 'send' }), tier: 1 }],
  },
  {
    name: 'a Warning recorded twice keeps its tier',
    now: NIGHT,
    event: ev('Stalled', 's1'),
    repeats: 2,
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  {
    name: 'a repeated Normal Event keeps its tier',
    now: NIGHT,
    event: ev('BackOff', 's1', { type: 'Normal' }),
    repeats: 9,
    expect: [want('phone', ACTION, { action: 'defer', why: 'quietHours', until: MORNING })],
  },
  {
    name: 'inhibit: a rule without a name is named by its place',
    now: DAY,
    event: ev('BackOff', 's1', { type: 'Normal' }),
    policy: { inhibit: [{ sourceMatchers: ['reason="Escalated"'], targetMatchers: ['reason="BackOff"'] }] },
    state: { inhibitSources: [notificationFields(ev('Escalated', 's9'))] },
    expect: [want('phone', ACTION, { action: 'suppress', why: 'inhibited', rule: 'inhibit[0]' })],
  },
  {
    name: 'silence by label: the project under maintenance is muted',
    now: DAY,
    event: ev('Stalled'),
    labels: { 'orchctl.io/project': 'web' },
    state: {
      silences: [
        silence('web-maintenance', ['labels.orchctl.io/project="web"'], '2026-06-03T09:00:00Z', '2026-06-03T11:00:00Z'),
      ],
    },
    expect: [want('phone', ACTION, { action: 'suppress', why: 'silenced', silence: 'web-maintenance' })],
  },
  {
    name: 'silence by label: another project is not muted',
    now: DAY,
    event: ev('Stalled'),
    labels: { 'orchctl.io/project': 'api' },
    state: {
      silences: [
        silence('web-maintenance', ['labels.orchctl.io/project="web"'], '2026-06-03T09:00:00Z', '2026-06-03T11:00:00Z'),
      ],
    },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'silence by label: an expired silence mutes nothing',
    now: DAY,
    event: ev('Stalled'),
    labels: { 'orchctl.io/project': 'web' },
    state: {
      silences: [silence('web-maintenance', ['labels.orchctl.io/project="web"'], '2026-06-03T08:00:00Z', DAY)],
    },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'a silence mutes tier 1 too (someone asked for it)',
    now: DAY,
    event: ev('Escalated'),
    state: {
      silences: [silence('all-s1', ['involvedObject.name="s1"'], '2026-06-03T09:00:00Z', '2026-06-03T11:00:00Z')],
    },
    expect: [want('phone', URGENT, { action: 'suppress', why: 'silenced', silence: 'all-s1' })],
  },
  // ---- repeats and group timers
  {
    name: 'repeat: a count bump within repeatInterval (4h) is not notified again',
    now: DAY,
    event: ev('Stalled', 's1', { count: 3 }),
    state: notifiedAt(ACTION, ev('Stalled'), at(DAY) - HOUR),
    expect: [want('phone', ACTION, { action: 'suppress', why: 'repeat', until: at(DAY) + 3 * HOUR })],
  },
  {
    name: 'repeat: after repeatInterval the same Event is notified again',
    now: DAY,
    event: ev('Stalled', 's1', { count: 9 }),
    state: notifiedAt(ACTION, ev('Stalled'), at(DAY) - 5 * HOUR),
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'repeat: another Event of the same group is news',
    now: DAY,
    event: ev('Stalled'),
    state: notifiedAt(ACTION, ev('BackOff'), at(DAY) - HOUR),
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'repeat: a message deferred earlier and now due is not its own repeat',
    now: '2026-06-04T05:00:00Z',
    event: ev('Stalled'),
    state: notifiedAt(ACTION, ev('Stalled'), at('2026-06-04T03:00:00Z')),
    due: { channel: 'phone' },
    expect: [want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'a deferred message due when the budget is spent goes to the digest',
    now: '2026-06-04T05:00:00Z',
    event: ev('Stalled'),
    state: { ...notifiedAt(ACTION, ev('Stalled'), at(NIGHT)), sentToday: { phone: 10 } },
    due: { channel: 'phone' },
    expect: [want('phone', ACTION, { action: 'digest', why: 'budget', used: 10, budget: 10 })],
  },
  {
    name: "groupWait: a new group's first message waits",
    now: DAY,
    event: ev('Stalled'),
    policy: { route: { ...POLICY.route, groupWait: '30s' } },
    expect: [want('phone', ACTION, { action: 'defer', why: 'groupWait', until: at(DAY) + 30_000 })],
  },
  {
    name: 'groupWait: joins the wait the group already started',
    now: DAY,
    event: ev('BackOff', 's1', { type: 'Normal' }),
    policy: { route: { ...POLICY.route, groupWait: '30s' } },
    state: { groups: { phone: { [gk(ACTION)]: { firstPendingAt: at(DAY) - 20_000 } } } },
    expect: [want('phone', ACTION, { action: 'defer', why: 'groupWait', until: at(DAY) + 10_000 })],
  },
  {
    name: 'groupInterval: news for a group sent a minute ago waits for the interval',
    now: DAY,
    event: ev('Stalled'),
    policy: { route: { ...POLICY.route, groupInterval: '5m' } },
    state: { groups: { phone: { [gk(ACTION)]: { lastSentAt: at(DAY) - 60_000 } } } },
    expect: [want('phone', ACTION, { action: 'defer', why: 'groupInterval', until: at(DAY) + 4 * 60_000 })],
  },
  // ---- routing to more than one channel
  {
    name: 'continue: the infra route and the Stalled route both take it, each with its channel',
    now: DAY,
    event: ev('Stalled'),
    labels: { team: 'infra' },
    expect: [want('pager', INFRA, { action: 'send' }), want('phone', ACTION, { action: 'send' })],
  },
  {
    name: 'continue: the budget is per channel',
    now: DAY,
    event: ev('Stalled'),
    labels: { team: 'infra' },
    state: { sentToday: { phone: 10, pager: 2 } },
    expect: [
      want('pager', INFRA, { action: 'send' }),
      want('phone', ACTION, { action: 'digest', why: 'budget', used: 10, budget: 10 }),
    ],
  },
  {
    name: 'a channel two routes reach gets the Event once, on the more urgent route',
    now: NIGHT,
    event: ev('Escalated'),
    labels: { team: 'infra' },
    policy: {
      route: {
        channels: ['phone'],
        routes: [
          { matchers: ['labels.team="infra"'], continue: true, tier: 2 },
          { matchers: ['reason="Escalated"'], tier: 1 },
        ],
      },
    },
    expect: [{ channel: 'phone', tier: 1, route: 'route.routes[1]', groupKey: gk('route.routes[1]'), action: 'send' }],
  },
];

describe('decide: one Event, each channel', () => {
  it.each(CASES)('$name', (c) => {
    const policy = { ...POLICY, ...c.policy };
    expect(validateNotificationPolicy(policy)).toEqual([]);
    const r = decide({
      now: at(c.now),
      policy,
      channels: c.channels,
      event: c.event,
      labels: c.labels,
      state: c.state ?? {},
      due: c.due,
      repeats: c.repeats,
    });
    expect(r.decisions).toEqual(c.expect);
  });

  it('routes an Event the recorder aggregated (count bumped) as a repeat, a new message as news', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-notifier-'));
    const store = new SqliteStore(path.join(dir, 'state.db'));
    try {
      const session: Resource = {
        apiVersion: API_VERSION,
        kind: 'AgentSession',
        metadata: { name: 's1', namespace: 'default', uid: 'u1' },
      };
      const recorder = new EventRecorder(store);
      const events = async () => (await store.list('Event')).items as EventObject[];
      await recorder.record(session, 'Warning', 'Stalled', 'no progress for 10m');
      const [first] = await events();
      const outbox = new OutboxModel(POLICY);
      const now = at(DAY);
      const r1 = decide({ now, policy: POLICY, event: first, state: outbox.at(now) });
      expect(r1.decisions.map((d) => d.action)).toEqual(['send']);
      outbox.apply(now, first, r1);

      await recorder.record(session, 'Warning', 'Stalled', 'no progress for 10m');
      const [bumped] = await events();
      expect(bumped.count).toBe(2);
      const r2 = decide({ now: now + 60_000, policy: POLICY, event: bumped, state: outbox.at(now + 60_000) });
      expect(r2.decisions).toEqual([
        want('phone', ACTION, { action: 'suppress', why: 'repeat', until: now + 4 * HOUR }),
      ]);

      await recorder.record(session, 'Warning', 'Stalled', 'no progress for 30m');
      const fresh = (await events()).find((e) => e.message.endsWith('30m'))!;
      const r3 = decide({ now: now + 120_000, policy: POLICY, event: fresh, state: outbox.at(now + 120_000) });
      expect(r3.decisions.map((d) => d.action)).toEqual(['send']);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('decide: sequences against the outbox', () => {
  it('warns once at 80 % of the budget, sends on to the budget, then digests; a new day starts over', () => {
    const outbox = new OutboxModel(POLICY);
    const log: string[] = [];
    const run = (start: number, sessions: number) => {
      for (let i = 1; i <= sessions; i++) {
        const now = start + i * 60_000;
        const event = ev('Stalled', `s${i}`);
        const r = decide({ now, policy: POLICY, event, state: outbox.at(now) });
        outbox.apply(now, event, r);
        log.push(`${i}:${r.decisions[0].action}${r.warnings.map((w) => ` warn ${w.used}/${w.budget} ${w.day}`)}`);
      }
    };
    run(at(DAY), 12);
    run(at(DAY) + 24 * HOUR, 9);
    expect(log).toEqual([
      ...['1', '2', '3', '4', '5', '6', '7'].map((i) => `${i}:send`),
      '8:send warn 8/10 2026-06-03',
      '9:send',
      '10:send',
      '11:digest',
      '12:digest',
      ...['1', '2', '3', '4', '5', '6', '7'].map((i) => `${i}:send`),
      '8:send warn 8/10 2026-06-04',
      '9:send',
    ]);
  });

  it('counts tier 1 sends against the budget and warns once', () => {
    const outbox = new OutboxModel(POLICY);
    const now = at(DAY);
    outbox.at(now).sentToday = { phone: 7 };
    const first = decide({ now, policy: POLICY, event: ev('Escalated', 's1'), state: outbox.at(now) });
    expect(first.warnings).toEqual([
      {
        channel: 'phone',
        used: 8,
        budget: 10,
        day: '2026-06-03',
        message:
          'channel phone has sent 8 of its 10 messages for 2026-06-03; past the budget, tier 2 and 3 go to the ' +
          'digest (tier 1 is still sent)',
      },
    ]);
    outbox.apply(now, ev('Escalated', 's1'), first);
    const second = decide({ now, policy: POLICY, event: ev('Escalated', 's2'), state: outbox.at(now) });
    expect(second.decisions.map((d) => d.action)).toEqual(['send']);
    expect(second.warnings).toEqual([]);
  });

  it('batches tier 3, flushes the batch early with the next tier 2 to the channel, then opens a new one', () => {
    const outbox = new OutboxModel(POLICY);
    const t0 = at(DAY);
    const step = (minutes: number, event: EventObject) => {
      const now = t0 + minutes * 60_000;
      const r = decide({ now, policy: POLICY, event, state: outbox.at(now) });
      outbox.apply(now, event, r);
      return r.decisions;
    };
    expect(step(0, ev('Completed', 's1', { type: 'Normal' }))).toEqual([
      want('phone', SUMMARY, { action: 'batch', flushAt: t0 + 4 * HOUR }),
    ]);
    expect(step(10, ev('Completed', 's2', { type: 'Normal' }))).toEqual([
      want('phone', SUMMARY, { action: 'batch', flushAt: t0 + 4 * HOUR }, 's2'),
    ]);
    expect(outbox.state.batches).toEqual({ phone: { items: 2, openedAt: t0 } });
    expect(step(20, ev('Stalled', 's3'))).toEqual([want('phone', ACTION, { action: 'send', flushesBatch: 2 }, 's3')]);
    expect(outbox.state.batches).toEqual({});
    // Nothing is left to flush at the 4h mark.
    expect(decideFlush({ now: t0 + 5 * HOUR, policy: POLICY, state: outbox.at(t0 + 5 * HOUR) })).toEqual({
      decisions: [],
      warnings: [],
    });
    expect(step(30, ev('Completed', 's4', { type: 'Normal' }))).toEqual([
      want('phone', SUMMARY, { action: 'batch', flushAt: t0 + 30 * 60_000 + 4 * HOUR }, 's4'),
    ]);
  });

  it('flushes a batch whose interval is up: sent by day, deferred by night, to the digest past the budget', () => {
    const batch = (openedAt: number) => ({ phone: { items: 4, openedAt } });
    const day = at(DAY);
    expect(decideFlush({ now: day, policy: POLICY, state: { batches: batch(day - 4 * HOUR) } }).decisions).toEqual([
      { channel: 'phone', items: 4, action: 'send' },
    ]);
    const night = at(NIGHT);
    expect(decideFlush({ now: night, policy: POLICY, state: { batches: batch(night - 5 * HOUR) } })).toEqual({
      decisions: [{ channel: 'phone', items: 4, action: 'defer', why: 'quietHours', until: MORNING }],
      warnings: [],
    });
    const spent = { batches: batch(day - 4 * HOUR), sentToday: { phone: 10 } };
    expect(decideFlush({ now: day, policy: POLICY, state: spent }).decisions).toEqual([
      { channel: 'phone', items: 4, action: 'digest', why: 'budget', used: 10, budget: 10 },
    ]);
    expect(decideFlush({ now: day, policy: POLICY, state: { batches: batch(day - HOUR) } })).toEqual({
      decisions: [],
      warnings: [],
      next: day + 3 * HOUR,
    });
  });
});

describe('route: the tree', () => {
  const TREE: NotificationPolicySpec = {
    route: {
      channels: ['team'],
      tier: 2,
      groupBy: ['reason'],
      repeatInterval: '1h',
      routes: [
        {
          matchers: ['involvedObject.kind="AgentSession"'],
          channels: ['sessions'],
          routes: [
            { matchers: ['reason="Stalled"'] },
            { matchers: ['reason="Escalated"'], tier: 1, repeatInterval: '10m', groupBy: SAME_SESSION },
          ],
        },
        { matchers: ['labels.team!="infra"', 'reason=~"Node.*"'], tier: 3 },
      ],
    },
  };

  it('passes unset fields down: tier and groupBy from the root, channels from the parent', () => {
    expect(validateNotificationPolicy(TREE)).toEqual([]);
    expect(route(TREE, ev('Stalled'))).toEqual([
      {
        route: 'route.routes[0].routes[0]',
        tier: 2,
        channels: ['sessions'],
        groupKey: 'route.routes[0].routes[0]:{reason="Stalled"}',
        groupWaitMs: 0,
        groupIntervalMs: 0,
        repeatIntervalMs: HOUR,
      },
    ]);
  });

  it("a child's own fields win over the inherited ones", () => {
    expect(route(TREE, ev('Escalated'))).toEqual([
      {
        route: 'route.routes[0].routes[1]',
        tier: 1,
        channels: ['sessions'],
        groupKey: gk('route.routes[0].routes[1]'),
        groupWaitMs: 0,
        groupIntervalMs: 0,
        repeatIntervalMs: 10 * 60_000,
      },
    ]);
  });

  it('a route none of whose children match takes the Event itself; the root takes the rest', () => {
    expect(route(TREE, ev('Started')).map((r) => [r.route, r.tier, r.channels])).toEqual([
      ['route.routes[0]', 2, ['sessions']],
    ]);
    expect(route(TREE, ev('Ready', 'n1', { kind: 'Node' })).map((r) => [r.route, r.tier, r.channels])).toEqual([
      ['route', 2, ['team']],
    ]);
  });

  it('matchers: regular expressions are anchored; a missing label is the empty string', () => {
    const node = ev('NodeLost', 'n1', { kind: 'Node' });
    expect(route(TREE, node).map((r) => r.route)).toEqual(['route.routes[1]']);
    expect(route(TREE, node, { team: 'web' }).map((r) => r.route)).toEqual(['route.routes[1]']);
    expect(route(TREE, node, { team: 'infra' }).map((r) => r.route)).toEqual(['route']);
    expect(route(TREE, ev('MyNode', 'n1', { kind: 'Node' })).map((r) => r.route)).toEqual(['route']);
    const unlabelled: NotificationPolicySpec = { route: { routes: [{ matchers: ['labels.team=""'], tier: 1 }] } };
    expect(route(unlabelled, node).map((r) => r.tier)).toEqual([1]);
    expect(route(unlabelled, node, { team: 'web' }).map((r) => r.tier)).toEqual([4]);
  });

  it('the first matching sibling wins unless it says continue', () => {
    const spec = (cont: boolean): NotificationPolicySpec => ({
      route: {
        routes: [
          { matchers: ['type="Warning"'], continue: cont, tier: 2, channels: ['slack'] },
          { matchers: ['reason="Stalled"'], tier: 1, channels: ['phone'] },
          { matchers: ['reason="Stalled"'], tier: 3, channels: ['email'] },
        ],
      },
    });
    expect(route(spec(false), ev('Stalled')).map((r) => r.channels)).toEqual([['slack']]);
    expect(route(spec(true), ev('Stalled')).map((r) => r.channels)).toEqual([['slack'], ['phone']]);
  });
});

describe('the default policy (manifests/notifications/)', () => {
  const policy = defaultPolicy();

  it('is valid', () => {
    expect(policy.kind).toBe('NotificationPolicy');
    expect(validateNotificationPolicy(policy.spec!)).toEqual([]);
  });

  it.each([
    ['WaitingForInput', 'AgentSession', 1],
    ['Escalated', 'AgentSession', 1],
    ['PromptNotConfirmed', 'AgentSession', 1],
    ['Stalled', 'AgentSession', 2],
    ['QuotaExhausted', 'AgentSession', 2],
    ['BreakerOpen', 'AgentSession', 2],
    ['JudgeFailed', 'AgentSession', 2],
    ['NodeLost', 'Node', 2],
    ['Completed', 'AgentSession', 3],
    ['Failed', 'Pipeline', 1],
    ['PhaseBlocked', 'Pipeline', 1],
    ['ReportBlocked', 'AgentSession', 1],
    ['Error', 'AgentSession', 3],
    ['TimedOut', 'AgentSession', 3],
    ['AgentCannotConnect', 'AgentSession', 3],
    ['AutopilotNotice', 'Project', 1],
    ['Error', 'Project', 4],
    ['Started', 'AgentSession', 4],
    ['BackOff', 'AgentSession', 4],
    ['ReconcileError', 'AgentSession', 4],
  ] as const)('%s on a %s is tier %i on the default channel', (reason, kind, tier) => {
    const routes = route(policy.spec!, ev(reason, 'x', { kind }));
    expect(routes.map((r) => [r.tier, r.channels])).toEqual([[tier, ['default']]]);
  });

  it('sends tier 1 at 03:00 UTC and defers tier 2 to 07:00; past the budget tier 3 goes to the digest', () => {
    const now = at('2026-06-03T03:00:00Z');
    const d = (e: EventObject, state: NotifierState = {}) =>
      decide({ now, policy: policy.spec!, event: e, state }).decisions.map((x) => x.action);
    // A question waits its grace (the route's groupWait) before it is sent, quiet hours or not.
    expect(decide({ now, policy: policy.spec!, event: ev('WaitingForInput'), state: {} }).decisions[0]).toMatchObject({
      action: 'defer',
      why: 'groupWait',
      until: now + 120_000,
    });
    expect(d(ev('Escalated'))).toEqual(['send']);
    expect(decide({ now, policy: policy.spec!, event: ev('Stalled'), state: {} }).decisions[0]).toMatchObject({
      action: 'defer',
      until: at('2026-06-03T07:00:00Z'),
    });
    expect(d(ev('Completed', 's1', { type: 'Normal' }), { sentToday: { default: 20 } })).toEqual(['digest']);
  });
});
