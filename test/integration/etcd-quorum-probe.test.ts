/**
 * The question behind the fuse's hold (controller/store/etcd-quorum.ts, docs/multi-host.md "A lost
 * quorum is not a lost node"), asked of a real 3-member etcd cluster: can nobody write at all? Yes
 * only when every member refuses or has no leader; a member that is silent (SIGSTOP: the port still
 * accepts, nothing answers, as behind a partition) may belong to a cluster that can still act.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterCannotCommit, probeMember } from '../../controller/store/etcd-quorum.js';
import { type EtcdCluster, startEtcdCluster } from '../support/etcd-cluster.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let cluster: EtcdCluster;

describe('can the etcd cluster commit at all', () => {
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  }, 60_000);

  afterAll(async () => {
    for (const m of cluster?.members ?? []) m.process?.kill('SIGCONT');
    await cluster?.stop();
  }, 30_000);

  it('a healthy cluster can: every member has a leader', async () => {
    expect(await Promise.all(cluster.endpoints.map((e) => probeMember(e, undefined)))).toEqual([
      'leader',
      'leader',
      'leader',
    ]);
    expect(await clusterCannotCommit(cluster.endpoints, undefined)).toBe(false);
  }, 30_000);

  it('two members silent (SIGSTOP): maybe a partition, so not "nobody can write"', async () => {
    await cluster.kill(1, 'SIGSTOP');
    await cluster.kill(2, 'SIGSTOP');
    try {
      // Past the election timeout (1 s): the third member has lost its leader by now.
      await sleep(3000);
      const answers = await Promise.all(cluster.endpoints.map((e) => probeMember(e, undefined)));
      expect(answers).toEqual(['noLeader', 'silent', 'silent']);
      expect(await clusterCannotCommit(cluster.endpoints, undefined)).toBe(false);
    } finally {
      cluster.members[1].process?.kill('SIGCONT');
      cluster.members[2].process?.kill('SIGCONT');
    }
  }, 30_000);

  it('two members down (refused) and the third without a leader: nobody can write', async () => {
    await sleep(3000); // the cluster whole again after the SIGCONT
    await cluster.kill(1, 'SIGKILL');
    await cluster.kill(2, 'SIGKILL');
    await sleep(3000);
    const answers = await Promise.all(cluster.endpoints.map((e) => probeMember(e, undefined)));
    expect(answers).toEqual(['noLeader', 'refused', 'refused']);
    expect(await clusterCannotCommit(cluster.endpoints, undefined)).toBe(true);
    await cluster.restart(1);
    await cluster.restart(2);
    expect(await clusterCannotCommit(cluster.endpoints, undefined)).toBe(false);
  }, 60_000);
});
