/**
 * What the notifier costs the store, counted on the real SQLite store so it cannot regress
 * silently: a router reconcile that routes a burst of Events is one transaction and reads nothing
 * (the caches hold what it needs); with nothing new it writes nothing; delivering a message is
 * one read and one write; a message already sent costs nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_VERSION, type Resource } from '../../../../controller/api/types.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import { DeliveryReconciler } from '../../../../controller/reconcilers/notifier/delivery.js';
import { RouterReconciler } from '../../../../controller/reconcilers/notifier/router.js';
import { Informer } from '../../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';
import type { Store } from '../../../../controller/store/store.js';
import { ScriptedServer } from '../../../support/fake-judge-server.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
let dir: string;
let store: SqliteStore;
let http: ScriptedServer;
type NotifierKind = 'NotificationPolicy' | 'NotificationChannel' | 'Notification' | 'Event' | 'Silence';
let informers: { [K in NotifierKind]: Informer<K> };
let calls: Record<string, number>;

/** The store with every call counted by method. */
function counted(s: Store): Store {
  return new Proxy(s, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls[String(prop)] = (calls[String(prop)] ?? 0) + 1;
        return v.apply(target, args);
      };
    },
  });
}

/** Lets the watch deliver what was just written to every informer. */
const settle = () => new Promise((r) => setTimeout(r, 30));

beforeAll(async () => {
  http = await ScriptedServer.start(() => ({ kind: 'raw', status: 200, text: 'ok' }));
});
afterAll(() => http.close());

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-notifier-cost-'));
  store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
  informers = {
    NotificationPolicy: new Informer(store, 'NotificationPolicy'),
    NotificationChannel: new Informer(store, 'NotificationChannel'),
    Notification: new Informer(store, 'Notification'),
    Event: new Informer(store, 'Event'),
    Silence: new Informer(store, 'Silence'),
  };
  for (const i of Object.values(informers)) await i.start();
  await store.create({
    apiVersion: API_VERSION,
    kind: 'NotificationChannel',
    metadata: { name: 'ops', namespace: 'default' },
    spec: { type: 'webhook', urlFrom: { env: 'OPS' } },
  });
  await store.create({
    apiVersion: API_VERSION,
    kind: 'NotificationPolicy',
    metadata: { name: 'default', namespace: 'default' },
    spec: { dailyBudget: 1000, route: { channels: ['ops'], tier: 1 } },
  });
  calls = {};
});
afterEach(async () => {
  for (const i of Object.values(informers)) i.stop();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function router() {
  return new RouterReconciler({
    store: counted(store),
    policies: informers.NotificationPolicy,
    channels: informers.NotificationChannel,
    notifications: informers.Notification,
    events: informers.Event,
    silences: informers.Silence,
    recorder: new EventRecorder(store),
    log: quiet,
  });
}

const about = (name: string): Resource => ({
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
});

describe('the notifier’s store cost', () => {
  it('routing a burst of 20 Events is one transaction and no reads; nothing new writes nothing', async () => {
    await router().reconcile('default/default'); // the cursor starts
    await settle();
    const recorder = new EventRecorder(store, 'test');
    for (let i = 0; i < 20; i++) await recorder.record(about(`s${i}`), 'Warning', 'Escalated', `run ${i}`);
    await settle();
    calls = {};
    await router().reconcile('default/default');
    // One transaction (20 Notifications, the cursor) and the channel's status (its counts changed).
    expect(calls).toEqual({ txn: 1, updateStatus: 1 });
    await settle();
    expect(informers.Notification.list('default')).toHaveLength(20);
    calls = {};
    await router().reconcile('default/default');
    expect(calls).toEqual({});
  });

  it('delivering a message is one read and one write; a sent one costs nothing', async () => {
    await router().reconcile('default/default');
    await settle();
    await new EventRecorder(store, 'test').record(about('a'), 'Warning', 'Escalated', 'gave up');
    await settle();
    await router().reconcile('default/default');
    await settle();
    const [n] = informers.Notification.list('default');
    const delivery = new DeliveryReconciler({
      store: counted(store),
      notifications: informers.Notification,
      channels: informers.NotificationChannel,
      recorder: new EventRecorder(store),
      log: quiet,
      env: { OPS: `${http.url}/hook` },
    });
    calls = {};
    await delivery.reconcile(`default/${n.metadata.name}`);
    expect(calls).toEqual({ get: 1, updateStatus: 1 });
    expect(http.requests).toHaveLength(1);
    await settle();
    calls = {};
    await delivery.reconcile(`default/${n.metadata.name}`);
    expect(calls).toEqual({});
  });
});
