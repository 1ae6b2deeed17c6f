/**
 * The digest's schedule and settings: nextDigestAt with croner in the digest's time zone (across
 * DST changes, in a non-UTC zone), its defaults, and the validation of `spec.digest`.
 */
import { describe, expect, it } from 'vitest';
import { type NotificationPolicySpec, validateNotificationPolicy } from '../../../../controller/api/notification.js';
import { formatPath } from '../../../../controller/api/validate.js';
import {
  digestChannelLimit,
  digestSettings,
  digestWindowStart,
  nextDigestAt,
} from '../../../../controller/notify/digest/index.js';
import { defaultPolicy } from './fixtures.js';

const at = (s: string) => Date.parse(s);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
const spec = (digest: NotificationPolicySpec['digest'], timeZone?: string): NotificationPolicySpec => ({
  route: { channels: ['default', 'slack'] },
  ...(timeZone ? { timeZone } : {}),
  digest,
});

describe('nextDigestAt', () => {
  it('defaults to 07:00 in the policy’s time zone, strictly after the given time', () => {
    expect(iso(nextDigestAt(spec(undefined), at('2026-06-01T06:59:59Z')))).toBe('2026-06-01T07:00:00.000Z');
    expect(iso(nextDigestAt(spec(undefined), at('2026-06-01T07:00:00Z')))).toBe('2026-06-02T07:00:00.000Z');
    expect(iso(nextDigestAt(spec({}, 'Asia/Tokyo'), at('2026-06-01T00:00:00Z')))).toBe('2026-06-01T22:00:00.000Z');
  });

  it('keeps 07:00 on the wall clock across the spring and autumn DST changes (Europe/Berlin)', () => {
    const s = spec({ timeZone: 'Europe/Berlin' });
    // Sunday 29 March 2026: 02:00 CET becomes 03:00 CEST, so 07:00 is 05:00Z instead of 06:00Z.
    expect(iso(nextDigestAt(s, at('2026-03-28T12:00:00Z')))).toBe('2026-03-29T05:00:00.000Z');
    expect(iso(nextDigestAt(s, at('2026-03-27T12:00:00Z')))).toBe('2026-03-28T06:00:00.000Z');
    // Sunday 25 October 2026: back to CET.
    expect(iso(nextDigestAt(s, at('2026-10-24T12:00:00Z')))).toBe('2026-10-25T06:00:00.000Z');
  });

  it('runs a time the spring-forward skips at the jump, and a time that occurs twice once', () => {
    const s = spec({ schedule: '30 2 * * *', timeZone: 'Europe/Berlin' });
    expect(iso(nextDigestAt(s, at('2026-03-28T12:00:00Z')))).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
    const first = nextDigestAt(s, at('2026-10-24T12:00:00Z'));
    expect(iso(first)).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST, the first of the two
    expect(iso(nextDigestAt(s, first!))).toBe('2026-10-26T01:30:00.000Z'); // not 02:30 CET the same night
  });

  it('reads weekdays in the zone: Monday 08:00 in New York', () => {
    const s = spec({ schedule: '0 8 * * 1' }, 'America/New_York');
    expect(iso(nextDigestAt(s, at('2026-06-03T00:00:00Z')))).toBe('2026-06-08T12:00:00.000Z');
  });

  it('is undefined when the digest is off', () => {
    expect(nextDigestAt(spec({ enabled: false }), at('2026-06-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('digestSettings', () => {
  it('fills the defaults from the policy', () => {
    expect(digestSettings(spec(undefined, 'Europe/Berlin'))).toEqual({
      enabled: true,
      schedule: '0 7 * * *',
      timeZone: 'Europe/Berlin',
      channels: ['default', 'slack'],
    });
    const s = digestSettings(spec({ channels: ['email'], maxLength: 1000, llm: { backend: 'openai', model: 'm' } }));
    expect(s).toMatchObject({ channels: ['email'], maxLength: 1000, timeZone: 'UTC' });
    expect(s.llm).toMatchObject({ backend: 'openai', model: 'm', timeoutMs: 60_000, maxRetries: 2 });
  });

  it('starts the window at the last digest, or a day back before the first', () => {
    const now = at('2026-06-02T07:00:00Z');
    expect(iso(digestWindowStart('2026-06-01T07:00:00.250Z', now))).toBe('2026-06-01T07:00:00.250Z');
    expect(iso(digestWindowStart(undefined, now))).toBe('2026-06-01T07:00:00.000Z');
  });

  it('limits a channel to its type’s length, or maxLength when smaller', () => {
    const s = digestSettings(spec({ maxLength: 3000 }));
    expect(digestChannelLimit(s, { spec: { type: 'webhook', format: 'slack' } })).toBe(2800);
    expect(digestChannelLimit(s, { spec: { type: 'email' } })).toBe(3000);
    expect(digestChannelLimit(digestSettings(spec({})), { spec: { type: 'email' } })).toBe(16_000);
  });
});

describe('validateNotificationPolicy: spec.digest', () => {
  const errors = (digest: NotificationPolicySpec['digest'], timeZone?: string) =>
    validateNotificationPolicy(spec(digest, timeZone)).map((e) => `${formatPath(e.path)}: ${e.message}`);

  it('accepts the shipped policy and a digest using every field', () => {
    expect(validateNotificationPolicy(defaultPolicy().spec!)).toEqual([]);
    expect(
      errors({
        schedule: '15 6 * * mon-fri',
        timeZone: 'America/New_York',
        channels: ['slack', 'ntfy.phone'],
        maxLength: 2000,
        enabled: true,
        llm: { backend: 'openai', endpoint: 'http://127.0.0.1:11434/v1', model: 'llama3.2', timeout: '30s' },
      }),
    ).toEqual([]);
    expect(errors({ schedule: '@daily' })).toEqual([]);
  });

  it.each<[NotificationPolicySpec['digest'], string]>([
    [{ schedule: '0 7 * * * *' }, 'spec.digest.schedule: "0 7 * * * *" is not a 5-field cron expression'],
    [{ schedule: '0 25 * * *' }, 'spec.digest.schedule: "0 25 * * *" is not a 5-field cron expression'],
    [{ schedule: '*/5 * * * *' }, 'spec.digest.schedule: the minute field "*/5" must be one number'],
    [{ timeZone: 'Mars/Olympus' }, 'spec.digest.timeZone: "Mars/Olympus" is not an IANA time zone'],
    [{ channels: ['Not A Name'] }, 'spec.digest.channels[0]: '],
    [{ maxLength: 50 }, 'spec.digest.maxLength: must be a whole number from 200 to 16000'],
    [{ maxLength: 20_000 }, 'spec.digest.maxLength: must be a whole number from 200 to 16000'],
    [{ llm: { backend: 'anthropic' } }, 'spec.digest.llm.model: is required for the anthropic backend'],
    [{ llm: { backend: 'command' } }, 'spec.digest.llm.command: is required for the command backend'],
    [{ llm: { backend: 'heuristic', timeout: 'soon' } }, 'spec.digest.llm.timeout: "soon" is not a duration'],
  ])('refuses %j', (digest, message) => {
    const found = errors(digest);
    expect(found).toHaveLength(1);
    expect(found[0].startsWith(message)).toBe(true);
  });
});
