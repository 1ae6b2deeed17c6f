/**
 * The notification channels against real receivers on 127.0.0.1 started here: an HTTP server
 * (webhook, Slack format, ntfy) that records bodies and headers, a real SMTP server (smtp-server)
 * with STARTTLS and implicit TLS on a certificate made for the test, and a small program for the
 * command channel. Each send's result is checked for its classification (retryable or not) and
 * for secrets: a server that echoes the URL, token or password back must not get it into a result.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { NotificationChannelSpec, NotificationMessage } from '../../controller/api/notification-channel.js';
import { type ChannelOptions, createChannel } from '../../controller/notify/channel.js';
import { jsonPayload, messageIdFor } from '../../controller/notify/format.js';
import { type RecordedRequest, ScriptedServer } from '../support/fake-judge-server.js';
import { SmtpReceiver, selfSignedCert } from '../support/smtp-receiver.js';

const SCRIPT = path.resolve(__dirname, '../support/notify-command.mjs');
const WEBHOOK_PATH = '/services/T0001/B0002/Xq7dLr9wYp2KmZs4VbN8cF3h';
const NTFY_TOKEN = 'tk_4f8a1c9e2b7d6a3f0e5c8b1a9d2e7f40';

let tmp: string;
let http: ScriptedServer;

function message(over: Partial<NotificationMessage> = {}): NotificationMessage {
  return {
    idempotencyKey: 'default/fix-login:Escalated:1',
    tier: 1,
    title: 'fix-login escalated',
    body: 'The session stopped making progress after 3 restarts.',
    events: [
      {
        type: 'Warning',
        reason: 'Escalated',
        message: 'no progress in 45m',
        involvedObject: { kind: 'AgentSession', namespace: 'default', name: 'fix-login' },
        count: 2,
      },
    ],
    link: 'http://127.0.0.1:9090/sessions/default/fix-login',
    ...over,
  };
}

function channel(spec: NotificationChannelSpec, env: NodeJS.ProcessEnv = {}, opts: ChannelOptions = {}) {
  return createChannel('ops', spec, { env, ...opts });
}

const header = (r: RecordedRequest, name: string) => r.headers[name.toLowerCase()] as string | undefined;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-notify-'));
  http = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
});

afterAll(async () => {
  await http.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

beforeEach(() => http.reset());

describe('webhook', () => {
  const env = () => ({ OPS_WEBHOOK: `${http.url}${WEBHOOK_PATH}` });
  const spec: NotificationChannelSpec = { type: 'webhook', urlFrom: { env: 'OPS_WEBHOOK' }, timeout: '2s' };

  it('POSTs the message as JSON with an Idempotency-Key, the same on a re-send', async () => {
    const ch = channel(spec, env());
    const m = message();
    const first = await ch.send(m);
    const again = await ch.send(m);
    expect(first).toMatchObject({ delivered: true, code: 'sent', status: 200, retryable: false });
    expect(again.delivered).toBe(true);
    expect(first.message).toBe('webhook channel "ops": delivered (HTTP 200)');
    expect(http.requests).toHaveLength(2);
    const [r1, r2] = http.requests;
    expect(r1.method).toBe('POST');
    expect(r1.path).toBe(WEBHOOK_PATH);
    expect(header(r1, 'content-type')).toBe('application/json');
    expect(header(r1, 'idempotency-key')).toBe(m.idempotencyKey);
    expect(header(r2, 'idempotency-key')).toBe(m.idempotencyKey);
    expect(r1.body).toEqual(jsonPayload('ops', m));
    expect(r1.body).toMatchObject({ tier: 1, tierName: 'urgent', title: m.title, link: m.link });
    expect(r1.body.events[0]).toMatchObject({ reason: 'Escalated', count: 2 });
  });

  it('format: slack posts text and blocks, with untrusted text escaped', async () => {
    const ch = channel({ ...spec, format: 'slack' }, env());
    const hostile = 'ping <!channel> & see <http://evil.example|your bank>';
    const r = await ch.send(message({ tier: 2, title: 'Waiting for input', body: hostile }));
    expect(r.delivered).toBe(true);
    const body = http.requests[0].body;
    expect(header(http.requests[0], 'idempotency-key')).toBe('default/fix-login:Escalated:1');
    expect(body.text).toBe('[action] Waiting for input');
    expect(body.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Waiting for input', emoji: false },
    });
    expect(body.blocks[1].text).toEqual({
      type: 'mrkdwn',
      text: 'ping &lt;!channel&gt; &amp; see &lt;http://evil.example|your bank&gt;',
    });
    expect(JSON.stringify(body)).not.toContain('<!channel>');
    expect(body.blocks[2].text.text).toBe('• *Escalated* AgentSession default/fix-login ×2: no progress in 45m');
    expect(body.blocks[3].elements[0].text).toBe(
      'orchctl · tier 2 (action) · <http://127.0.0.1:9090/sessions/default/fix-login|open>',
    );
  });

  it('classifies failures: 5xx and 429 retryable (with Retry-After), 4xx and redirects not', async () => {
    const ch = channel(spec, env());
    http.script(
      { kind: 'raw', status: 500, text: 'internal error' },
      { kind: 'raw', status: 503, text: 'busy', headers: { 'retry-after': '3' } },
      { kind: 'raw', status: 429, text: 'slow down', headers: { 'retry-after': '7' } },
      { kind: 'raw', status: 400, text: 'invalid_payload' },
      { kind: 'raw', status: 404, text: 'no_service' },
      { kind: 'raw', status: 301, text: '', headers: { location: 'http://127.0.0.1:1/elsewhere' } },
    );
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await ch.send(message()));
    expect(results.map((r) => [r.code, r.status, r.retryable, r.delivered])).toEqual([
      ['server_error', 500, true, false],
      ['server_error', 503, true, false],
      ['rate_limited', 429, true, false],
      ['rejected', 400, false, false],
      ['rejected', 404, false, false],
      ['rejected', 301, false, false],
    ]);
    expect(results[1].retryAfterMs).toBe(3000);
    expect(results[2].retryAfterMs).toBe(7000);
    expect(results[0].message).toBe('webhook channel "ops": HTTP 500: internal error');
    expect(results[3].message).toBe('webhook channel "ops": HTTP 400: invalid_payload');
    // The redirect was not followed.
    expect(http.requests).toHaveLength(6);
  });

  it('a receiver that never answers is a timeout, retryable, within the channel timeout', async () => {
    const ch = channel({ ...spec, timeout: '300ms' }, env());
    http.script({ kind: 'hang' });
    const t0 = Date.now();
    const r = await ch.send(message());
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(r).toMatchObject({ delivered: false, code: 'timeout', retryable: true });
    expect(r.message).toBe('webhook channel "ops": no answer within 300 ms');
  });

  it('a send cancelled by the caller (a shutdown) stops at once and is retryable', async () => {
    const ch = channel({ ...spec, timeout: '30s' }, env());
    http.script({ kind: 'hang' });
    const abort = new AbortController();
    const pending = ch.send(message(), { signal: abort.signal });
    await http.waitForRequests(1);
    const t0 = Date.now();
    abort.abort();
    const r = await pending;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(r).toMatchObject({ delivered: false, code: 'cancelled', retryable: true });
  });

  it('a secret URL that is plain http:// to another host is refused before any send, not naming it', async () => {
    const secret = 'http://hooks.example.com/services/T000/B000/Xq7dLr9wYp2KmZs4VbN8cF3h';
    const r = await channel(spec, { OPS_WEBHOOK: secret }).send(message());
    expect(r).toMatchObject({ delivered: false, code: 'config', retryable: false });
    expect(r.message).toContain('urlFrom: the URL is plain http:// to another host and would travel in clear');
    expect(r.message).not.toContain('hooks.example.com');
    expect(r.message).not.toContain('Xq7dLr9wYp2KmZs4VbN8cF3h');
  });

  it('connection refused is retryable', async () => {
    const port = await closedPort();
    const r = await channel(spec, { OPS_WEBHOOK: `http://127.0.0.1:${port}${WEBHOOK_PATH}` }).send(message());
    expect(r).toMatchObject({ delivered: false, code: 'network', retryable: true });
    expect(r.message).toBe('webhook channel "ops": connection refused (ECONNREFUSED)');
  });

  it('a server echoing the secret URL gets none of it into the result', async () => {
    const url = `${http.url}${WEBHOOK_PATH}`;
    http.script(
      { kind: 'raw', status: 500, text: `cannot deliver to ${url}` },
      { kind: 'raw', status: 404, text: `no hook at ${WEBHOOK_PATH}` },
      { kind: 'raw', status: 403, text: 'token Xq7dLr9wYp2KmZs4VbN8cF3h revoked' },
    );
    const ch = channel(spec, env());
    for (let i = 0; i < 3; i++) {
      const r = await ch.send(message());
      expect(r.delivered).toBe(false);
      expect(r.message).toContain('[REDACTED]');
      expect(r.message).not.toContain('Xq7dLr9wYp2KmZs4VbN8cF3h');
      expect(r.message).not.toContain('T0001/B0002');
    }
  });

  it('a missing secret is a configuration error naming where it was to come from, not retryable', async () => {
    const r = await channel(spec, {}).send(message());
    expect(r).toMatchObject({ delivered: false, code: 'config', retryable: false });
    expect(r.message).toContain('webhook channel "ops"');
    expect(r.message).toContain('OPS_WEBHOOK is not set');
    expect(http.requests).toHaveLength(0);
  });

  it('rateLimit: a send over it is not made and says when a slot frees', async () => {
    let now = 1_000_000;
    const ch = channel({ ...spec, rateLimit: { count: 2, per: '1m' } }, env(), { now: () => now });
    expect((await ch.send(message())).delivered).toBe(true);
    now += 10_000;
    expect((await ch.send(message())).delivered).toBe(true);
    now += 5_000;
    const over = await ch.send(message());
    expect(over).toMatchObject({ delivered: false, code: 'rate_limited', retryable: true, retryAfterMs: 45_000 });
    expect(http.requests).toHaveLength(2);
    now += 45_000;
    expect((await ch.send(message())).delivered).toBe(true);
    expect(http.requests).toHaveLength(3);
  });
});

describe('ntfy', () => {
  it('POSTs to server/topic with priority per tier, title, tags and a bearer token from a file', async () => {
    const tokenFile = path.join(tmp, 'ntfy-token');
    fs.writeFileSync(tokenFile, `${NTFY_TOKEN}\n`);
    const ch = channel({
      type: 'ntfy',
      server: http.url,
      topic: 'orchctl-alerts',
      tokenFrom: { file: tokenFile },
      tags: ['orchctl'],
    });
    for (const tier of [1, 2, 3, 4] as const)
      expect((await ch.send(message({ tier, idempotencyKey: `k-${tier}` }))).delivered).toBe(true);
    expect(http.requests.map((r) => header(r, 'priority'))).toEqual(['5', '4', '2', '1']);
    expect(http.requests.map((r) => header(r, 'idempotency-key'))).toEqual(['k-1', 'k-2', 'k-3', 'k-4']);
    const r = http.requests[0];
    expect(r.path).toBe('/orchctl-alerts');
    expect(header(r, 'authorization')).toBe(`Bearer ${NTFY_TOKEN}`);
    expect(header(r, 'title')).toBe('fix-login escalated');
    expect(header(r, 'tags')).toBe('rotating_light,orchctl,Escalated');
    expect(header(r, 'click')).toBe('http://127.0.0.1:9090/sessions/default/fix-login');
    expect(r.body).toBe(
      'The session stopped making progress after 3 restarts.\n\n' +
        '- Warning Escalated AgentSession default/fix-login (x2): no progress in 45m',
    );
    expect(header(http.requests[2], 'tags')?.split(',')[0]).toBe('memo');
  });

  it('a topic URL from a secret, a non-ASCII title as an RFC 2047 word', async () => {
    const ch = channel(
      { type: 'ntfy', urlFrom: { env: 'NTFY_URL' } },
      { NTFY_URL: `${http.url}/s3cret-topic-a8f3k2m9q7` },
    );
    const r = await ch.send(message({ title: 'Läuft nicht — 3×', events: [] }));
    expect(r.delivered).toBe(true);
    const req = http.requests[0];
    expect(req.path).toBe('/s3cret-topic-a8f3k2m9q7');
    const title = header(req, 'title') ?? '';
    const word = /^=\?UTF-8\?B\?(.+)\?=$/.exec(title);
    expect(word).not.toBeNull();
    expect(Buffer.from(word![1], 'base64').toString('utf8')).toBe('Läuft nicht — 3×');
    expect(header(req, 'authorization')).toBeUndefined();
  });

  it('a server echoing the token and topic gets neither into the result', async () => {
    const tokenFile = path.join(tmp, 'ntfy-token-2');
    fs.writeFileSync(tokenFile, NTFY_TOKEN);
    const ch = channel(
      { type: 'ntfy', urlFrom: { env: 'NTFY_URL' }, tokenFrom: { file: tokenFile } },
      { NTFY_URL: `${http.url}/s3cret-topic-a8f3k2m9q7` },
    );
    http.script({ kind: 'raw', status: 401, text: `token ${NTFY_TOKEN} may not write to s3cret-topic-a8f3k2m9q7` });
    const r = await ch.send(message());
    expect(r).toMatchObject({ code: 'rejected', status: 401, retryable: false });
    expect(r.message).not.toContain(NTFY_TOKEN);
    expect(r.message).not.toContain('s3cret-topic-a8f3k2m9q7');
    expect(r.message).toContain('[REDACTED]');
  });

  it('credentials in the topic URL become Basic auth', async () => {
    const ch = channel(
      { type: 'ntfy', urlFrom: { env: 'NTFY_URL' } },
      {
        NTFY_URL: `${http.url.replace('http://', 'http://alice:pa55word-xyz@')}/alerts`,
      },
    );
    const r = await ch.send(message());
    expect(r.delivered).toBe(true);
    expect(header(http.requests[0], 'authorization')).toBe(
      `Basic ${Buffer.from('alice:pa55word-xyz').toString('base64')}`,
    );
  });
});

describe('email', () => {
  let cert: { key: Buffer; cert: Buffer; certFile: string };
  let passwordFile: string;
  const from = 'orchctl <orchctl@example.test>';

  beforeAll(async () => {
    cert = await selfSignedCert(tmp);
    passwordFile = path.join(tmp, 'smtp-password');
    fs.writeFileSync(passwordFile, 'hunter\n'); // short: below the global registry's length, scrubbed here
  });

  function emailSpec(port: number, over: Partial<NotificationChannelSpec> = {}): NotificationChannelSpec {
    return {
      type: 'email',
      host: '127.0.0.1',
      port,
      requireTLS: true,
      tls: { caFile: cert.certFile },
      from,
      to: ['oncall@example.test', 'lead@example.test'],
      usernameFrom: { env: 'SMTP_USER' },
      passwordFrom: { file: passwordFile },
      timeout: '5s',
      ...over,
    } as NotificationChannelSpec;
  }

  it('STARTTLS, login, headers and body; a re-send carries the same Message-ID', async () => {
    const smtp = await SmtpReceiver.start({ tls: cert, login: { user: 'notifier', pass: 'hunter' } });
    try {
      const ch = channel(emailSpec(smtp.port), { SMTP_USER: 'notifier' });
      const m = message();
      const r = await ch.send(m);
      expect(r).toMatchObject({ delivered: true, code: 'sent', status: 250 });
      expect((await ch.send(m)).delivered).toBe(true);
      expect(smtp.mails).toHaveLength(2);
      const [mail, again] = smtp.mails;
      expect(mail.secure).toBe(true); // upgraded with STARTTLS before anything was sent
      expect(mail.user).toBe('notifier');
      expect(mail.mailFrom).toBe('orchctl@example.test');
      expect(mail.rcptTo).toEqual(['oncall@example.test', 'lead@example.test']);
      expect(mail.parsed.messageId).toBe(messageIdFor(m.idempotencyKey, from));
      expect(mail.parsed.messageId).toMatch(/^<orchctl\.[0-9a-f]{32}@example\.test>$/);
      expect(again.parsed.messageId).toBe(mail.parsed.messageId);
      expect(mail.parsed.subject).toBe('[orchctl urgent] fix-login escalated');
      expect(mail.parsed.headers.get('x-orchctl-idempotency-key')).toBe(m.idempotencyKey);
      expect(mail.raw).toMatch(/^X-Priority: 1/m);
      expect(mail.parsed.text).toContain('The session stopped making progress after 3 restarts.');
      expect(mail.parsed.text).toContain('- Warning Escalated AgentSession default/fix-login (x2): no progress in 45m');
      expect(mail.parsed.text).toContain('Open: http://127.0.0.1:9090/sessions/default/fix-login');
    } finally {
      await smtp.close();
    }
  });

  it('TLS from the first byte (secure)', async () => {
    const smtp = await SmtpReceiver.start({ tls: cert, implicitTls: true });
    try {
      const spec = emailSpec(smtp.port, {
        secure: true,
        requireTLS: false,
        usernameFrom: undefined,
        passwordFrom: undefined,
      });
      const r = await channel(spec).send(message({ tier: 3 }));
      expect(r.delivered).toBe(true);
      expect(smtp.mails[0].secure).toBe(true);
      expect(smtp.mails[0].parsed.subject).toBe('[orchctl summary] fix-login escalated');
    } finally {
      await smtp.close();
    }
  });

  it('refuses to go on when TLS cannot be had: an untrusted certificate, a server without STARTTLS', async () => {
    const smtp = await SmtpReceiver.start({ tls: cert, login: { user: 'notifier', pass: 'hunter' } });
    const plain = await SmtpReceiver.start({ noStartTls: true });
    try {
      const untrusted = await channel(emailSpec(smtp.port, { tls: undefined }), { SMTP_USER: 'notifier' }).send(
        message(),
      );
      expect(untrusted).toMatchObject({ delivered: false, code: 'config', retryable: false });
      expect(untrusted.message).toContain('certificate is not trusted');
      const noTls = await channel(emailSpec(plain.port), { SMTP_USER: 'notifier' }).send(message());
      expect(noTls).toMatchObject({ delivered: false, code: 'config', retryable: false });
      expect(noTls.message).toContain('STARTTLS');
      expect(smtp.mails).toHaveLength(0);
      expect(plain.mails).toHaveLength(0);
    } finally {
      await smtp.close();
      await plain.close();
    }
  });

  it('a refused login is not retryable, and the password the server echoes is not in the result', async () => {
    const smtp = await SmtpReceiver.start({ tls: cert, login: { user: 'notifier', pass: 'other-password' } });
    try {
      const r = await channel(emailSpec(smtp.port), { SMTP_USER: 'notifier' }).send(message());
      expect(r).toMatchObject({ delivered: false, code: 'config', status: 535, retryable: false });
      expect(r.message).toContain('login refused');
      expect(r.message).not.toContain('hunter');
      expect(r.message).toContain('[REDACTED]');
    } finally {
      await smtp.close();
    }
  });

  it('SMTP 4xx is retryable, 5xx is not', async () => {
    const later = await SmtpReceiver.start({ rejectData: { code: 451, text: 'try again later' } });
    const never = await SmtpReceiver.start({ rejectRcpt: { code: 550, text: 'no such user' } });
    try {
      const plainSpec = (port: number) =>
        emailSpec(port, { requireTLS: false, tls: undefined, usernameFrom: undefined, passwordFrom: undefined });
      const a = await channel(plainSpec(later.port)).send(message());
      expect(a).toMatchObject({ delivered: false, code: 'server_error', status: 451, retryable: true });
      expect(a.message).toContain('try again later');
      const b = await channel(plainSpec(never.port)).send(message());
      expect(b).toMatchObject({ delivered: false, code: 'rejected', status: 550, retryable: false });
    } finally {
      await later.close();
      await never.close();
    }
  });

  it('a server that never greets is a timeout; a closed port is a network failure; both retryable', async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const t0 = Date.now();
      const r = await channel(emailSpec(port, { timeout: '300ms' }), { SMTP_USER: 'notifier' }).send(message());
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(r).toMatchObject({ delivered: false, code: 'timeout', retryable: true });
      const refused = await channel(emailSpec(await closedPort()), { SMTP_USER: 'notifier' }).send(message());
      expect(refused).toMatchObject({ delivered: false, code: 'network', retryable: true });
      expect(refused.message).toContain('ECONNREFUSED');
    } finally {
      silent.close();
    }
  });
});

describe('command', () => {
  const out = () => path.join(tmp, `command-${Math.random().toString(36).slice(2)}.json`);

  it('runs the program without a shell: the message on stdin, fields in the environment and placeholders', async () => {
    const file = out();
    const title = 'done; touch /tmp/pwned $(id) `id`';
    const ch = channel({
      type: 'command',
      command: [process.execPath, SCRIPT, 'ok', file, '--', '{{title}}', 'tier={{tier}}', '{{unknown}}'],
      env: [{ name: 'NOTIFY_TEST_PLAIN', value: 'plain' }],
    });
    const m = message({ tier: 2, title });
    const r = await ch.send(m);
    expect(r).toMatchObject({ delivered: true, code: 'sent', status: 0 });
    const got = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(got.args).toEqual(['--', title, 'tier=2', '{{unknown}}']);
    expect(JSON.parse(got.stdin)).toEqual(jsonPayload('ops', m));
    expect(got.env).toMatchObject({
      ORCHCTL_NOTIFICATION_CHANNEL: 'ops',
      ORCHCTL_NOTIFICATION_TIER: '2',
      ORCHCTL_NOTIFICATION_TIER_NAME: 'action',
      ORCHCTL_NOTIFICATION_TITLE: title,
      ORCHCTL_NOTIFICATION_IDEMPOTENCY_KEY: m.idempotencyKey,
      ORCHCTL_NOTIFICATION_KEY: m.idempotencyKey,
      ORCHCTL_NOTIFICATION_LINK: m.link,
      NOTIFY_TEST_PLAIN: 'plain',
    });
  });

  it('the exit code decides: 75 retryable, others not; a secret the program prints is redacted', async () => {
    const env = { APPRISE_KEY: 'tok-9b1e77c2d4' };
    const spec = (mode: string): NotificationChannelSpec => ({
      type: 'command',
      command: [process.execPath, SCRIPT, mode, out()],
      env: [{ name: 'NOTIFY_TEST_SECRET', valueFrom: { env: 'APPRISE_KEY' } }],
    });
    const later = await channel(spec('exit:75'), env).send(message());
    expect(later).toMatchObject({ delivered: false, code: 'server_error', status: 75, retryable: true });
    const bad = await channel(spec('exit:2'), env).send(message());
    expect(bad).toMatchObject({ delivered: false, code: 'rejected', status: 2, retryable: false });
    expect(bad.message).toBe('command channel "ops": the program exited with 2: failed: [REDACTED]');
    expect(later.message).not.toContain('tok-9b1e77c2d4');
  });

  it('a program that hangs is killed with what it started: timeout, retryable', async () => {
    const file = out();
    const t0 = Date.now();
    const r = await channel({ type: 'command', command: [process.execPath, SCRIPT, 'hang', file], timeout: '1s' }).send(
      message(),
    );
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r).toMatchObject({ delivered: false, code: 'timeout', retryable: true });
    const pid = Number(fs.readFileSync(`${file}.pid`, 'utf8'));
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((done) => setTimeout(done, 20));
    expect(alive(pid)).toBe(false);
  });

  it('a program that does not exist is a configuration error', async () => {
    const r = await channel({ type: 'command', command: ['/nonexistent/notify-tool'] }).send(message());
    expect(r).toMatchObject({ delivered: false, code: 'config', retryable: false });
    expect(r.message).toBe('command channel "ops": cannot run /nonexistent/notify-tool (ENOENT)');
  });
});

/** Running: not gone, and not a zombie waiting for a reaper (containers whose pid 1 does not reap). */
function alive(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
