/**
 * Fencing of each role's writes against a real SQLite store (app/role-stores.ts, client/status.ts):
 * a node writes an AgentSession only while the version it writes is bound to it, and a merge retry
 * stops when the binding changed under it; the control plane's writes carry its lease and a
 * deposed leader writes nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession, AgentSessionStatus } from '../../../controller/api/session.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { LeaderStore, NodeStore } from '../../../controller/app/role-stores.js';
import { isBindingFenced, writeOwnedStatus } from '../../../controller/client/status.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { isFenced } from '../../../controller/store/store.js';

let dir: string;
let store: SqliteStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-roles-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const key = { kind: 'AgentSession', namespace: 'default', name: 's' };
const binding = (nodeName: string, epoch: number) => ({ nodeName, epoch, boundAt: '2026-03-01T10:00:00Z' });
async function session(status: AgentSessionStatus): Promise<AgentSession> {
  const created = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { prompt: 'p' },
  });
  return (await store.updateStatus({ ...created, status })) as AgentSession;
}
const reread = async () => (await store.get(key)) as AgentSession;

describe('a node agent', () => {
  it('writes a session bound to it, and nothing for one bound elsewhere or unbound', async () => {
    const node = new NodeStore(store, 'n1');
    const s = await session({ phase: 'Running', binding: binding('n1', 1) });
    await writeOwnedStatus(node, s, 'session', { reason: 'Running' });
    expect((await reread()).status?.reason).toBe('Running');

    const moved = (await store.updateStatus({
      ...(await reread()),
      status: { ...(await reread()).status, binding: binding('n2', 2) },
    })) as AgentSession;
    await expect(writeOwnedStatus(node, moved, 'session', { reason: 'Mine' })).rejects.toSatisfy(isBindingFenced);
    await expect(node.update({ ...moved, metadata: { ...moved.metadata, finalizers: ['x'] } })).rejects.toSatisfy(
      isBindingFenced,
    );
    expect((await reread()).status?.reason).toBe('Running');
  });

  it('does not carry a write over to a newer binding when its compare-and-swap fails', async () => {
    const node = new NodeStore(store, 'n1');
    const read = await session({ phase: 'Running', binding: binding('n1', 1) });
    // Meanwhile: node lost, unbound, bound again — to the same node, at a newer epoch.
    await store.updateStatus({ ...read, status: { ...read.status, binding: binding('n1', 2) } });
    await expect(writeOwnedStatus(node, read, 'session', { reason: 'Stale' })).rejects.toSatisfy(isBindingFenced);
    expect((await reread()).status?.reason).toBeUndefined();
  });

  it('still merges over a change by another writer when the binding is the same', async () => {
    const read = await session({ phase: 'Running', binding: binding('n1', 1) });
    await writeOwnedStatus(store, read, 'judge', { lastEvaluation: { run: 1, score: 4 } as never });
    await writeOwnedStatus(new NodeStore(store, 'n1'), read, 'session', { reason: 'Running' });
    const now = await reread();
    expect(now.status?.reason).toBe('Running');
    expect(now.status?.lastEvaluation).toMatchObject({ score: 4 });
  });
});

describe('the control plane', () => {
  it('writes while it holds the controller lease, and nothing once another holder took it over', async () => {
    const leader = new LeaderStore(store, { lease: 'orchctl-controller', holder: 'cp-1' });
    await store.tryAcquireLease('orchctl-controller', 'cp-1', 15);
    const s = await leader.create({
      apiVersion: API_VERSION,
      kind: 'Thing',
      metadata: { name: 'a', namespace: 'default' },
      spec: {},
    });
    await store.releaseLease('orchctl-controller', 'cp-1');
    await store.tryAcquireLease('orchctl-controller', 'cp-2', 15);
    await expect(leader.update({ ...s, spec: { x: 1 } })).rejects.toSatisfy(isFenced);
    await expect(
      leader.txn([{ op: 'delete', key: { kind: 'Thing', namespace: 'default', name: 'a' } }]),
    ).rejects.toSatisfy(isFenced);
    expect(await store.get({ kind: 'Thing', namespace: 'default', name: 'a' })).toBeDefined();
  });
});
