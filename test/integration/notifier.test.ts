/**
 * The notifier end to end, with a real controller process, the real store and a real HTTP
 * receiver on 127.0.0.1: an Event routed by a NotificationPolicy reaches the webhook through the
 * outbox; a receiver failing then recovering gets the message after a retry; and the controller
 * killed with SIGKILL at the two dangerous instants (recorded but not sent; sent but not marked)
 * loses nothing; only a message in flight at the kill and not in the delivered-keys record reaches
 * the receiver twice (same idempotency key).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Notification } from '../../controller/api/outbox.js';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { type Harness, makeHarness } from '../support/controller-harness.js';
import { type RecordedRequest, ScriptedServer } from '../support/fake-judge-server.js';
import { freePort, httpGet } from '../support/metrics-helpers.js';
import { parseExposition } from '../support/prom-text.js';

const HOOK_PATH = '/hooks/T000/B000/s3cr3tT0kenInTheUrl';

let http: ScriptedServer;
let h: Harness;

const channel = {
  apiVersion: API_VERSION,
  kind: 'NotificationChannel',
  metadata: { name: 'ops' },
  spec: { type: 'webhook', urlFrom: { env: 'OPS_WEBHOOK' }, timeout: '2s' },
};
const policy = {
  apiVersion: API_VERSION,
  kind: 'NotificationPolicy',
  metadata: { name: 'default' },
  spec: {
    route: {
      channels: ['ops'],
      tier: 4,
      routes: [{ matchers: ['reason=~"Escalated|WaitingForInput"'], tier: 1 }],
    },
  },
};

/** Something for Events to be about; it need not exist in the store. */
const session = (name: string): Resource => ({
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
});

const keyOf = (r: RecordedRequest) => String(r.headers['idempotency-key']);
const distinct = (rs: RecordedRequest[]) => new Set(rs.map(keyOf));

async function notifications(): Promise<Notification[]> {
  return (await h.store.list('Notification', { namespace: 'default' })).items as Notification[];
}

async function escalate(name: string, message = 'no progress after 3 restarts'): Promise<void> {
  await new EventRecorder(h.store, 'test').record(session(name), 'Warning', 'Escalated', message);
}

beforeAll(async () => {
  http = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
});
afterAll(() => http.close());

beforeEach(async () => {
  http.reset();
  h = await makeHarness();
  h.env.OPS_WEBHOOK = `${http.url}${HOOK_PATH}`;
  await h.apply([channel, policy]);
});
afterEach(() => h.cleanup());

