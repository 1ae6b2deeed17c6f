/**
 * What one launch costs in store writes, counted from the store's change log, not timed: from
 * apply to Running a session is written four times — bound to the node (scheduler), given its
 * finalizer, its run recorded (Starting) before tmux starts it, Running — and no more.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

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
