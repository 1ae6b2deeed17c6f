/**
 * Validation of NotificationPolicy and silence specs (api/notification.ts, here beside the routing
 * that relies on it): every number and duration bounded, every error naming its path.
 */
import { describe, expect, it } from 'vitest';
import {
  compileMatcher,
  type NotificationPolicySpec,
  type NotificationRoute,
  parseMatcher,
  type SilenceSpec,
  validateNotificationPolicy,
  validateSilence,
} from '../../../../controller/api/notification.js';
import { formatPath } from '../../../../controller/api/validate.js';

const errors = (spec: NotificationPolicySpec) =>
  validateNotificationPolicy(spec).map((e) => `${formatPath(e.path)}: ${e.message}`);
const child = (r: NotificationRoute): NotificationPolicySpec => ({ route: { routes: [r] } });
const R0 = 'spec.route.routes[0]';

describe('validateNotificationPolicy', () => {
  it('accepts a policy using every field', () => {
    const spec: NotificationPolicySpec = {
      timeZone: 'America/New_York',
      quietHours: [{ days: ['monday:friday', 'sunday'], start: '22:00', end: '07:00' }],
      dailyBudget: 0,
      batchInterval: '1h',
      route: {
        tier: 4,
        channels: ['slack', 'ntfy.phone'],
        groupBy: ['involvedObject.name', 'labels.orchctl.io/project'],
        groupWait: '0s',
        groupInterval: '5m',
        repeatInterval: '4h',
        routes: [{ matchers: ['reason!~"Started|Ready"', 'type!=Normal'], continue: true, tier: 2 }],
      },
      inhibit: [{ sourceMatchers: ['reason="Escalated"'], targetMatchers: ['reason="BackOff"'], equal: ['type'] }],
    };
    expect(errors(spec)).toEqual([]);
  });

  it.each([
    [{ route: { matchers: ['reason="X"'] } }, 'spec.route.matchers: the root route takes every Event'],
    [{ route: { continue: true } }, 'spec.route.continue: the root route has no sibling to go on to'],
    [child({ tier: 5 as 1 }), `${R0}.tier: must be 1 (urgent), 2 (action), 3 (summary) or 4 (debug)`],
    [
      child({ matchers: ['reason~Stalled'] }),
      `${R0}.matchers[0]: matcher "reason~Stalled" is not name=value, name!=value, name=~regex or name!~regex`,
    ],
    [
      child({ matchers: ['severity="page"'] }),
      `${R0}.matchers[0]: matcher "severity="page"": "severity" is not one of type, reason, involvedObject.kind, ` +
        'involvedObject.namespace, involvedObject.name or labels.<key>',
    ],
    [
      child({ matchers: ['reason=~"("'] }),
      `${R0}.matchers[0]: matcher "reason=~"("": invalid regular expression "(": Unterminated group`,
    ],
    [
      child({ matchers: ['reason="a'] }),
      `${R0}.matchers[0]: matcher "reason="a": the quoted value is not one double-quoted string`,
    ],
    [child({ matchers: [`reason="${'x'.repeat(1100)}"`] }), `${R0}.matchers[0]: is longer than 1024 characters`],
    [child({ channels: ['Phone_1'] }), `${R0}.channels[0]: must be a lowercase RFC 1123 subdomain`],
    [child({ groupBy: ['severity'] }), `${R0}.groupBy[0]: "severity" is not one of`],
    [child({ groupBy: ['labels.a/b/c'] }), `${R0}.groupBy[0]: label key in "labels.a/b/c": a qualified name`],
    [child({ repeatInterval: '30s' }), `${R0}.repeatInterval: must be between 60s and 168h`],
    [child({ groupWait: '2h' }), `${R0}.groupWait: must be between 0s and 1h`],
    [child({ groupInterval: 'soon' }), `${R0}.groupInterval: "soon" is not a duration like 5m`],
    [{ route: {}, batchInterval: '48h' }, 'spec.batchInterval: must be between 60s and 24h'],
    [{ route: {}, dailyBudget: 1.5 }, 'spec.dailyBudget: must be a whole number from 0 to 10000'],
    [{ route: {}, dailyBudget: -1 }, 'spec.dailyBudget: must be a whole number from 0 to 10000'],
    [{ route: {}, dailyBudget: 10_001 }, 'spec.dailyBudget: must be a whole number from 0 to 10000'],
    [{ route: {}, timeZone: 'Mars/Olympus' }, 'spec.timeZone: "Mars/Olympus" is not an IANA time zone'],
    [{ route: {}, quietHours: [{ start: '7:00', end: '09:00' }] }, 'spec.quietHours[0].start: must be HH:MM'],
    [{ route: {}, quietHours: [{ start: '24:00', end: '09:00' }] }, 'spec.quietHours[0].start: must be HH:MM'],
    [{ route: {}, quietHours: [{ start: '22:00', end: '24:01' }] }, 'spec.quietHours[0].end: must be HH:MM'],
    [{ route: {}, quietHours: [{ start: '22:00', end: '22:00' }] }, 'spec.quietHours[0].end: equals start'],
    [
      { route: {}, quietHours: [{ days: ['funday'], start: '22:00', end: '07:00' }] },
      'spec.quietHours[0].days: "funday" is not a weekday',
    ],
    [
      { route: {}, quietHours: [{ days: ['friday:monday'], start: '22:00', end: '07:00' }] },
      'spec.quietHours[0].days: "friday:monday" runs backwards',
    ],
    [
      { route: {}, quietHours: [{ start: '00:00', end: '24:00' }] },
      'spec.quietHours: cover the whole week: tier 2 messages would never be sent',
    ],
    [
      {
        route: {},
        quietHours: [
          { start: '12:00', end: '12:01' },
          { start: '12:01', end: '12:00' },
        ],
      },
      'spec.quietHours: cover the whole week',
    ],
    [
      { route: {}, inhibit: [{ sourceMatchers: [], targetMatchers: ['reason="BackOff"'] }] },
      'spec.inhibit[0].sourceMatchers: needs at least one matcher',
    ],
    [
      { route: {}, inhibit: [{ sourceMatchers: ['reason="A"'], targetMatchers: ['reason="B"'], equal: ['session'] }] },
      'spec.inhibit[0].equal[0]: "session" is not one of',
    ],
  ] as [NotificationPolicySpec, string][])('%j → %s', (spec, message) => {
    const got = errors(spec);
    expect(got).toHaveLength(1);
    expect(got[0].startsWith(message)).toBe(true);
  });

  it('refuses a regular expression that may backtrack catastrophically', () => {
    const [e] = errors(child({ matchers: ['reason=~"(a+)+b"'] }));
    expect(e).toMatch(/^spec\.route\.routes\[0\]\.matchers\[0\]: regular expression "\(a\+\)\+b" may backtrack/);
  });

  it('bounds the tree: depth and number of routes', () => {
    let deep: NotificationRoute = { tier: 1 };
    for (let i = 0; i < 9; i++) deep = { routes: [deep] };
    expect(errors({ route: deep })).toEqual([`spec.route${'.routes[0]'.repeat(8)}: routes nest at most 8 deep`]);
    const wide = { route: { routes: Array.from({ length: 256 }, () => ({ tier: 2 as const })) } };
    expect(errors(wide)).toEqual(['spec.route: at most 256 routes in the tree']);
    wide.route.routes.pop();
    expect(errors(wide)).toEqual([]);
  });
});

