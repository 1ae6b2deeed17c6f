/**
 * A controller is not woken by the echo of its own write (runtime/own-writes.ts), over a real SQLite
 * store and informer, through the builder's `for`: every other change still brings the key — a write
 * not made through the noting store, another writer's change even when the controller's write went
 * on top of it, a deletion, a change whose previous version the cache never held.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../controller/api/session.js';
import { API_VERSION } from '../../../controller/api/types.js';
import { ControllerBuilder, type Registration } from '../../../controller/runtime/builder.js';
import { Informer } from '../../../controller/runtime/informer.js';
import { OwnWrites } from '../../../controller/runtime/own-writes.js';
import { WorkQueue } from '../../../controller/runtime/workqueue.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { until } from '../../support/until.js';

let dir: string;
let store: SqliteStore;
let cache: Informer<'AgentSession'>;
let own: OwnWrites;
/** Every key the `for` mapping brought, in order (the registration's `accepts` sees each one). */
let brought: string[];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-own-writes-'));
  store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
  cache = new Informer(store, 'AgentSession');
  own = new OwnWrites('AgentSession');
  brought = [];
  const r: Registration = {
    name: 'agentsession',
    queue: new WorkQueue('agentsession'),
    workers: 1,
    atStart: [],
    periodic: [],
    accepts: (k) => {
      brought.push(k);
      return false;
    },
    inFlight: [],
    onStop: [],
  };
  const log = { debug() {}, info() {}, warn() {}, error() {} } as never;
  new ControllerBuilder(r, { informer: () => cache as never, log }).for('AgentSession', { ownWrites: own });
  await cache.start();
});
afterEach(async () => {
  cache.stop();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const key = { kind: 'AgentSession', namespace: 'default', name: 's' } as const;
const get = async () => (await store.get(key)) as AgentSession;
/** Waits until the informer has handed over the store's current version of the session (or its deletion). */
async function settled(): Promise<void> {
  const want = (await store.get(key))?.metadata.resourceVersion;
  await until('the informer caught up', () => cache.get('default', 's')?.metadata.resourceVersion === want);
}
async function create(): Promise<AgentSession> {
  const s = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { prompt: 'work' },
  } as AgentSession);
  await settled();
  brought.length = 0;
  return s;
}

describe('the echo of a controller’s own write', () => {
  it('brings nothing; the same write made straight to the store brings the key', async () => {
    const s = await create();
    const noting = own.through(store);
    const a = await noting.update({ ...s, metadata: { ...s.metadata, finalizers: ['f'] } });
    const b = await noting.updateStatus({ ...a, status: { phase: 'Starting' } });
    await noting.txn([{ op: 'updateStatus', object: { ...b, status: { phase: 'Running' } } }]);
    await settled();
    expect(brought).toEqual([]);
    await store.updateStatus({ ...(await get()), status: { phase: 'Failed' } });
    await settled();
    expect(brought).toEqual(['default/s']);
  });

  it('another writer’s change is brought even when the own write went on top of it', async () => {
    const s = await create();
    await store.update({ ...s, spec: { prompt: 'other work' } } as AgentSession); // a user's edit
    await own.through(store).updateStatus({ ...(await get()), status: { phase: 'Starting' } });
    await settled();
    expect(brought).toEqual(['default/s']); // the edit's, once; none for the write over it
  });

  it('a write that stored nothing new notes nothing: the next change is brought', async () => {
    const s = await create();
    const same = await own.through(store).update(s); // unchanged: the store keeps the revision
    expect(same.metadata.resourceVersion).toBe(s.metadata.resourceVersion);
    await store.updateStatus({ ...s, status: { phase: 'Starting' } });
    await settled();
    expect(brought).toEqual(['default/s']);
  });

  it('is brought when the cache never held the version it was written over, and on deletion', async () => {
    const s = await create();
    const written = await own.through(store).updateStatus({ ...s, status: { phase: 'Starting' } });
    // As after a relist that skipped revisions: the cache had an older version than the write's base.
    const older = { ...s, metadata: { ...s.metadata, resourceVersion: '0' } };
    expect(own.isEcho('MODIFIED', written, older)).toBe(false);
    await settled();
    expect(brought).toEqual(['default/s']); // the note was used up above: the watch's copy is brought too
    brought.length = 0;
    const more = await own.through(store).updateStatus({ ...written, status: { phase: 'Running' } });
    await store.delete(key);
    await until('the informer saw the deletion', () => cache.get('default', 's') === undefined);
    expect(more.metadata.resourceVersion).toBeDefined();
    expect(brought).toEqual(['default/s']); // the deletion's; the Running write's echo brought nothing
  });
});
