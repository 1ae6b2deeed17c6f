/**
 * `orchctl notify test CHANNEL` with the built bin/orchctl against a real HTTP receiver on
 * 127.0.0.1: the message arrives with its Idempotency-Key and a body naming the channel,
 * namespace, host and time; the webhook URL, a secret read from the shell's environment, never
 * appears in the output, not even when the receiver echoes it back; a failing receiver or a
 * missing secret is exit 1 with the code; an unknown channel lists the ones there are. The
 * command writes nothing to the store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliEnv, orchctl, tempHome } from '../support/cli.js';
import { ScriptedServer } from '../support/fake-judge-server.js';

/** A Slack-like URL whose last segment is the secret. */
const HOOK_PATH = '/services/T0001/B0002/Zp3kQ8vLw2NcR7yXa5TbM4hE';
const KEY = /^test-[0-9a-f]{16}$/;

let http: ScriptedServer;
let home: string;

const channel = (name: string, namespace: string) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'NotificationChannel',
  metadata: { name, namespace },
  spec: { type: 'webhook', urlFrom: { env: 'OPS_HOOK_URL' }, timeout: '5s' },
});

/** orchctl with the webhook's URL in its environment, as the user's shell would have it. */
const run = (...args: string[]) =>
  orchctl(home, args, { env: { ...cliEnv(home), OPS_HOOK_URL: `${http.url}${HOOK_PATH}` } });

async function revision(): Promise<number> {
  const r = await run('version', '-o', 'json');
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).store.revision;
}

function expectNoSecret(r: { stdout: string; stderr: string }) {
  for (const text of [r.stdout, r.stderr]) {
    expect(text).not.toContain(HOOK_PATH);
    expect(text).not.toContain('Zp3kQ8vLw2NcR7yXa5TbM4hE');
    expect(text).not.toContain(http.url);
  }
}

beforeAll(async () => {
  http = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
  home = tempHome();
  const file = path.join(path.dirname(home), 'channels.yaml');
  const docs = [channel('ops', 'default'), channel('pager', 'default'), channel('team', 'web')];
  fs.writeFileSync(file, docs.map((d) => YAML.stringify(d)).join('---\n'));
  const r = await run('apply', '-f', file);
  expect(r.exitCode, r.stderr).toBe(0);
});

afterAll(async () => {
  await http.close();
  fs.rmSync(path.dirname(home), { recursive: true, force: true });
});

beforeEach(() => http.reset());

describe('orchctl notify test', () => {
  it('sends one message with an Idempotency-Key and a body naming channel, namespace, host and time', async () => {
    const before = await revision();
    const started = Date.now();
    const r = await run('notify', 'test', 'ops', '--tier', '1');
    expect(r.exitCode, r.stderr).toBe(0);
    const m = /^sent: webhook channel "ops": delivered \(HTTP 200\); idempotency key (\S+)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(m![1]).toMatch(KEY);

    expect(http.requests).toHaveLength(1);
    const req = http.requests[0];
    expect(req.method).toBe('POST');
    expect(req.path).toBe(HOOK_PATH);
    expect(req.headers['idempotency-key']).toBe(m![1]);
    expect(req.body).toMatchObject({
      idempotencyKey: m![1],
      channel: 'ops',
      tier: 1,
      tierName: 'urgent',
      title: 'orchctl test notification',
    });
    const body: string = req.body.body;
    expect(body).toContain('channel "ops"');
    expect(body).toContain('namespace "default"');
    expect(body).toContain(os.hostname());
    const at = Date.parse(/at (\S+Z)\./.exec(body)![1]);
    expect(at).toBeGreaterThanOrEqual(started - 1000);
    expect(at).toBeLessThanOrEqual(Date.now());
    expectNoSecret(r);
    expect(await revision()).toBe(before); // no outbox record, no status: nothing written
  });

  it('takes the title, the message, the tier and the namespace from flags; a new key every time', async () => {
    const r1 = await run('notify', 'test', 'team', '-n', 'web', '--title', 'Hello', '--message', 'Is this on?');
    const r2 = await run('notify', 'test', 'notificationchannel/ops', '--tier', '3');
    expect(r1.exitCode, r1.stderr).toBe(0);
    expect(r2.exitCode, r2.stderr).toBe(0);
    const [a, b] = http.requests;
    expect(a.body).toMatchObject({ channel: 'team', tier: 2, title: 'Hello' });
    expect(a.body.body).toMatch(/^Is this on\?\n\n.*channel "team" in namespace "web"/);
    expect(b.body).toMatchObject({ channel: 'ops', tier: 3, tierName: 'summary' });
    expect(a.headers['idempotency-key']).toMatch(KEY);
    expect(b.headers['idempotency-key']).toMatch(KEY);
    expect(a.headers['idempotency-key']).not.toBe(b.headers['idempotency-key']);
  });

  it('a receiver answering 500 (echoing the URL) is exit 1 with the code and status, and no secret', async () => {
    http.script({ kind: 'raw', status: 500, text: `internal error at ${http.url}${HOOK_PATH}` });
    const r = await run('notify', 'test', 'ops');
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error: not sent: server_error \(status 500\): webhook channel "ops": /);
    expect(r.stderr).toContain('retryable');
    expect(http.requests).toHaveLength(1); // one test message, no retries
    expectNoSecret(r);
  });

  it('a secret missing from this shell is a config error naming the variable, and nothing is sent', async () => {
    const r = await orchctl(home, ['notify', 'test', 'ops']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: not sent: config: webhook channel "ops": .*OPS_HOOK_URL/);
    expect(http.requests).toHaveLength(0);
  });

  it('an unknown channel names it and its namespace and lists the channels there', async () => {
    const r = await run('notify', 'test', 'opps');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      'error: notificationchannels "opps" not found in namespace default; channels there: ops, pager\n',
    );
    const empty = await run('notify', 'test', 'ops', '-n', 'nowhere');
    expect(empty.exitCode).toBe(1);
    expect(empty.stderr).toContain('not found in namespace nowhere, which has none; in other namespaces (-n): ');
    expect(empty.stderr).toContain('default/ops, default/pager, web/team');
    expect(http.requests).toHaveLength(0);
  });

  it('refuses a bad --tier or --timeout before sending', async () => {
    const tier = await run('notify', 'test', 'ops', '--tier', '5');
    expect(tier.exitCode).toBe(1);
    expect(tier.stderr).toContain('--tier "5" is not 1 (urgent), 2, 3 or 4 (debug)');
    const timeout = await run('notify', 'test', 'ops', '--timeout', '10m');
    expect(timeout.exitCode).toBe(1);
    expect(timeout.stderr).toContain('--timeout may be at most 300s');
    expect(http.requests).toHaveLength(0);
  });

  it('--timeout bounds the send: a receiver that never answers is a timeout, exit 1', async () => {
    http.script({ kind: 'hang' });
    const started = Date.now();
    const r = await run('notify', 'test', 'ops', '--timeout', '300ms');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: not sent: timeout: webhook channel "ops": /);
    expect(Date.now() - started).toBeLessThan(5000); // not the channel's own 5s
    expectNoSecret(r);
  });
});
