/**
 * The etcd backend against a real 3-member etcd cluster (Debian's etcd-server, started by the
 * test on free loopback ports): the store conformance suite, then what only a distributed store
 * has — a watch that goes on across a SIGKILL of the raft leader, compaction → Gone, a write
 * without a quorum failing within its deadline, leader fencing, TLS rules.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../controller/api/errors.js';
import { EtcdStore } from '../../controller/store/etcd.js';
import type { WatchEvent } from '../../controller/store/store.js';
import { type EtcdCluster, makeTlsFiles, startEtcdCluster } from '../support/etcd-cluster.js';
import { apiError, describeStoreConformance, session } from '../support/store-conformance.js';
import { until } from '../support/until.js';

let cluster: EtcdCluster;
let n = 0;

describe('EtcdStore', () => {
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  describeStoreConformance(
    'EtcdStore (3 members)',
    async (opts) =>
      new EtcdStore({ endpoints: cluster.endpoints, prefix: `/t${++n}/`, retainRevisions: opts?.retainRevisions }),
  );

  const open = (opts: { callTimeoutMs?: number } = {}) =>
    new EtcdStore({ endpoints: cluster.endpoints, prefix: `/x${++n}/`, ...opts });

  it('a watch goes on across a SIGKILL of the raft leader: no event lost or repeated', async () => {
    const store = open();
    const events: WatchEvent[] = [];
    const errors: Error[] = [];
    const w = store.watch(
      { kind: 'AgentSession', fromRevision: await store.revision() },
      (ev) => events.push(ev),
      (e) => errors.push(e),
    );
    // A writer that goes on through the election; a write that timed out may or may not have applied.
    let stop = false;
    let i = 0;
    const writer = (async () => {
      while (!stop) {
        await store.create(session(`s${i++}`)).catch((e) => {
          if (!isApiError(e, 'Timeout') && !isApiError(e, 'Unavailable') && !isApiError(e, 'AlreadyExists')) throw e;
        });
      }
    })();
    await until('writes before the kill', () => events.length >= 20, 10_000);
    const leader = await cluster.leader();
    await cluster.kill(leader);
    const before = events.length;
    await until('writes after the election', () => events.length >= before + 20, 20_000);
    stop = true;
    await writer;
    const { items, revision } = await store.list('AgentSession');
    await until('the watch to catch up', () => (events.at(-1)?.revision ?? 0) >= revision - 0, 10_000);
    expect(errors).toEqual([]);
    const names = events.map((e) => e.object.metadata.name);
    expect(new Set(names).size).toBe(names.length); // nothing twice
    expect(names.sort()).toEqual(items.map((o) => o.metadata.name).sort()); // nothing lost
    expect(events.every((e) => e.type === 'ADDED')).toBe(true);
    for (let k = 1; k < events.length; k++) expect(events[k].revision).toBeGreaterThan(events[k - 1].revision);
    w.close();
    await store.close();
    await cluster.restart(leader);
  });

  it('a watch from a revision the cluster compacted fails with Gone', async () => {
    const store = open();
    const first = await store.create(session('a'));
    for (let k = 0; k < 5; k++)
      await store.update({
        ...first,
        metadata: { ...first.metadata, resourceVersion: undefined },
        spec: { prompt: `p${k}` },
      });
    const rev = await store.revision();
    // Compaction as an operator's etcdctl (or --auto-compaction) does it, outside the store.
    await execa('etcdctl', ['--endpoints', cluster.endpoints.join(','), 'compact', String(rev)]);
    const errors: Error[] = [];
    const events: WatchEvent[] = [];
    store.watch(
      { fromRevision: Number(first.metadata.resourceVersion) },
      (e) => events.push(e),
      (e) => errors.push(e),
    );
    await until('the Gone error', () => errors.length > 0, 5000);
    expect(events).toEqual([]);
    expect(isApiError(errors[0], 'Gone')).toBe(true);
    expect(errors[0].message).toMatch(/compacted/);
    // From the compaction revision on it works.
    const w = store.watch({ fromRevision: rev }, (e) => events.push(e));
    await store.update({
      ...first,
      metadata: { ...first.metadata, resourceVersion: undefined },
      spec: { prompt: 'z' },
    });
    await until('an event', () => events.length === 1, 5000);
    w.close();
    await store.close();
  });

  it('without a quorum a write fails within its deadline with a clear error, and works again after', async () => {
    const store = open({ callTimeoutMs: 1500 });
    await store.create(session('before'));
    const leader = await cluster.leader();
    const others = [0, 1, 2].filter((k) => k !== leader);
    await cluster.kill(others[0]);
    await cluster.kill(others[1]);
    const t0 = Date.now();
    const e = await apiError(store.create(session('no-quorum')));
    const took = Date.now() - t0;
    expect(['Timeout', 'Unavailable']).toContain(e.reason);
    expect(e.message).toContain(cluster.endpoints[leader]);
    expect(took).toBeLessThan(1500 + 500);
    // Reads that need the leader fail within the deadline too: nothing hangs.
    const t1 = Date.now();
    await apiError(store.list('AgentSession'));
    expect(Date.now() - t1).toBeLessThan(1500 + 500);
    await Promise.all(others.map((k) => cluster.restart(k)));
    let ok = false;
    for (let k = 0; k < 20 && !ok; k++)
      ok = await store.create(session(`after-${k}`)).then(
        () => true,
        () => false,
      );
    expect(ok).toBe(true);
    await store.close();
  });

  it('a transaction of 300 creates (an apply of a directory) is one etcd txn at one revision', async () => {
    const store = open();
    const res = await store.txn(
      Array.from({ length: 300 }, (_, k) => ({ op: 'create' as const, object: session(`m${k}`) })),
    );
    expect(new Set(res.map((o) => o.metadata.resourceVersion)).size).toBe(1);
    expect((await store.list('AgentSession')).items).toHaveLength(300);
    await store.close();
  });

  it('a lease renewal by its holder is one etcd request; after another writer, it reads the lease again', async () => {
    // Counted by the members themselves (their /metrics): every request of every client of the cluster.
    const requests = async () => {
      let total = 0;
      for (const e of cluster.endpoints) {
        const text = await (await fetch(`${e}/metrics`)).text();
        for (const m of text.matchAll(/^grpc_server_handled_total\{[^}]*grpc_method="(Range|Txn)"[^}]*\} (\d+)/gm))
          total += Number(m[2]);
      }
      return total;
    };
    const prefix = `/lease${++n}/`;
    const same = () => new EtcdStore({ endpoints: cluster.endpoints, prefix });
    const store = same();
    const other = same();
    await store.revision(); // connected
    await other.revision();
    expect(await store.tryAcquireLease('orchctl-node-n1', 'a', 15)).toBeDefined();
    const before = await requests();
    for (let i = 0; i < 5; i++)
      expect((await store.tryAcquireLease('orchctl-node-n1', 'a', 15))?.holderIdentity).toBe('a');
    expect((await requests()) - before).toBe(5);
    // Another writer (here a release and a takeover): the holder's next try reads, and finds it taken.
    await store.releaseLease('orchctl-node-n1', 'a');
    expect(await other.tryAcquireLease('orchctl-node-n1', 'b', 15)).toBeDefined();
    expect(await store.tryAcquireLease('orchctl-node-n1', 'a', 15)).toBeUndefined();
    expect((await other.getLease('orchctl-node-n1'))?.holderIdentity).toBe('b');
    // And one whose lease another process renewed meanwhile: still the holder's, read again and renewed.
    const renewed = await other.tryAcquireLease('orchctl-node-n1', 'b', 15);
    const third = same();
    expect((await third.tryAcquireLease('orchctl-node-n1', 'b', 15))?.acquireTime).toBe(renewed?.acquireTime);
    expect((await other.tryAcquireLease('orchctl-node-n1', 'b', 15))?.holderIdentity).toBe('b');
    await Promise.all([store.close(), other.close(), third.close()]);
  });

  it('a fenced transaction fails on etcd in the same txn as the lease check', async () => {
    const store = open();
    const other = open();
    await store.tryAcquireLease('orchctl-controller', 'a', 10);
    // Another process takes the (released) lease between this leader's checks.
    await store.releaseLease('orchctl-controller', 'a');
    await other.tryAcquireLease('orchctl-controller', 'b', 10);
    const e = await apiError(
      store.txn([{ op: 'create', object: session('x') }], { fence: { lease: 'orchctl-controller', holder: 'a' } }),
    );
    expect(e.reason).toBe('Conflict');
    expect(e.message).toContain('orchctl-controller');
    await store.close();
    await other.close();
  });
});

describe('EtcdStore over TLS with client certificates', () => {
  let tlsCluster: EtcdCluster;
  let files: ReturnType<typeof makeTlsFiles>;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-etcd-tls-'));
  beforeAll(async () => {
    files = makeTlsFiles(dir);
    tlsCluster = await startEtcdCluster({ size: 1, tls: files.server, clientTls: files.client });
  });
  afterAll(async () => {
    await tlsCluster?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('works with the CA and a client certificate, and fails clearly without the certificate', async () => {
    expect(tlsCluster.endpoints[0]).toMatch(/^https:/);
    const store = new EtcdStore({ endpoints: tlsCluster.endpoints, tls: files.client });
    const a = await store.create(session('a'));
    expect((await store.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }))?.metadata.uid).toBe(
      a.metadata.uid,
    );
    await store.close();
    // The server asks for a client certificate: with the CA alone the handshake fails, within the deadline.
    const anonymous = new EtcdStore({
      endpoints: tlsCluster.endpoints,
      tls: { ca: files.client.ca },
      callTimeoutMs: 1500,
    });
    const e = await apiError(anonymous.get({ kind: 'AgentSession', namespace: 'default', name: 'a' }));
    expect(['Unavailable', 'Timeout']).toContain(e.reason);
    expect(e.message).toContain(tlsCluster.endpoints[0]);
    await anonymous.close();
  });
});

describe('EtcdStore endpoints and TLS', () => {
  it('refuses plaintext http to another host, naming the endpoint', () => {
    const e = (() => {
      try {
        new EtcdStore({ endpoints: ['http://127.0.0.1:2379', 'http://10.0.0.7:2379'] });
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(isApiError(e, 'BadRequest')).toBe(true);
    expect(e.message).toContain('http://10.0.0.7:2379');
    expect(e.message).toMatch(/https/);
  });

  it('allows plaintext on loopback only, and TLS files only with https', async () => {
    for (const ep of ['http://127.0.0.1:2379', '127.3.4.5:2379', 'http://localhost:2379', 'http://[::1]:2379'])
      await new EtcdStore({ endpoints: [ep] }).close();
    await new EtcdStore({ endpoints: ['https://10.0.0.7:2379'] }).close();
    expect(() => new EtcdStore({ endpoints: ['etcd.example:2379'] })).toThrow(/plaintext/);
    expect(() => new EtcdStore({ endpoints: ['http://127.0.0.1:2379'], tls: { ca: '/nonexistent' } })).toThrow(/https/);
    expect(() => new EtcdStore({ endpoints: ['https://10.0.0.7:2379'], tls: { ca: '/nonexistent/ca.pem' } })).toThrow(
      /\/nonexistent\/ca.pem/,
    );
  });
});
