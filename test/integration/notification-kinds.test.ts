/**
 * The notification kinds as API objects (issue 14): the shipped manifests/notifications/ apply as
 * they are and `get` shows their columns; a bad NotificationPolicy, Silence or NotificationChannel
 * is refused at apply with file:line and the field named, and nothing is written (all or none);
 * no object holds a secret. Drives the built `bin/orchctl`.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import { orchctl, parseTable, ROOT, tempHome } from '../support/cli.js';

const MANIFESTS = path.join(ROOT, 'manifests/notifications');
const FIXTURE = path.join(ROOT, 'test/unit/reconcilers/notifier/default-policy.yaml');

let home: string;
let dir: string;
beforeEach(() => {
  home = tempHome();
  dir = path.dirname(home);
});
const run = (...args: string[]) => orchctl(home, args);

async function revision(): Promise<number> {
  const r = await run('version', '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).store.revision;
}

const doc = (kind: string, name: string, spec: object) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind,
  metadata: { name },
  spec,
});
const policy = (spec: object) => doc('NotificationPolicy', 'p', { route: { channels: ['default'] }, ...spec });
const silence = (spec: object) =>
  doc('Silence', 's', { startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T02:00:00Z', ...spec });
const channel = (spec: object) => doc('NotificationChannel', 'c', spec);

describe('manifests/notifications/', () => {
  it('apply as shipped (the secrets are references, read only at send time), and get shows the columns', async () => {
    const r = await run('apply', '-f', MANIFESTS);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([
      'notificationchannel.orchctl.io/default created',
      'notificationchannel.orchctl.io/email created',
      'notificationchannel.orchctl.io/ntfy created',
      'notificationchannel.orchctl.io/slack created',
      'notificationchannel.orchctl.io/webhook created',
      'notificationpolicy.orchctl.io/default created',
    ]);

    const channels = parseTable((await run('get', 'notificationchannels')).stdout);
    // SENT, BUDGET, WAITING and FAILING are the notifier's status: empty until a controller runs.
    expect(channels[0]).toEqual(['NAME', 'TYPE', 'SENT', 'BUDGET', 'WAITING', 'FAILING', 'AGE']);
    expect(channels.slice(1).map((row) => row.slice(0, 4))).toEqual([
      ['default', 'command', '<none>', '<none>'],
      ['email', 'email', '<none>', '<none>'],
      ['ntfy', 'ntfy', '<none>', '<none>'],
      ['slack', 'webhook', '<none>', '<none>'],
      ['webhook', 'webhook', '<none>', '<none>'],
    ]);
    const policies = parseTable((await run('get', 'np')).stdout);
    expect(policies[0]).toEqual(['NAME', 'CHANNELS', 'BUDGET', 'AGE']);
    expect(policies[1].slice(0, 3)).toEqual(['default', 'default', '20']);

    // A second apply changes nothing.
    const again = await run('apply', '-f', MANIFESTS);
    expect(again.stdout).not.toMatch(/created|configured/);
  });

  it("route as the routing engine's fixture does (the two cannot drift apart)", () => {
    const shipped = YAML.parse(fs.readFileSync(path.join(MANIFESTS, 'policy.yaml'), 'utf8'));
    expect(shipped.spec).toEqual(YAML.parse(fs.readFileSync(FIXTURE, 'utf8')).spec);
  });
});

describe('a Silence', () => {
  it('applies and get shows STATE (empty until the notifier writes it), MATCHERS, ENDS and AGE', async () => {
    const file = path.join(dir, 'silence.yaml');
    const spec = { matchers: ['involvedObject.name="fix-login"', 'reason=~"Stalled|BackOff"'], createdBy: 'me' };
    fs.writeFileSync(file, YAML.stringify(silence(spec)));
    expect((await run('apply', '-f', file)).exitCode).toBe(0);
    const table = parseTable((await run('get', 'silences')).stdout);
    expect(table[0]).toEqual(['NAME', 'STATE', 'MATCHERS', 'ENDS', 'AGE']);
    expect(table[1].slice(0, 4)).toEqual([
      's',
      '<none>',
      'involvedObject.name="fix-login",reason=~"Stalled|BackOff"',
      '2030-01-01T02:00:00Z',
    ]);
  });
});

describe('apply refuses a bad notification object with the field named and writes nothing', () => {
  it.each<[string, object, string]>([
    [
      'a groupWait over an hour',
      policy({ route: { channels: ['default'], groupWait: '2h' } }),
      'spec.route.groupWait: must be at most 1h',
    ],
    [
      'a repeatInterval under a minute, two levels down',
      policy({ route: { routes: [{ matchers: ['type="Warning"'], routes: [{ repeatInterval: '10s' }] }] } }),
      'spec.route.routes[0].routes[0].repeatInterval: must be between 60s and 168h',
    ],
    [
      'a duration beyond a date in a child route (checked with the root route schema)',
      policy({ route: { routes: [{ groupInterval: '99999999999999999999h' }] } }),
      'spec.route.routes[0].groupInterval: must be at most 24h',
    ],
    [
      'an unknown field in a child route',
      policy({ route: { routes: [{ matcher: ['reason="Stalled"'] }] } }),
      'spec.route.routes[0].matcher: unknown field "spec.route.routes[0].matcher"',
    ],
    [
      'an invalid regular expression in a matcher',
      policy({ route: { routes: [{ matchers: ['reason=~"(Stalled"'], tier: 2 }] } }),
      'spec.route.routes[0].matchers[0]: matcher "reason=~"(Stalled"": invalid regular expression',
    ],
    [
      'quiet hours covering the whole week',
      policy({ quietHours: [{ start: '00:00', end: '24:00' }] }),
      'spec.quietHours: cover the whole week',
    ],
    ['a tier 5', policy({ route: { tier: 5 } }), 'spec.route.tier: Unsupported value'],
    ['a budget of a million', policy({ dailyBudget: 1_000_000 }), 'spec.dailyBudget: must be less than or equal'],
    [
      'a silence matching everything',
      silence({ matchers: ['reason=~".*"'] }),
      'spec.matchers: at least one matcher must not match the empty string',
    ],
    [
      'a silence of two years',
      silence({ matchers: ['reason="Stalled"'], endsAt: '2032-01-01T00:00:00Z' }),
      'spec.endsAt: at most 366 days after startsAt',
    ],
    ['a silence with a bad regular expression', silence({ matchers: ['reason=~"["'] }), 'spec.matchers[0]:'],
    ['a channel timeout over 5m', channel({ type: 'command', command: ['true'], timeout: '10m' }), 'spec.timeout:'],
    ['a channel timeout of 0s', channel({ type: 'command', command: ['true'], timeout: '0s' }), 'spec.timeout:'],
    ['a webhook without its URL', channel({ type: 'webhook' }), 'spec.urlFrom: a webhook needs urlFrom'],
    ['a field of another type', channel({ type: 'webhook', urlFrom: { env: 'U' }, host: 'x' }), 'spec.host:'],
    [
      'a literal webhook URL',
      channel({ type: 'webhook', url: 'https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX' }),
      'spec.url: unknown field',
    ],
    [
      'a literal SMTP password',
      channel({ type: 'email', host: 'smtp.example.com', from: 'a@b.c', to: ['d@e.f'], password: 'hunter2hunter2' }),
      'spec.password: unknown field',
    ],
    [
      'a password where a reference is required',
      channel({
        type: 'email',
        host: 'smtp.example.com',
        from: 'a@b.c',
        to: ['d@e.f'],
        usernameFrom: { env: 'SMTP_USER' },
        passwordFrom: 'hunter2hunter2',
      }),
      'spec.passwordFrom: must be of type object',
    ],
    [
      'an ntfy token to a plain http:// server on another host',
      channel({ type: 'ntfy', server: 'http://ntfy.example.com', topic: 'orchctl', tokenFrom: { env: 'NTFY_TOKEN' } }),
      'spec.server: is plain http:// to another host: the token (tokenFrom) would travel in clear; use https://',
    ],
    [
      'SMTP credentials to another host without TLS required',
      channel({
        type: 'email',
        host: 'smtp.example.com',
        port: 587,
        from: 'a@b.c',
        to: ['d@e.f'],
        usernameFrom: { env: 'SMTP_USER' },
        passwordFrom: { env: 'SMTP_PASSWORD' },
      }),
      'spec.requireTLS: must be true (or secure: true, port 465) to send the credentials to smtp.example.com',
    ],
    [
      'credentials in an ntfy server URL',
      channel({ type: 'ntfy', server: 'https://me:hunter2hunter2@ntfy.example.com', topic: 'orchctl' }),
      'spec.server: holds credentials, a secret that is never stored in an object',
    ],
    [
      'an access token in an ntfy server URL',
      channel({ type: 'ntfy', server: 'https://ntfy.example.com/?auth=tk_abcdefghijklmnop', topic: 'orchctl' }),
      'spec.server: holds the query parameter "auth"',
    ],
  ])('%s', async (_what, bad, message) => {
    const good = doc('NotificationChannel', 'fine', { type: 'command', command: ['true'] });
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, `${JSON.stringify(good)}\n---\n${JSON.stringify(bad)}\n`);
    const before = await revision();
    const r = await run('apply', '-f', file);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${file}:`);
    expect(r.stderr).toContain('(document 2)');
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('no objects were changed');
    expect(await revision()).toBe(before);
    // The secret is named by its field, never echoed.
    expect(r.stderr).not.toMatch(/hunter2|XXXXXXXXXXXX|tk_abc/);
  });
});
