/**
 * Posting a message on an AgentSession (client/message.ts) against a real SQLite store: one at a
 * time (a second waits while the first is unanswered), idempotent per id (a retry never makes a
 * second message, not even after it was answered), and taken back only while its node has not
 * recorded Delivering — the compare-and-swap a node's record and a sender's withdrawal race on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MESSAGE_ANNOTATION, pendingMessage } from '../../../controller/api/message.js';
import type { AgentSession, MessageDeliveryStatus } from '../../../controller/api/session.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { messageOutcome, postMessage, withdrawMessage } from '../../../controller/client/message.js';
import { writeOwnedStatus } from '../../../controller/client/status.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';

const T0 = '2026-03-01T10:00:00.000Z';
let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-message-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  const created = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', annotations: { keep: 'me' } },
    spec: { agentRef: 'a', prompt: 'p' },
  });
  await store.updateStatus({ ...created, status: { phase: 'Running', run: 1 } });
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const read = async () => (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's' })) as AgentSession;
const answer = async (d: Omit<MessageDeliveryStatus, 'at'>) =>
  writeOwnedStatus(store, await read(), 'session', { messageDelivery: { ...d, at: T0 } });

describe('messages through the store', () => {
  it('one at a time, idempotent per id, and never posted again once answered', async () => {
    const posted = await postMessage(store, 'default', 's', { id: 'a', text: 'first', from: 'me' });
    expect(posted.outcome).toBe('posted');
    const s = await read();
    expect(JSON.parse(s.metadata.annotations![MESSAGE_ANNOTATION])).toEqual({ id: 'a', text: 'first', from: 'me' });
    expect(s.metadata.annotations?.keep).toBe('me');
    expect(s.metadata.generation).toBe(1); // a request, not a spec change: no new run
    expect(pendingMessage(s.metadata.annotations, s.status)).toBe('a');

    const rv = s.metadata.resourceVersion;
    expect((await postMessage(store, 'default', 's', { id: 'a', text: 'first' })).outcome).toBe('posted');
    expect((await read()).metadata.resourceVersion).toBe(rv); // the same id again: no write
    expect(await postMessage(store, 'default', 's', { id: 'b', text: 'second' })).toMatchObject({
      outcome: 'busy',
      pending: 'a',
    });

    await answer({ id: 'a', state: 'Waiting', reason: 'Paused', message: 'paused' });
    expect((await postMessage(store, 'default', 's', { id: 'b', text: 'second' })).outcome).toBe('busy');
    expect(messageOutcome(await read(), 'a')).toBeUndefined();
    await answer({ id: 'a', state: 'Delivered', delivered: true, reason: 'Confirmed', message: 'ok' });
    expect(messageOutcome(await read(), 'a')).toMatchObject({ state: 'Delivered' });
    // A retry of the answered message is not a new one; the slot is free for the next.
    const rv2 = (await read()).metadata.resourceVersion;
    expect((await postMessage(store, 'default', 's', { id: 'a', text: 'first' })).outcome).toBe('posted');
    expect((await read()).metadata.resourceVersion).toBe(rv2);
    expect((await postMessage(store, 'default', 's', { id: 'b', text: 'second' })).outcome).toBe('posted');
    expect(pendingMessage((await read()).metadata.annotations, (await read()).status)).toBe('b');
    expect((await postMessage(store, 'default', 'gone', { id: 'c', text: 'x' })).outcome).toBe('missing');
  });

  it('withdrawn while it waits; not once its node recorded Delivering', async () => {
    await postMessage(store, 'default', 's', { id: 'a', text: 'first' });
    await answer({ id: 'a', state: 'Waiting', reason: 'AgentBusy', message: 'busy' });
    expect(await withdrawMessage(store, 'default', 's', 'a')).toBe(true);
    expect((await read()).metadata.annotations?.[MESSAGE_ANNOTATION]).toBeUndefined();
    expect(await withdrawMessage(store, 'default', 's', 'a')).toBe(false);

    await postMessage(store, 'default', 's', { id: 'b', text: 'second' });
    await answer({ id: 'b', state: 'Delivering', reason: 'Delivering', message: 'typing' });
    expect(await withdrawMessage(store, 'default', 's', 'b')).toBe(false);
    expect(pendingMessage((await read()).metadata.annotations, (await read()).status)).toBe('b');
  });
});
