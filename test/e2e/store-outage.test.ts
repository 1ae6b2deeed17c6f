/**
 * A control plane outlives an etcd outage (issue 26, item 2): a real 3-member etcd, two control
 * planes (`controller --no-node`, the built CLI), every member killed for 20 s. Neither process
 * exits; each says in its log and /readyz that the store does not answer; once the members are
 * back the leader leads again, and the standby takes over when the leader is then killed. And such
 * a control plane runs nothing in tmux, so its log names no tmux socket (issue 26 item 4).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MultiHost, startMultiHost } from '../support/multihost.js';

const OUTAGE_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let mh: MultiHost;

async function readyz(url: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${url}/readyz`);
  return { status: r.status, text: await r.text() };
}

describe('control planes without a node (--no-node) on etcd', () => {
  beforeAll(async () => {
    mh = await startMultiHost({ nodes: [], controllers: 2, controllerMetrics: true });
  }, 120_000);

  afterAll(async () => {
    await mh?.stop();
  }, 60_000);

  it('all etcd members down for 20 s: no control plane exits, each says why; the standby takes over', async () => {
    const [cp0, cp1] = mh.controllers;
    await mh.waitFor('the standby standing by', async () => cp1.find('standing by') >= 0);
    const from = [cp0.log.length, cp1.log.length];
    await Promise.all([0, 1, 2].map((m) => mh.cluster.kill(m)));
    await sleep(OUTAGE_MS);
    expect(cp0.alive, cp0.tail()).toBe(true);
    expect(cp1.alive, cp1.tail()).toBe(true);
    expect(cp1.find('the store does not answer', from[1]), cp1.tail()).toBeGreaterThanOrEqual(0);
    expect(cp0.find('the store does not answer', from[0]), cp0.tail()).toBeGreaterThanOrEqual(0);
    for (const cp of [cp0, cp1]) {
      const r = await readyz(cp.metricsUrl!);
      expect(r.status).toBe(503);
      expect(r.text).toMatch(/the store has not answered for \d+s/);
    }
    await Promise.all([0, 1, 2].map((m) => mh.cluster.restart(m)));

    // A lease that ran out in the outage goes to whichever asks first when the store is back: the
    // leader taking it back, or the standby. A leader that lost its lease stops (as a Kubernetes
    // controller does; its supervisor starts it again, to stand by) — never because the store was slow.
    await mh.waitFor(
      'a leader ready again',
      async () => {
        const l = await mh.leader();
        return !!l && (await readyz(l.metricsUrl!)).status === 200;
      },
      30_000,
    );
    const leader = (await mh.leader())!;
    const other = leader === cp0 ? cp1 : cp0;
    if (!other.alive) {
      expect(
        other.find('lost the controller lease to another controller', from[other === cp0 ? 0 : 1]),
      ).toBeGreaterThan(-1);
      return;
    }
    await mh.waitFor('the standby standing by again', async () => {
      const r = await readyz(other.metricsUrl!);
      return r.text.includes('standing by');
    });
    await leader.kill('SIGKILL');
    await mh.waitFor('the standby leading', async () => (await mh.leader()) === other, 30_000);
    await mh.waitFor('the standby ready', async () => (await readyz(other.metricsUrl!)).status === 200, 30_000);
  }, 150_000);

  it('a --no-node control plane names no tmux socket, and on SIGTERM promises no tmux sessions', async () => {
    const cp = (await mh.leader())!;
    const acquired = cp.log[cp.find('acquired the lease')];
    expect(acquired).toContain('store ');
    expect(acquired).not.toContain('tmux');
    const from = cp.log.length;
    await cp.kill('SIGTERM');
    const bye = cp.log[cp.find('SIGTERM: shutting down', from)];
    expect(bye).toBeDefined();
    expect(bye).not.toContain('tmux');
  }, 30_000);
});
