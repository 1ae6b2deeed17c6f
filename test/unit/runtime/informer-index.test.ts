/**
 * The informer's indexes (client-go's Indexer) over a real SQLite store: kept with every change the
 * watch brings (an object filed under a new value leaves the old one; a deleted one leaves its
 * index), and an index added to a started informer holds what the cache holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../controller/api/session.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { until } from '../../support/until.js';

let dir: string;
let store: SqliteStore;
let cache: Informer<'AgentSession'>;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-index-'));
  store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
  cache = new Informer(store, 'AgentSession');
});
afterEach(async () => {
  cache.stop();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function add(name: string, node?: string): Promise<void> {
  const s = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { prompt: 'work' },
  } as AgentSession);
  if (node) await store.updateStatus({ ...s, status: { binding: { nodeName: node, epoch: 1 } } });
}
const names = (node: string) =>
  cache
    .byIndex('node', node)
    .map((s) => s.metadata.name)
    .sort();
const rv = async (name: string) =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name }))?.metadata.resourceVersion;

describe('informer indexes', () => {
  it('follow every change: filed under the new value and not the old, gone with the object', async () => {
    await add('a', 'n1');
    await add('b', 'n1');
    await add('c');
    await cache.start();
    cache.addIndex('node', (s) => s.status?.binding?.nodeName); // after the list: built from the cache
    expect(names('n1')).toEqual(['a', 'b']);
    expect(names('n2')).toEqual([]);

    const b = (await store.get({ kind: 'AgentSession', namespace: 'default', name: 'b' })) as AgentSession;
    await store.updateStatus({ ...b, status: { binding: { nodeName: 'n2', epoch: 2 } } });
    await add('d', 'n2');
    await store.delete({ kind: 'AgentSession', namespace: 'default', name: 'a' });
    const want = await rv('d');
    await until('the cache has the changes', () => cache.get('default', 'd')?.metadata.resourceVersion === want);
    expect(names('n1')).toEqual([]);
    expect(names('n2')).toEqual(['b', 'd']);
    expect(cache.byIndex('node', 'n2').find((s) => s.metadata.name === 'b')?.status?.binding?.epoch).toBe(2);
    expect(() => cache.byIndex('nope', 'n1')).toThrow(/no index nope/);
  });
});