describe('matchers', () => {
  it.each([
    ['reason=Stalled', { name: 'reason', op: '=', value: 'Stalled' }],
    ['reason = "Stalled" ', { name: 'reason', op: '=', value: 'Stalled' }],
    ['labels.orchctl.io/project!~"web|api"', { name: 'labels.orchctl.io/project', op: '!~', value: 'web|api' }],
    ['type!=Normal', { name: 'type', op: '!=', value: 'Normal' }],
    ['reason="say \\"hi\\""', { name: 'reason', op: '=', value: 'say "hi"' }],
    ['involvedObject.name=~s[0-9]+', { name: 'involvedObject.name', op: '=~', value: 's[0-9]+' }],
  ])('%s', (text, want) => {
    expect(parseMatcher(text)).toEqual(want);
  });

  it('tests values like Alertmanager: anchored, case-sensitive, absent is ""', () => {
    const re = compileMatcher('reason=~"Stall|Escalated"');
    expect(['Stall', 'Escalated', 'Stalled', 'escalated', 'xStall'].map((v) => re.test(v))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(compileMatcher('labels.team!="infra"').test('')).toBe(true);
    expect(compileMatcher('labels.team=""').test('')).toBe(true);
    expect(compileMatcher('reason!~"Started|Ready"').test('Ready')).toBe(false);
  });
});

describe('validateSilence', () => {
  const ok: SilenceSpec = {
    matchers: ['labels.orchctl.io/project="web"'],
    startsAt: '2026-06-03T09:00:00Z',
    endsAt: '2026-06-03T11:00:00Z',
  };
  const problems = (s: Partial<SilenceSpec>) =>
    validateSilence({ ...ok, ...s }).map((e) => `${formatPath(e.path)}: ${e.message}`);

  it('accepts a silence by label for two hours', () => {
    expect(problems({})).toEqual([]);
  });

  it.each([
    [{ matchers: ['reason=~".*"'] }, 'spec.matchers: at least one matcher must not match the empty string'],
    [{ matchers: ['labels.team!="infra"'] }, 'spec.matchers: at least one matcher must not match the empty string'],
    [{ matchers: ['nope'] }, 'spec.matchers[0]: matcher "nope" is not name=value'],
    [{ endsAt: '2026-06-03T08:00:00Z' }, 'spec.endsAt: must be after startsAt'],
    [{ endsAt: '2027-06-05T09:00:00Z' }, 'spec.endsAt: at most 366 days after startsAt'],
    [{ startsAt: 'yesterday' }, 'spec.startsAt: must be an RFC 3339 time'],
  ] as [Partial<SilenceSpec>, string][])('%j → %s', (s, message) => {
    const got = problems(s);
    expect(got).toHaveLength(1);
    expect(got[0].startsWith(message)).toBe(true);
  });
});
