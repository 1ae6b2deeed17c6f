/**
 * The digest's schedule on a fake clock against the real SQLite store: nothing before the cron
 * time (and the reconciler sleeps until it), one digest Notification per channel at it with the
 * held-back notifications marked Digested, never twice for one scheduled time, nothing sent when
 * there is nothing to say, and a time zone other than UTC.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Notification } from '../../../../controller/api/outbox.js';
import { API_VERSION, type Resource } from '../../../../controller/api/types.js';
import { DigestReconciler } from '../../../../controller/reconcilers/notifier/digester.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

let dir: string;
let store: SqliteStore;
let clock: number;

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** What the informers would hold, read from the store now. */
async function cache<K extends string>(kind: K) {
  const { items } = await store.list(kind);
  return {
    get: (ns: string | undefined, name: string) =>
      items.find((o) => o.metadata.name === name && o.metadata.namespace === ns),
    list: (ns?: string) => items.filter((o) => ns === undefined || o.metadata.namespace === ns),
  };
}

async function reconcile() {
  const r = new DigestReconciler({
    store,
    policies: await cache('NotificationPolicy'),
    channels: await cache('NotificationChannel'),
    notifications: await cache('Notification'),
    sessions: await cache('AgentSession'),
    evaluations: await cache('Evaluation'),
    log: quiet,
    now: () => clock,
  });
  return r.reconcile('default/default');
}

const digests = async () =>
  ((await store.list('Notification')).items as Notification[]).filter((n) => n.spec?.source === 'digest');

async function heldBack(name: string): Promise<void> {
  const n: Resource = {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name, namespace: 'default' },
    spec: {
      policy: 'default',
      channel: 'ops',
      tier: 2,
      source: 'event',
      eventKey: `default/${name}.abc`,
      event: {
        type: 'Warning',
        reason: 'Stalled',
        message: 'no new events for 10m',
        involvedObject: { kind: 'AgentSession', name, namespace: 'default' },
        count: 1,
      },
      title: `Stalled: AgentSession default/${name}`,
      body: 'no new events for 10m',
    },
  };
  await store.create(n);
  await store.updateStatus({ ...n, status: { phase: 'Digest', reason: 'budget' } });
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-digester-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  await store.create({
    apiVersion: API_VERSION,
    kind: 'NotificationChannel',
    metadata: { name: 'ops', namespace: 'default' },
    spec: { type: 'webhook', urlFrom: { env: 'OPS' } },
  });
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function policy(digest: object, status?: Record<string, unknown>): Promise<void> {
  const p = await store.create({
    apiVersion: API_VERSION,
    kind: 'NotificationPolicy',
    metadata: { name: 'default', namespace: 'default' },
    spec: { route: { channels: ['ops'] }, digest },
  });
  if (status) await store.updateStatus({ ...p, status });
}

describe('the digest schedule', () => {
  it('waits for the cron time, then records one digest with the held-back ones Digested, once', async () => {
    await policy({ schedule: '0 7 * * *' }, { lastDigestAt: '2026-06-01T07:00:00.000Z' });
    await heldBack('beta');
    clock = Date.parse('2026-06-02T06:30:00Z');
    expect(await reconcile()).toEqual({ requeueAfterMs: 30 * 60_000 });
    expect(await digests()).toEqual([]);

    clock = Date.parse('2026-06-02T07:00:05Z');
    await reconcile();
    const [d] = await digests();
    expect(d.spec).toMatchObject({ channel: 'ops', source: 'digest', items: ['beta'] });
    expect(d.spec!.body).toContain('Stalled');
    expect(d.status?.phase).toBe('Pending');
    const beta = (await store.get({ kind: 'Notification', namespace: 'default', name: 'beta' })) as Notification;
    expect(beta.status).toMatchObject({ phase: 'Digested', sentWith: d.metadata.name });
    const p = await store.get({ kind: 'NotificationPolicy', namespace: 'default', name: 'default' });
    expect(p?.status).toMatchObject({ lastDigestAt: '2026-06-02T07:00:05.000Z' });

    clock = Date.parse('2026-06-02T07:00:30Z');
    await reconcile();
    expect(await digests()).toHaveLength(1);
  });

  it('with nothing to say, moves the window on and sends nothing', async () => {
    await policy({}, { lastDigestAt: '2026-06-01T07:00:00.000Z' });
    clock = Date.parse('2026-06-02T07:01:00Z');
    const r = await reconcile();
    expect(await digests()).toEqual([]);
    expect(r).toEqual({ requeueAfterMs: 3600_000 }); // next at 07:00 tomorrow, the sleep capped at an hour
    const p = await store.get({ kind: 'NotificationPolicy', namespace: 'default', name: 'default' });
    expect(p?.status).toMatchObject({ lastDigestAt: '2026-06-02T07:01:00.000Z' });
  });

  it("follows the schedule's time zone", async () => {
    await policy({ schedule: '0 7 * * *', timeZone: 'America/New_York' }, { lastDigestAt: '2026-06-01T12:00:00Z' });
    await heldBack('gamma');
    clock = Date.parse('2026-06-02T07:30:00Z'); // 03:30 in New York (EDT, UTC-4)
    expect(await reconcile()).toEqual({ requeueAfterMs: 3600_000 });
    clock = Date.parse('2026-06-02T11:00:00Z'); // 07:00 in New York
    await reconcile();
    expect(await digests()).toHaveLength(1);
  });

  it('is off with enabled: false', async () => {
    await policy({ enabled: false });
    await heldBack('delta');
    clock = Date.parse('2026-06-09T07:00:00Z');
    expect(await reconcile()).toBeUndefined();
    expect(await digests()).toEqual([]);
  });
});
