/**
 * The etcd store against the SQLite store, in one run on one machine: per-call latency (p50, p99)
 * of create, get + CAS update, a 3-op transaction with an `unchanged` guard, a list of 500
 * sessions, and write → watch event; then the etcd figures as ratios of SQLite's. etcd is a real
 * 3-member cluster of Debian's etcd-server on loopback (fast elections: heartbeat 100 ms, election
 * 1000 ms; every member on the same 2 cores as the benchmark), SQLite a real WAL file. Last, how
 * long writes stall when the raft leader is SIGKILLed (the first write that succeeds after it).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Resource } from '../../controller/api/types.js';
import { EtcdStore } from '../../controller/store/etcd.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import type { Store } from '../../controller/store/store.js';
import { etcdAvailable, startEtcdCluster } from '../../test/support/etcd-cluster.js';
import { percentile, tempDir } from '../lib.js';
import type { Bench } from '../types.js';
import { sampleSession } from './cli-get.js';

const N = 500;
const LIST_RUNS = 50;
const KILL_TRIALS = 3;

const now = () => Number(process.hrtime.bigint()) / 1e6;

interface Stats {
  p50: number;
  p99: number;
}

/** Two decimals: SQLite's calls take well under a millisecond. */
const r2 = (n: number) => Math.round(n * 100) / 100;

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < Math.min(50, n); i++) await fn(-1 - i); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await fn(i);
    ms.push(now() - t0);
  }
  return { p50: r2(percentile(ms, 50)), p99: r2(percentile(ms, 99)) };
}

type Figures = Record<'create' | 'update' | 'txn' | 'list' | 'watch', Stats>;

async function measure(store: Store): Promise<Figures> {
  const name = (i: number) => (i < 0 ? `warm-${-i}` : `s-${i}`);
  const create = await timed(N, (i) =>
    store.create({ ...sampleSession(0), metadata: { name: name(i), namespace: 'default' } }),
  );
  const key = (i: number) => ({ kind: 'AgentSession', namespace: 'default', name: name(i) });
  // get + update carrying the resourceVersion just read (what a reconciler does); the update alone is timed.
  const current: Resource[] = [];
  for (let i = 0; i < N; i++) current.push((await store.get(key(i)))!);
  const update = await timed(N, async (i) => {
    const cur = i < 0 ? (await store.get(key(i)))! : current[i];
    await store.update({ ...cur, spec: { ...cur.spec, prompt: `revision ${i}` } });
  });
  const txn = await timed(N, async (i) => {
    const since = (await store.list('Project', { namespace: 'default' })).revision;
    const cur = (await store.get(key(i)))!;
    await store.txn([
      { op: 'unchanged', kind: 'Project', namespace: 'default', since },
      { op: 'create', object: { ...sampleSession(0), metadata: { name: `t-${name(i)}`, namespace: 'default' } } },
      { op: 'updateStatus', object: { ...cur, status: { phase: 'Running', heartbeat: i } } },
    ]);
  });
  const list = await timed(LIST_RUNS, () => store.list('AgentSession', { namespace: 'default' }));
  // Write → event: a watch on the kind, one write at a time, timed from before the write to the event.
  let arrived: (() => void) | undefined;
  const w = store.watch({ kind: 'AgentSession', fromRevision: await store.revision() }, () => arrived?.());
  const watch = await timed(N, async (i) => {
    const seen = new Promise<void>((r) => {
      arrived = r;
    });
    const cur = (await store.get(key(i)))!;
    await store.updateStatus({ ...cur, status: { phase: 'Running', heartbeat: `w${i}` } });
    await seen;
  });
  w.close();
  return { create, update, txn, list, watch };
}

/** SIGKILL the raft leader while writing; how long until a write succeeds again. */
async function leaderKillStall(cluster: Awaited<ReturnType<typeof startEtcdCluster>>, store: Store): Promise<number[]> {
  const stalls: number[] = [];
  for (let t = 0; t < KILL_TRIALS; t++) {
    const leader = await cluster.leader();
    await cluster.kill(leader);
    const t0 = now();
    for (let i = 0; ; i++) {
      const ok = await store
        .create({ ...sampleSession(0), metadata: { name: `kill-${t}-${i}`, namespace: 'default' } })
        .then(
          () => true,
          () => false,
        );
      if (ok) break;
    }
    stalls.push(Math.round(now() - t0));
    await cluster.restart(leader);
  }
  return stalls;
}

const ratio = (a: number, b: number) => Math.round((a / b) * 10) / 10;

export const storeEtcdBench: Bench = {
  name: 'store-etcd',
  description: `EtcdStore (3 members, loopback) vs SqliteStore: create/update/txn/list/watch p50 p99, ${N} sessions`,
  async run() {
    if (!etcdAvailable) throw new Error('/usr/bin/etcd is missing: apt-get install etcd-server');
    const dir = tempDir('store-etcd');
    const cluster = await startEtcdCluster();
    const sqlite = new SqliteStore(path.join(dir, 'state.db'));
    const etcd = new EtcdStore({ endpoints: cluster.endpoints, prefix: '/bench/' });
    try {
      const onSqlite = await measure(sqlite);
      const onEtcd = await measure(etcd);
      const stallMs = await leaderKillStall(cluster, etcd);
      const ratios = Object.fromEntries(
        (Object.keys(onEtcd) as (keyof Figures)[]).map((k) => [
          k,
          { p50: ratio(onEtcd[k].p50, onSqlite[k].p50), p99: ratio(onEtcd[k].p99, onSqlite[k].p99) },
        ]),
      );
      const line = (k: keyof Figures) =>
        `${k} ${onEtcd[k].p50}/${onEtcd[k].p99} ms (${ratios[k].p50}x/${ratios[k].p99}x)`;
      return {
        sessions: N,
        sqlite: onSqlite,
        etcd: onEtcd,
        ratioEtcdToSqlite: ratios,
        leaderKillStallMs: stallMs,
        summary:
          `etcd p50/p99 (x SQLite): ${(Object.keys(onEtcd) as (keyof Figures)[]).map(line).join(', ')}; ` +
          `write stall after leader SIGKILL ${stallMs.join('/')} ms`,
      };
    } finally {
      await etcd.close();
      await sqlite.close();
      await cluster.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
