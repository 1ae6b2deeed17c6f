/** The etcd backend's key layout and endpoint rules (pure: no cluster). */
import { describe, expect, it } from 'vitest';
import { isApiError } from '../../../controller/api/errors.js';
import { checkEndpoints } from '../../../controller/store/etcd-client.js';
import { EtcdKeys, rangeEnd } from '../../../controller/store/etcd-keys.js';

describe('etcd keys', () => {
  const keys = new EtcdKeys('/orchctl/');

  it('puts kind before namespace, with _ for cluster-scoped objects, and parses back', () => {
    const ns = { kind: 'AgentSession', namespace: 'default', name: 'a' };
    const cluster = { kind: 'Node', namespace: '', name: 'host-1' };
    expect(keys.object(ns)).toBe('/orchctl/objects/AgentSession/default/a');
    expect(keys.object(cluster)).toBe('/orchctl/objects/Node/_/host-1');
    expect(keys.parseObject(keys.object(ns))).toEqual(ns);
    expect(keys.parseObject(keys.object(cluster))).toEqual(cluster);
    expect(keys.parseObject('/orchctl/leases/x')).toBeUndefined();
    expect(keys.parseOwnerEntry(keys.ownerEntry('u-1', ns))).toEqual(ns);
  });

  it('gives one kind a range of its own: Agent does not cover AgentSession', () => {
    const agent = keys.objects('Agent');
    expect(keys.object({ kind: 'AgentSession', namespace: 'default', name: 'a' }).startsWith(agent)).toBe(false);
    expect(keys.objects('AgentSession', 'default')).toBe('/orchctl/objects/AgentSession/default/');
    expect(keys.objects('Node', '')).toBe('/orchctl/objects/Node/_/');
  });

  it('ends a prefix range at the prefix with its last byte + 1', () => {
    expect(rangeEnd('/a/').toString()).toBe('/a0');
    expect(rangeEnd('/orchctl/objects/').toString()).toBe('/orchctl/objects0');
  });
});

describe('etcd endpoints', () => {
  it('adds http:// to host:port and keeps loopback plaintext', () => {
    expect(checkEndpoints(['127.0.0.1:2379', 'http://localhost:2380/', 'http://[::1]:2381'])).toEqual([
      'http://127.0.0.1:2379',
      'http://localhost:2380',
      'http://[::1]:2381',
    ]);
    expect(checkEndpoints(['https://etcd-1.example:2379'])).toEqual(['https://etcd-1.example:2379']);
  });

  it('refuses plaintext to another host, other schemes, and no endpoints', () => {
    for (const bad of [['http://192.168.1.5:2379'], ['10.0.0.1:2379'], ['ftp://127.0.0.1:1'], []]) {
      let err: unknown;
      try {
        checkEndpoints(bad);
      } catch (e) {
        err = e;
      }
      expect(isApiError(err, 'BadRequest')).toBe(true);
    }
  });
});