describe('notifier', () => {
  it('routes an Escalated Event to the webhook through the outbox, once, with no secret in the store', async () => {
    const port = await freePort();
    h.start(['--metrics-addr', `127.0.0.1:${port}`]);
    await escalate('fix-login');
    await http.waitForRequests(1);
    const body = http.requests[0].body as { tier: number; title: string; events: { reason: string }[] };
    expect(body).toMatchObject({ tier: 1, title: 'Escalated: AgentSession default/fix-login' });
    expect(body.events[0].reason).toBe('Escalated');
    const sent = await h.waitFor('the notification marked Sent', async () =>
      (await notifications()).find((n) => n.spec?.event?.reason === 'Escalated' && n.status?.phase === 'Sent'),
    );
    expect(keyOf(http.requests[0])).toBe(`orchctl-${sent.metadata.uid}`);
    expect(sent.status).toMatchObject({ attempts: 1, code: 'sent', httpStatus: 200 });

    // The same Event again (its count bumped) within the repeat interval: not sent again.
    await escalate('fix-login');
    await h.waitFor('the cursor past the bump', async () => {
      const p = await h.store.get({ kind: 'NotificationPolicy', namespace: 'default', name: 'default' });
      const ev = (await h.events('fix-login')).find((e) => e.reason === 'Escalated');
      return Number((p?.status as { eventRevision?: string })?.eventRevision) >= Number(ev?.metadata.resourceVersion);
    });
    expect(http.requests).toHaveLength(1);

    const yaml = await h.orchctl(['get', 'notifications', '-o', 'yaml']);
    const table = await h.orchctl(['get', 'notifications']);
    expect(table.stdout).toMatch(/ops\s+1\s+Sent/);
    const channels = await h.orchctl(['get', 'notificationchannels', '-o', 'yaml']);
    for (const out of [yaml.stdout, table.stdout, channels.stdout, h.controllerLog.join('\n')])
      expect(out).not.toContain('s3cr3tT0ken');
    expect(channels.stdout).toMatch(/sent: 1/);

    const metrics = parseExposition((await httpGet(port, '/metrics')).body);
    const one = (name: string, labels: Record<string, string>) => metrics.find(name, labels).map((x) => x.value);
    expect(one('orchctl_notifications_total', { channel: 'ops', tier: '1', result: 'sent' })).toEqual([1]);
    expect(one('orchctl_notifications_total', { channel: 'ops', tier: '1', result: 'suppressed' })).toEqual([1]);
    expect(one('orchctl_notification_delivery_seconds_count', { channel: 'ops', tier: '1' })).toEqual([1]);
    expect(one('orchctl_notification_budget_remaining', { namespace: 'default', channel: 'ops' })).toEqual([19]);
    expect(one('orchctl_notification_channel_failing', { namespace: 'default', channel: 'ops' })).toEqual([0]);
  });

  it('retries a failing receiver with backoff and marks the channel failing meanwhile', async () => {
    http.script({ kind: 'raw', status: 503, text: 'busy' }, { kind: 'raw', status: 500, text: 'oops' });
    h.start();
    await escalate('flaky');
    const ops = () => h.store.get({ kind: 'NotificationChannel', namespace: 'default', name: 'ops' });
    const failing = await h.waitFor('the channel marked failing', async () => {
      const st = (await ops())?.status as { failing?: boolean; lastFailure?: { code: string } } | undefined;
      return st?.failing && st;
    });
    expect(failing.lastFailure?.code).toBe('server_error');
    await http.waitForRequests(3);
    const n = await h.waitFor('Sent after two failures', async () =>
      (await notifications()).find((x) => x.status?.phase === 'Sent'),
    );
    expect(n.status?.attempts).toBe(3);
    expect(distinct(http.requests).size).toBe(1);
    await h.waitFor('the channel no longer failing', async () => (await ops())?.status?.failing === false);
  });

  // before-send: nothing reached the receiver; before-record: a send returned but the process died
  // before its key was in the delivered-keys record (the window left: sent again under its key);
  // after-send: the key recorded, the Notification not marked Sent: the record stops a second send.
  for (const point of ['notifier-before-send', 'notifier-before-record', 'notifier-after-send'] as const) {
    it(`kill -9 at ${point}: delivered by key after a restart, none lost, none twice the record knew`, async () => {
      h.env.ORCHCTL_FAILPOINTS = point;
      const first = h.start();
      await escalate('alpha');
      await escalate('beta');
      await escalate('gamma');
      const died = await first;
      expect(died.signal).toBe('SIGKILL');
      const atKill = await notifications();
      // The keys the channel's delivered-keys record holds: their sends returned before the kill.
      const record = path.join(h.home, 'notifications', 'delivered', 'default_ops.keys');
      const recorded = new Set(
        fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : [],
      );
      if (point === 'notifier-after-send') expect(recorded.size).toBeGreaterThan(0);
      else expect(recorded).toEqual(new Set());
      const sentAtKill = atKill.filter((n) => n.status?.phase === 'Sent');
      const inFlight = new Set(http.requests.map(keyOf));
      // Killed before its first send was marked: nothing Sent; before-send: nothing reached the receiver.
      expect(sentAtKill).toEqual([]);
      if (point === 'notifier-before-send') expect(http.requests).toEqual([]);
      else expect(inFlight.size).toBeGreaterThan(0);

      delete h.env.ORCHCTL_FAILPOINTS;
      h.start();
      const done = await h.waitFor('all three Sent', async () => {
        const ns = (await notifications()).filter((n) => n.spec?.event?.reason === 'Escalated');
        return ns.length === 3 && ns.every((n) => n.status?.phase === 'Sent') && ns;
      });
      const keys = done.map((n) => `orchctl-${n.metadata.uid}`);
      expect(distinct(http.requests)).toEqual(new Set(keys));
      for (const k of keys) {
        const count = http.requests.filter((r) => keyOf(r) === k).length;
        // In flight at the kill and not in the record: sent again under its key (the window left).
        if (recorded.has(k) || !inFlight.has(k)) expect(count).toBe(1);
        else expect(count).toBe(2);
      }
      for (const n of done.filter((x) => recorded.has(`orchctl-${x.metadata.uid}`)))
        expect(n.status?.message).toMatch(/already delivered before a restart/);
      const titles = new Set(http.requests.map((r) => (r.body as { title: string }).title));
      expect(titles).toEqual(new Set(['alpha', 'beta', 'gamma'].map((n) => `Escalated: AgentSession default/${n}`)));
    });
  }

  it('command channel, kill -9 after sends: ORCHCTL_NOTIFICATION_KEY, none twice the record knew', async () => {
    const received = path.join(h.dir, 'desk.keys');
    // A constant script; the file is a positional parameter (no data in the command string).
    const desk = {
      apiVersion: API_VERSION,
      kind: 'NotificationChannel',
      metadata: { name: 'desk' },
      spec: {
        type: 'command',
        command: ['sh', '-c', 'printf "%s\\n" "$ORCHCTL_NOTIFICATION_KEY" >> "$1"', 'sh', received],
      },
    };
    const toDesk = structuredClone(policy);
    toDesk.spec.route.channels = ['desk'];
    await h.apply([desk, toDesk]);
    h.env.ORCHCTL_FAILPOINTS = 'notifier-after-send';
    const first = h.start();
    for (const name of ['alpha', 'beta', 'gamma', 'delta']) await escalate(name);
    expect((await first).signal).toBe('SIGKILL');
    const record = path.join(h.home, 'notifications', 'delivered', 'default_desk.keys');
    const recorded = new Set(fs.readFileSync(record, 'utf8').split('\n').filter(Boolean));
    expect(recorded.size).toBeGreaterThan(0);
    const atKill = new Set(fs.readFileSync(received, 'utf8').split('\n').filter(Boolean));

    delete h.env.ORCHCTL_FAILPOINTS;
    h.start();
    const done = await h.waitFor('all four Sent', async () => {
      const ns = (await notifications()).filter((n) => n.spec?.channel === 'desk');
      return ns.length === 4 && ns.every((n) => n.status?.phase === 'Sent') && ns;
    });
    const lines = fs.readFileSync(received, 'utf8').split('\n').filter(Boolean);
    for (const n of done) {
      const key = `orchctl-${n.metadata.uid}`;
      const count = lines.filter((l) => l === key).length;
      // Recorded before the kill: never again. Run but not recorded (in flight): once more, same key.
      if (recorded.has(key) || !atKill.has(key)) expect(count).toBe(1);
      else expect(count).toBe(2);
    }
  });

  it('past the budget tier 2 goes to the digest; `digest --now` sends it once and marks it Digested', async () => {
    const tight = {
      ...policy,
      spec: {
        dailyBudget: 1,
        route: {
          channels: ['ops'],
          tier: 4,
          routes: [
            { matchers: ['reason="Escalated"'], tier: 1 },
            { matchers: ['reason="Stalled"'], tier: 2 },
          ],
        },
      },
    };
    await h.apply([tight]);
    h.start();
    await escalate('alpha'); // tier 1: sent, and the budget of 1 is used
    await http.waitForRequests(1);
    await new EventRecorder(h.store, 'test').record(session('beta'), 'Warning', 'Stalled', 'no new events for 10m');
    const held = await h.waitFor('Stalled held for the digest', async () =>
      (await notifications()).find((n) => n.spec?.event?.reason === 'Stalled' && n.status?.phase === 'Digest'),
    );
    expect(held.status?.message).toBe('past the daily budget (1/1)');

    const r = await h.orchctl(['digest', '--now', '--timeout', '20s']);
    expect(r.exitCode, r.stderr).toBe(0);
    await http.waitForRequests(2);
    const digest = http.requests[1].body as { title: string; body: string; tier: number };
    expect(digest.body).toContain('Stalled');
    expect(digest.body).toContain('beta');
    const after = await notifications();
    const carrier = after.find((n) => n.spec?.source === 'digest')!;
    expect(carrier.status?.phase).toBe('Sent');
    expect(after.find((n) => n.metadata.name === held.metadata.name)?.status).toMatchObject({
      phase: 'Digested',
      sentWith: carrier.metadata.name,
    });
    // The digest went out once: nothing else reached the receiver.
    expect(http.requests).toHaveLength(2);
  });

  it('a silence from the CLI mutes a matching Event (recorded as silenced), shows active, then expired', async () => {
    h.start();
    const created = await h.orchctl(['silence', 'create', 'involvedObject.name=quiet', '--for', '1h']);
    expect(created.exitCode, created.stderr).toBe(0);
    const name = created.stdout.trim();
    const state = async () =>
      ((await h.store.get({ kind: 'Silence', namespace: 'default', name }))?.status as { state?: string })?.state;
    await h.waitFor('the silence active', async () => (await state()) === 'active');
    await escalate('quiet');
    await escalate('loud');
    await http.waitForRequests(1);
    const muted = await h.waitFor('the muted one recorded', async () =>
      (await notifications()).find((n) => n.spec?.event?.involvedObject.name === 'quiet'),
    );
    expect(muted.status).toMatchObject({ phase: 'Suppressed', reason: 'silenced', message: `silence ${name}` });
    expect((http.requests[0].body as { title: string }).title).toBe('Escalated: AgentSession default/loud');
    expect((await h.orchctl(['get', 'silences'])).stdout).toMatch(/active/);

    expect((await h.orchctl(['silence', 'expire', name])).exitCode).toBe(0);
    await h.waitFor('the silence expired', async () => (await state()) === 'expired');
    expect(http.requests).toHaveLength(1);
  });
});
