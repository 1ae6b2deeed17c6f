/**
 * A channel's checks before any I/O: the spec as written, the message, the rate limit's window on
 * a fake clock, and the scrubbing of this send's secrets from result text (including short ones and
 * the parts of a URL a server might echo on their own). Sends that reach a destination are in
 * test/integration/notify-channels.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { NotificationChannelSpec, NotificationMessage } from '../../../controller/api/notification-channel.js';
import { createChannel, specProblem } from '../../../controller/notify/channel.js';
import { SlidingWindowLimit } from '../../../controller/notify/rate-limit.js';
import { ChannelConfigError } from '../../../controller/notify/result.js';
import { SecretScope } from '../../../controller/notify/secrets.js';

const msg: NotificationMessage = { idempotencyKey: 'k1', tier: 1, title: 't', body: 'b' };
const hook: NotificationChannelSpec = { type: 'webhook', urlFrom: { env: 'U' } };

describe('specProblem', () => {
  const cases: [string, NotificationChannelSpec, string | undefined][] = [
    ['a webhook', hook, undefined],
    ['timeout not a duration', { ...hook, timeout: 'soon' }, 'timeout "soon" is not a duration like 10s'],
    ['timeout too long', { ...hook, timeout: '10m' }, 'timeout may be at most 300s'],
    ['rateLimit count 0', { ...hook, rateLimit: { count: 0, per: '1m' } }, 'rateLimit.count must be a whole number'],
    ['rateLimit per bad', { ...hook, rateLimit: { count: 1, per: 'x' } }, 'rateLimit.per "x" is not a duration'],
    ['webhook format', { ...hook, format: 'teams' } as never, 'format "teams" is not json or slack'],
    ['ntfy server+topic', { type: 'ntfy', server: 'https://ntfy.sh', topic: 'ok_topic-1' }, undefined],
    ['ntfy neither', { type: 'ntfy' }, 'ntfy needs urlFrom, or server and topic'],
    ['ntfy both', { type: 'ntfy', urlFrom: { env: 'X' }, topic: 't' }, 'urlFrom replaces server and topic'],
    ['ntfy topic', { type: 'ntfy', server: 'https://ntfy.sh', topic: 'a/b' }, 'topic may hold'],
    ['ntfy server', { type: 'ntfy', server: 'ntfy.sh', topic: 't' }, 'server must be an http(s) URL'],
    ['email', { type: 'email', host: 'smtp.test', from: 'a@b.c', to: ['x@y.z'] }, undefined],
    ['email no to', { type: 'email', host: 'smtp.test', from: 'a@b.c', to: [] }, 'email needs at least one address'],
    ['email port', { type: 'email', host: 'h', port: 70000, from: 'a@b.c', to: ['x@y.z'] }, 'port must be 1-65535'],
    [
      'email half credentials',
      { type: 'email', host: 'h', from: 'a@b.c', to: ['x@y.z'], usernameFrom: { env: 'U' } },
      'usernameFrom and passwordFrom go together',
    ],
    ['command empty', { type: 'command', command: [] }, 'command needs a program'],
    ['unknown type', { type: 'pager' } as never, 'type "pager" is not webhook, ntfy, email or command'],
  ];
  it.each(cases)('%s', (_name, spec, problem) => {
    const got = specProblem(spec);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });

  it('a channel with a bad spec answers every send with a configuration error', async () => {
    const r = await createChannel('x', { ...hook, timeout: 'soon' }, { env: {} }).send(msg);
    expect(r).toEqual({
      delivered: false,
      code: 'config',
      message: 'webhook channel "x": timeout "soon" is not a duration like 10s',
      retryable: false,
    });
  });
});

describe('message checks', () => {
  it.each([
    ['no key', { ...msg, idempotencyKey: '' }, 'no idempotency key'],
    ['a key with a space', { ...msg, idempotencyKey: 'a b' }, 'no idempotency key'],
    ['a key with a line break', { ...msg, idempotencyKey: 'a\r\nX-Evil: 1' }, 'no idempotency key'],
    ['a long key', { ...msg, idempotencyKey: 'k'.repeat(201) }, 'over 200 characters'],
    ['tier 5', { ...msg, tier: 5 as never }, 'tier 5 is not 1-4'],
  ])('%s is refused before any send', async (_name, m, text) => {
    // The URL variable is unset: had the check let the message through, the result would say so instead.
    const r = await createChannel('x', hook, { env: {} }).send(m);
    expect(r.code).toBe('config');
    expect(r.message).toContain(text);
  });
});

describe('SlidingWindowLimit', () => {
  it('allows count attempts in any window and says when the oldest leaves it', () => {
    let now = 0;
    const limit = new SlidingWindowLimit(3, 1000, () => now);
    expect([limit.take(), limit.take()]).toEqual([undefined, undefined]);
    now = 400;
    expect(limit.take()).toBeUndefined();
    now = 500;
    expect(limit.take()).toBe(500); // the attempt at 0 leaves the window at 1000
    now = 999;
    expect(limit.take()).toBe(1);
    now = 1000;
    expect(limit.take()).toBeUndefined(); // the two at 0 have left; 400 and 1000 are in
    expect(limit.take()).toBeUndefined();
    expect(limit.take()).toBe(400);
  });
});

describe('SecretScope', () => {
  it('reads env and file secrets, names where a missing one was to come from, never a value', () => {
    const s = new SecretScope({ A_TOKEN: 'abc123token', EMPTY: ' ' });
    expect(s.read('tokenFrom', { env: 'A_TOKEN' })).toBe('abc123token');
    expect(() => s.read('tokenFrom', { env: 'MISSING' })).toThrow(ChannelConfigError);
    expect(() => s.read('tokenFrom', { env: 'MISSING' })).toThrow(/MISSING is not set/);
    expect(() => s.read('tokenFrom', { env: 'EMPTY' })).toThrow('tokenFrom: the secret is empty');
    expect(() => s.read('tokenFrom', { file: '/nonexistent/token' })).toThrow(/cannot be read \(ENOENT\)/);
  });

  it('scrubs short secrets and the token-like parts of a secret URL', () => {
    const s = new SecretScope({
      PW: 'hunt',
      URL: 'https://hooks.example.test/services/T1/B2/Zk38sLq0Pw7vNm2xYc5R?x=1',
    });
    s.read('passwordFrom', { env: 'PW' });
    const { url } = s.readUrl('urlFrom', { env: 'URL' });
    expect(url.pathname).toBe('/services/T1/B2/Zk38sLq0Pw7vNm2xYc5R');
    const text = s.clean(
      'login hunt failed; POST https://hooks.example.test/services/T1/B2/Zk38sLq0Pw7vNm2xYc5R?x=1 ' +
        'path /services/T1/B2/Zk38sLq0Pw7vNm2xYc5R?x=1 token Zk38sLq0Pw7vNm2xYc5R',
    );
    expect(text).toBe('login [REDACTED] failed; POST [REDACTED] path [REDACTED] token [REDACTED]');
    expect(s.clean('three letters: hun, services, hooks.example.test')).toBe(
      'three letters: hun, services, hooks.example.test',
    );
  });

  it('refuses a secret URL that is not http(s), without printing it', () => {
    const s = new SecretScope({ URL: 'ftp://user:pw@files.test/x', BAD: 'not a url at all' });
    expect(() => s.readUrl('urlFrom', { env: 'URL' })).toThrow('urlFrom: the URL must be http or https');
    expect(() => s.readUrl('urlFrom', { env: 'BAD' })).toThrow('urlFrom: the secret is not a URL');
  });
});
