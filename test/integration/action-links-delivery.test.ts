/**
 * Which messages get action links, against a real SQLite store: a DecisionPending notification of a
 * Decision still waiting gets an approve and a reject link bound to its resourceVersion; without
 * the console's URL, or once the Decision is answered, the message is left as it is (the CLI way).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Decision } from '../../controller/api/autopilot.js';
import type { NotificationMessage } from '../../controller/api/notification-channel.js';
import type { Notification } from '../../controller/api/outbox.js';
import { API_VERSION } from '../../controller/api/types.js';
import { verifyToken } from '../../controller/notify/action-links.js';
import { pendingDecisionOf, withActionLinks } from '../../controller/reconcilers/notifier/action-links.js';
import { SqliteStore } from '../../controller/store/sqlite.js';

const KEY = Buffer.alloc(32, 3);
const NOW = Date.parse('2026-11-27T02:00:00Z');
const links = { key: KEY, base: new URL('https://console.example.org'), ttlMs: 3_600_000 };
const message: NotificationMessage = { idempotencyKey: 'k', tier: 1, title: 'DecisionPending', body: 'b' };

const notification = (reason = 'DecisionPending', eventKey = 'default/pilot-1-1.pending'): Notification =>
  ({
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: { name: 'n1', namespace: 'default' },
    spec: {
      policy: 'p',
      channel: 'ops',
      tier: 1,
      source: 'event',
      eventKey,
      event: { type: 'Warning', reason, message: 'm', involvedObject: { kind: 'Project', name: 'w' }, count: 1 },
      title: 't',
      body: 'b',
    },
  }) as Notification;

let dir: string;
let store: SqliteStore;
let dec: Decision;
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-links-delivery-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  const d = await store.create({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name: 'pilot-1-1', namespace: 'default' },
    spec: {
      autopilot: 'pilot',
      think: 1,
      action: 'stop',
      target: { project: 'w', session: 's' },
      reason: 'idle',
      priority: 3,
      planner: 'heuristic',
      level: 'cautious',
      snapshot: { revision: 1, objects: [] },
    },
  });
  dec = (await store.updateStatus({ ...d, status: { phase: 'PendingApproval' } })) as Decision;
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('action links on a notification', () => {
  it("finds the Decision of a DecisionPending notification from its Event's name, and no other", () => {
    expect(pendingDecisionOf(notification())).toEqual({ namespace: 'default', name: 'pilot-1-1' });
    expect(pendingDecisionOf(notification('Escalated'))).toBeUndefined();
    expect(pendingDecisionOf(notification('DecisionPending', 'default/other-event'))).toBeUndefined();
  });

  it("adds approve and reject links bound to the waiting Decision's resourceVersion, through the channel", async () => {
    const m = await withActionLinks(store, notification(), message, links, NOW);
    expect(m.actions?.map((a) => a.action)).toEqual(['approve', 'reject']);
    const t = new URL(m.actions![0].url).searchParams.get('t')!;
    expect(verifyToken(KEY, t, NOW)).toMatchObject({
      ok: true,
      claims: { name: 'pilot-1-1', rv: dec.metadata.resourceVersion, channel: 'ops', exp: NOW + 3_600_000 },
    });
  });

  it('adds none without the console URL, or once the Decision is answered', async () => {
    expect(await withActionLinks(store, notification(), message, undefined, NOW)).toBe(message);
    await store.update({ ...dec, spec: { ...dec.spec!, approval: { verdict: 'Approved', at: 'x' } } });
    expect(await withActionLinks(store, notification(), message, links, NOW)).toBe(message);
  });
});
