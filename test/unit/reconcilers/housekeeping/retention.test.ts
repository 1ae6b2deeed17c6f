/** Retention settings (api/retention.ts): defaults, bounds, the flag named in errors. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION, parseRetention, RETENTION_BOUNDS } from '../../../../controller/api/retention.js';

describe('retention settings', () => {
  it('defaults to Kubernetes-like values when no flag is given', () => {
    expect(parseRetention({})).toEqual(DEFAULT_RETENTION);
    expect(DEFAULT_RETENTION).toEqual({
      eventTtlMs: 3_600_000,
      notificationTtlMs: 48 * 3_600_000,
      evaluationsPerSession: 20,
      runDirsPerSession: 10,
      deletedSessionDirTtlMs: 24 * 3_600_000,
      autopilotSessionTtlMs: 168 * 3_600_000,
      eventLogMaxBytes: 64 * 1024 * 1024,
    });
  });

  it('takes durations and counts within their bounds', () => {
    expect(
      parseRetention({
        eventTtlMs: '2m30s',
        notificationTtlMs: '5m',
        evaluationsPerSession: '3',
        runDirsPerSession: '1000',
        deletedSessionDirTtlMs: '720h',
      }),
    ).toEqual({
      ...DEFAULT_RETENTION,
      eventTtlMs: 150_000,
      notificationTtlMs: 300_000,
      evaluationsPerSession: 3,
      runDirsPerSession: 1000,
      deletedSessionDirTtlMs: 720 * 3_600_000,
    });
  });

  it.each([
    ['eventTtlMs', '5s', '--event-ttl 5s: must be a duration from 1m to 720h'],
    ['eventTtlMs', '721h', '--event-ttl 721h: must be a duration from 1m to 720h'],
    ['eventTtlMs', 'soon', '--event-ttl soon: must be a duration from 1m to 720h'],
    ['notificationTtlMs', '30s', '--notification-retention 30s: must be a duration from 1m to 2160h'],
    ['evaluationsPerSession', '1', '--evaluations-per-session 1: must be an integer from 2 to 1000'],
    ['evaluationsPerSession', '2.5', '--evaluations-per-session 2.5: must be an integer from 2 to 1000'],
    ['runDirsPerSession', '1001', '--run-dirs-per-session 1001: must be an integer from 2 to 1000'],
    ['eventLogMaxBytes', '512Ki', '--event-log-max-bytes 512Ki: must be a size from 1Mi to 64Gi'],
    ['eventLogMaxBytes', '65Gi', '--event-log-max-bytes 65Gi: must be a size from 1Mi to 64Gi'],
    ['eventLogMaxBytes', '64MB', '--event-log-max-bytes 64MB: must be a size from 1Mi to 64Gi'],
    ['deletedSessionDirTtlMs', '-1h', '--deleted-session-dir-ttl -1h: must be a duration from 1m to 2160h'],
  ] as const)('refuses %s %s, naming the flag and its bounds', (key, text, message) => {
    expect(() => parseRetention({ [key]: text })).toThrow(message);
  });

  it('takes an event log size in bytes or with a binary suffix', () => {
    expect(parseRetention({ eventLogMaxBytes: '1Mi' }).eventLogMaxBytes).toBe(1 << 20);
    expect(parseRetention({ eventLogMaxBytes: '2048Ki' }).eventLogMaxBytes).toBe(2 << 20);
    expect(parseRetention({ eventLogMaxBytes: '64Gi' }).eventLogMaxBytes).toBe(64 * 2 ** 30);
    expect(parseRetention({ eventLogMaxBytes: '3000000' }).eventLogMaxBytes).toBe(3_000_000);
  });

  it('names a flag for every setting', () => {
    expect(Object.keys(RETENTION_BOUNDS).sort()).toEqual(Object.keys(DEFAULT_RETENTION).sort());
  });
});
