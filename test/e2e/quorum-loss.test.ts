/**
 * Losing etcd's quorum (issue 26 item 1): a real 3-member cluster, two node agents and a control
 * plane (test/support/multihost.ts). While no member has a leader nobody can write, so nobody can
 * move a session: the nodes' fuses hold and the control plane counts no node lost for that time.
 *  1. two of three members stopped for 60 s (more than the fuse's 20 s, and the 25 s grace): no
 *     agent is killed, no session moves, no restart is counted, no fuse fires;
 *  2. a node agent SIGSTOPped through a quorum loss is still fenced: it touches no heartbeat, so
 *     its fuse fires, and its sessions move only after that.
 * A sampler of both tmux servers runs throughout: no session ever has two live runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node } from '../../controller/api/node.js';
import type { AgentSession } from '../../controller/api/session.js';
import type { Resource } from '../../controller/api/types.js';
import { fuseFiles } from '../../controller/app/watchdog.js';
import { boundRunning, type MultiHost, type Sampler, simAgent, startMultiHost } from '../support/multihost.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Above the fuse (node lease 15 s + 5 s) and the grace (25 s): without the rule both would act. */
const OUTAGE_MS = 60_000;

let mh: MultiHost;
let sampler: Sampler;

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const SESSIONS = names('q', 6);

function session(name: string): object {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name },
    spec: {
      agentRef: 'sim',
      workdir: path.join(mh.dir, 'work'),
      prompt: `[fast] [idle] tidy up ${name}`,
      restartPolicy: 'Always',
    },
  };
}

/** Where each session is, which run, how many restarts. */
function state(all: AgentSession[]) {
  return Object.fromEntries(
    all
      .filter((s) => SESSIONS.includes(s.metadata.name))
      .map((s) => [
        s.metadata.name,
        { node: s.status?.binding?.nodeName, run: s.status?.run, restarts: s.status?.restarts ?? 0 },
      ]),
  );
}

async function allRunning(): Promise<AgentSession[]> {
  return mh.waitFor(
    'every session Running',
    async () => {
      const all = await mh.sessions();
      return SESSIONS.every((n) => boundRunning(all.find((s) => s.metadata.name === n))) && all;
    },
    90_000,
  );
}

const fusedLines = (node: string) => {
  const f = fuseFiles(mh.nodes[node].home).fusedFile;
  return fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

async function events(reason: string): Promise<Resource[]> {
  const { items } = await mh.store.list('Event', { namespace: '' });
  const ns = await mh.store.list('Event', { namespace: 'default' });
  return [...items, ...ns.items].filter((e) => e.reason === reason);
}

/** Stops two of the three members (their ports refuse), for `ms`, then starts them again. */
async function loseQuorum(ms: number): Promise<void> {
  await mh.cluster.kill(1, 'SIGKILL');
  await mh.cluster.kill(2, 'SIGKILL');
  await sleep(ms);
  await mh.cluster.restart(1);
  await mh.cluster.restart(2);
}

describe('losing etcd quorum', () => {
  beforeAll(async () => {
    mh = await startMultiHost({
      nodes: [{ name: 'n1' }, { name: 'n2' }],
      controllers: 1,
      nodeLostGrace: '25s',
      nodeArgs: ['--observe-interval', '1s', '--resync', '3s'],
    });
    sampler = mh.sample(500);
    fs.mkdirSync(path.join(mh.dir, 'work'));
    await mh.apply([simAgent('sim')]);
    await mh.apply(SESSIONS.map(session));
  }, 120_000);

  afterAll(async () => {
    await sampler?.stop();
    await mh?.stop();
  }, 60_000);

  it('60 s without quorum: no agent killed, no session moved, no restart counted, no fuse fired', async () => {
    const before = state(await allRunning());
    const panes = async () => [...(await mh.livePanes('n1')), ...(await mh.livePanes('n2'))].map((p) => p.pid).sort();
    const pids = await panes();
    expect(pids).toHaveLength(SESSIONS.length);
    expect(new Set(Object.values(before).map((s) => s.node))).toEqual(new Set(['n1', 'n2']));

    await loseQuorum(OUTAGE_MS);
    // Back: both nodes renew; a control plane that counted the outage against them would mark them
    // lost at once (their leases are 60 s old) and move their sessions (the grace is long past).
    await mh.waitFor('both nodes renewing again', async () => {
      const leases = await Promise.all(['n1', 'n2'].map((n) => mh.lease(`orchctl-node-${n}`)));
      return leases.every((l) => l && Date.now() - Date.parse(l.renewTime) < 5000);
    });
    await sleep(8000); // a few rounds of node lifecycle (every 2 s) after the return

    expect(fusedLines('n1')).toEqual([]);
    expect(fusedLines('n2')).toEqual([]);
    expect(await panes()).toEqual(pids);
    expect(state(await allRunning())).toEqual(before);
    expect((await events('NodeNotReady')).map((e) => e.message)).toEqual([]);
    expect((await events('NodeLost')).map((e) => e.message)).toEqual([]);
    for (const n of ['n1', 'n2']) {
      const node = (await mh.store.get({ kind: 'Node', namespace: '', name: n })) as Node;
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    }
    expect(mh.nodes.n1.find('the fuse holds')).toBeGreaterThanOrEqual(0);
    expect(sampler.doubles).toEqual([]);
  }, 180_000);

  it('a node agent SIGSTOPped through a quorum loss is still fenced before its sessions move', async () => {
    const before = state(await allRunning());
    const onN2 = Object.keys(before).filter((n) => before[n].node === 'n2');
    expect(onN2.length).toBeGreaterThan(0);
    await mh.nodes.n2.kill('SIGSTOP');
    // Longer than the fuse (20 s): the stopped agent touches no heartbeat, whatever etcd says.
    await loseQuorum(25_000);
    expect(fusedLines('n2').length).toBeGreaterThan(0);
    expect(await mh.livePanes('n2')).toEqual([]);
    // After the store's return plus the grace, n2's sessions run on n1; n1's were never touched.
    const moved = await mh.waitFor(
      "n2's sessions Running on n1",
      async () => {
        const all = await mh.sessions();
        return (
          onN2.every((n) =>
            boundRunning(
              all.find((s) => s.metadata.name === n),
              'n1',
            ),
          ) && all
        );
      },
      90_000,
    );
    const after = state(moved);
    for (const n of Object.keys(before).filter((x) => before[x].node === 'n1')) expect(after[n]).toEqual(before[n]);
    expect(fusedLines('n1')).toEqual([]);
    expect(sampler.doubles).toEqual([]);
    expect(sampler.samples).toBeGreaterThan(100);
    await mh.nodes.n2.kill('SIGCONT');
  }, 240_000);
});
