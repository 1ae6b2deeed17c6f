/**
 * What one launch costs, counted, not timed: in store writes, from the store's change log — from
 * apply to Running a session is written four times: bound to the node (scheduler), given its
 * finalizer, its run recorded (Starting) before tmux starts it, Running — and no more; in session
 * reconciles, from the controller's /metrics — one pass, which adds the finalizer and launches,
 * and none for the echoes of its own writes (issue 29: a pass for the finalizer alone and one for
 * the echo of the Running write made it three per launch).
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';
import { freePort, httpGet } from '../support/metrics-helpers.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

it('a session is written four times from apply to Running: bound, finalizer, run recorded, Running', async () => {
  h = await makeHarness();
  const harness = h;
  const names = Array.from({ length: 6 }, (_, i) => `w-${i}`);
  await harness.apply(names.map((n) => shellSession(n, 'exec sleep 300', harness.repo)));
  harness.start();
  await harness.waitFor(
    'all Running',
    async () => (await Promise.all(names.map((n) => harness.session(n)))).every((s) => phaseOf(s) === 'Running'),
    60_000,
  );
  const db = new Database(path.join(harness.home, 'state.db'), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT name, type, data FROM changes WHERE kind = 'AgentSession' ORDER BY revision")
      .all() as { name: string; type: string; data: string }[];
    for (const name of names) {
      const mine = rows.filter((r) => r.name === name);
      const upToRunning = mine.findIndex((r) => JSON.parse(r.data).status?.phase === 'Running');
      const steps = mine.slice(1, upToRunning + 1).map((r) => {
        const o = JSON.parse(r.data);
        return o.status?.phase ?? (o.metadata.finalizers?.length ? 'finalizer' : 'bound');
      });
      expect(steps, name).toEqual(['bound', 'finalizer', 'Starting', 'Running']);
    }
  } finally {
    db.close();
  }
}, 120_000);

/** controller_runtime_reconcile_total of the session controller, every result summed. */
async function sessionReconciles(port: number): Promise<number> {
  const { body } = await httpGet(port, '/metrics');
  let n = 0;
  for (const m of body.matchAll(/^controller_runtime_reconcile_total\{([^}]*)\} (\S+)$/gm))
    if (m[1].includes('controller="agentsession"')) n += Number(m[2]);
  return n;
}

it('a launched session costs one session reconcile to Running: the finalizer in the same pass, no echo', async () => {
  h = await makeHarness();
  const harness = h;
  const port = await freePort();
  // No resync and no observe tick within the window: only what the launches themselves bring.
  harness.start(['--observe-interval', '1h', '--resync', '1h', '--metrics-addr', `127.0.0.1:${port}`]);
  await harness.waitFor('the controller serving /metrics', async () => {
    try {
      return (await httpGet(port, '/metrics')).status === 200;
    } catch {
      return false;
    }
  });
  const r0 = await sessionReconciles(port);
  const names = Array.from({ length: 6 }, (_, i) => `r-${i}`);
  await harness.apply(names.map((n) => shellSession(n, 'exec sleep 300', harness.repo)));
  await harness.waitFor(
    'all Running',
    async () => (await Promise.all(names.map((n) => harness.session(n)))).every((s) => phaseOf(s) === 'Running'),
    60_000,
  );
  let r = await sessionReconciles(port);
  for (;;) {
    await new Promise((res) => setTimeout(res, 2000));
    const now = await sessionReconciles(port);
    if (now === r) break;
    r = now;
  }
  expect(r - r0).toBe(names.length);
}, 120_000);
