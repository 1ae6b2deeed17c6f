/**
 * The controller lease's timing (runtime/lease.ts): renewed every fifth of the lease, between 0.5 s
 * and 2 s, and a standby looks as often — so with a short lease it takes over a hung holder's lease
 * (alive on another host: nothing to shortcut) soon after the lease runs out, over a real SQLite store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CONTROLLER_LEASE, CONTROLLER_LEASE_TIMING, controllerLeaseTiming } from '../../../controller/runtime/lease.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { Manager } from '../../../controller/runtime/manager.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';

let dir: string;
let db: SqliteStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-leader-lease-'));
  db = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

it('renews every fifth of the lease, at least every 2 s and at most every 0.5 s', () => {
  expect(CONTROLLER_LEASE_TIMING).toEqual({ seconds: 4, renewMs: 800 }); // the default: failover within 5 s
  expect(controllerLeaseTiming(60)).toEqual({ seconds: 60, renewMs: 2000 });
  expect(controllerLeaseTiming(10)).toEqual({ seconds: 10, renewMs: 2000 });
  expect(controllerLeaseTiming(4)).toEqual({ seconds: 4, renewMs: 800 });
  expect(controllerLeaseTiming(3)).toEqual({ seconds: 3, renewMs: 600 });
  expect(controllerLeaseTiming(2)).toEqual({ seconds: 2, renewMs: 500 });
});

it('a standby on a 3 s lease takes over a holder that stopped renewing within a look of its expiry', async () => {
  // A holder on another host: alive as far as anyone here can tell, it just renews nothing.
  expect(await db.tryAcquireLease(CONTROLLER_LEASE, 'other-host_4242_abcdef', 3)).toBeTruthy();
  const t0 = Date.now();
  const mgr = new Manager({
    store: db,
    log: silentLogger,
    lease: { name: CONTROLLER_LEASE, timing: controllerLeaseTiming(3), what: 'controller' },
  });
  let ledAt = 0;
  const run = mgr.run(() => {
    ledAt = Date.now();
  });
  try {
    const deadline = Date.now() + 10_000;
    while (!ledAt && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const took = ledAt - t0;
    expect(took).toBeGreaterThanOrEqual(2900);
    expect(took).toBeLessThan(3000 + 600 + 400); // the lease, one look (0.6 s), slack for a busy machine
    const lease = await db.getLease(CONTROLLER_LEASE);
    expect(lease?.holderIdentity).toBe(mgr.identity);
    expect(lease?.leaseDurationSeconds).toBe(3);
  } finally {
    await mgr.stop();
    await run;
  }
});
