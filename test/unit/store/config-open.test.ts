/**
 * Opening the store a config names (store/open.ts): the embedded default opens at once as before,
 * a context's SQLite file is opened behind a DeferredStore that behaves as the store itself, a bad
 * config is the first call's error and changes nothing, and an etcd context gets the etcd backend.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../controller/config/config.js';
import type { Resource } from '../../../controller/api/types.js';
import { DeferredStore } from '../../../controller/store/deferred.js';
import { EtcdStore } from '../../../controller/store/etcd.js';
import { openStore, storeFor, storeTarget } from '../../../controller/store/open.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import type { WatchEvent } from '../../../controller/store/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function home(config?: string): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-open-'));
  dirs.push(h);
  if (config !== undefined) fs.writeFileSync(path.join(h, 'config'), config);
  return h;
}

const agent = (name: string): Resource => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Agent',
  metadata: { name, namespace: 'default' },
  spec: { command: ['sh'] },
});

describe('storeFor', () => {
  it('with nothing configured opens the embedded SQLite file at once, and readonly creates nothing', async () => {
    const h = home();
    const ro = storeFor({ home: h, env: {} }, { readonly: true });
    expect(ro).toBeInstanceOf(SqliteStore);
    expect((await ro.list('Agent')).items).toEqual([]);
    await ro.close();
    expect(fs.readdirSync(h)).toEqual([]);
    const rw = storeFor({ home: h, env: {} });
    await rw.create(agent('a'));
    await rw.close();
    expect(fs.existsSync(path.join(h, 'state.db'))).toBe(true);
  });

  it("a context's SQLite file, behind a DeferredStore that reads, writes and watches like the store", async () => {
    const h = home('currentContext: other\ncontexts:\n  - name: other\n    store: {sqlite: {path: data/other.db}}\n');
    const s = storeFor({ home: h, env: {} });
    expect(s).toBeInstanceOf(DeferredStore);
    const seen: WatchEvent[] = [];
    const w = s.watch({ kind: 'Agent', fromRevision: 0 }, (ev) => seen.push(ev));
    const created = await s.create(agent('a'));
    await s.txn([{ op: 'create', object: agent('b') }]);
    expect((await s.get({ kind: 'Agent', namespace: 'default', name: 'a' }))?.metadata.uid).toBe(created.metadata.uid);
    await expect.poll(() => seen.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a', 'ADDED b']);
    w.close();
    await s.close();
    expect(fs.existsSync(path.join(h, 'data/other.db'))).toBe(true);
    expect(fs.existsSync(path.join(h, 'state.db'))).toBe(false);
  });

  it('a bad config: every call fails with its located error, close is quiet, nothing is created', async () => {
    const h = home('currentContext: a\ncontexts:\n  - name: a\n    store: {sqlite: {path: x.db, mode: wal}}\n');
    const before = fs.readFileSync(path.join(h, 'config'), 'utf8');
    const s = storeFor({ home: h, env: {} });
    await expect(s.list('Agent')).rejects.toThrow(ConfigError);
    await expect(s.create(agent('a'))).rejects.toThrow(/config:4:34 contexts\[0\]\.store\.sqlite\.mode: unknown field/);
    const errors: Error[] = [];
    s.watch(
      { fromRevision: 0 },
      () => undefined,
      (e) => errors.push(e),
    );
    await expect.poll(() => errors.length).toBe(1);
    await s.close();
    expect(fs.readdirSync(h)).toEqual(['config']);
    expect(fs.readFileSync(path.join(h, 'config'), 'utf8')).toBe(before);
  });

  it('--context and ORCHCTL_STORE choose over the current context', async () => {
    const h = home(
      'currentContext: a\ncontexts:\n  - name: a\n    store: {sqlite: {path: a.db}}\n' +
        '  - name: b\n    store: {sqlite: {path: b.db}}\n',
    );
    const env = { ORCHCTL_STORE: `sqlite:${path.join(h, 'env.db')}` };
    for (const [choice, file] of [
      [{ home: h, context: 'b', env }, 'b.db'],
      [{ home: h, env }, 'env.db'],
      [{ home: h, env: {} }, 'a.db'],
    ] as const) {
      const s = storeFor(choice);
      await s.create(agent('x'));
      await s.close();
      expect(fs.existsSync(path.join(h, file))).toBe(true);
      expect((await storeTarget(choice)).location).toEqual({ backend: 'sqlite', path: path.join(h, file) });
    }
  });
});

describe('openStore', () => {
  it('an etcd location gets the etcd backend with its options (nothing is contacted until a call)', async () => {
    const s = await openStore({
      backend: 'etcd',
      endpoints: ['http://127.0.0.1:2379'],
      prefix: '/t/',
      tls: undefined,
      callTimeoutMs: 1500,
    });
    expect(s).toBeInstanceOf(EtcdStore);
    expect((s as EtcdStore).opts).toEqual({ endpoints: ['http://127.0.0.1:2379'], prefix: '/t/', callTimeoutMs: 1500 });
    await s.close();
  });
});
