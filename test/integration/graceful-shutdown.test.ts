/**
 * A bounded graceful shutdown (issue 29: a saturated controller went on for 17 minutes after
 * SIGTERM): the real bin/orchctl, a real tmux socket and SQLite store. On SIGTERM the controller
 * takes no new work, lets the reconciles in flight finish until `--shutdown-grace` runs out, then
 * releases its leases, closes the store and exits — 1, with one line naming what still ran, when
 * the grace ran out. Crash-only makes that safe: the next start adopts what runs and converges.
 * No time is asserted but "exits before the grace, plus a generous margin".
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ResultPromise } from 'execa';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { nodeLeaseName } from '../../controller/reconcilers/nodelifecycle/plan.js';
import { orchctl, tempHome } from '../support/cli.js';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

/** Room for a loaded machine beyond the grace (the process itself gives up 5 s past it at most). */
const MARGIN_MS = 30_000;

/** SIGTERM alone: execa's kill() would follow it with SIGKILL after 5 s, and hide a stop that hangs. */
const sigterm = (p: ResultPromise) => process.kill(p.pid!, 'SIGTERM');

/** The exit code of the controller, or undefined if it was still running `ms` after the call. */
async function exitWithin(p: ResultPromise, ms: number): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  try {
    const r = await Promise.race([p, late]);
    return r === undefined ? undefined : (r.exitCode ?? -1);
  } finally {
    clearTimeout(timer);
  }
}

async function leaseHolders(): Promise<(string | undefined)[]> {
  const node = fs.readFileSync(path.join(h.home, 'node-name'), 'utf8').trim();
  return Promise.all(
    ['orchctl-controller', nodeLeaseName(node)].map(async (n) => (await h.store.getLease(n))?.holderIdentity),
  );
}

it('a stuck reconcile: SIGTERM exits at the grace naming it, leases released; the next start converges', async () => {
  h.env.ORCHCTL_FAILPOINTS = 'session-reconcile=hold';
  await h.apply([shellSession('stuck', 'echo up; sleep 300', h.repo)]);
  const p = h.start(['--shutdown-grace', '3s']);
  delete h.env.ORCHCTL_FAILPOINTS;
  await h.waitFor('the held pass', async () => h.controllerLog.some((l) => l.includes('holding this pass forever')));
  expect((await leaseHolders()).every((holder) => !!holder)).toBe(true);

  sigterm(p);
  expect(await exitWithin(p, 3000 + MARGIN_MS)).toBe(1);
  h.controller = undefined; // exited (else cleanup kills it)
  const ranOut = h.controllerLog.filter((l) => l.includes('grace ran out'));
  expect(ranOut).toHaveLength(1);
  expect(ranOut[0]).toContain('agentsession (default/stuck)');
  expect(await leaseHolders()).toEqual([undefined, undefined]);
  expect(phaseOf(await h.session('stuck'))).not.toBe('Running'); // the held pass launched nothing

  // Crash-only: a new controller starts what the stopped one never got to, once.
  h.start();
  await h.waitFor('Running in tmux', async () => {
    const running = phaseOf(await h.session('stuck')) === 'Running';
    return running && (await h.tmuxSessions()).length > 0; // the run is recorded before tmux starts it
  });
  expect(await h.tmuxSessions()).toHaveLength(1);
}, 90_000);

it('an idle controller exits 0 on SIGTERM, not waiting out the grace; the next adopts its run once', async () => {
  await h.apply([shellSession('ticker', 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 1; done', h.repo)]);
  const first = h.start(['--shutdown-grace', '60s']);
  const before = await h.waitFor('Running', async () => {
    const s = await h.session('ticker');
    return phaseOf(s) === 'Running' && s?.status?.lastOutput?.startsWith('tick') && s;
  });
  const tmuxBefore = await h.tmuxSessions();
  expect(tmuxBefore).toHaveLength(1);

  sigterm(first);
  // Nothing in flight: it does not wait out the grace.
  expect(await exitWithin(first, 60_000)).toBe(0);
  h.controller = undefined; // exited (else cleanup kills it)
  expect(h.controllerLog.some((l) => l.includes('grace ran out'))).toBe(false);
  expect(await leaseHolders()).toEqual([undefined, undefined]);

  h.start();
  const lastBefore = (await h.session('ticker'))!.status!.lastOutput;
  // The new controller observed the run it found (its output moved on), and started none.
  const after = await h.waitFor('observed by the new controller', async () => {
    const s = await h.session('ticker');
    return s?.status?.lastOutput !== lastBefore && s;
  });
  expect(phaseOf(after)).toBe('Running');
  expect(after.status!.run).toBe(before.status!.run);
  expect(after.status!.startTime).toBe(before.status!.startTime);
  expect(after.status!.restarts ?? 0).toBe(0);
  const tmuxAfter = await h.tmuxSessions();
  expect(tmuxAfter).toEqual(tmuxBefore);
}, 90_000);

it.each([
  [['controller', '--shutdown-grace', '0s'], 'error: --shutdown-grace 0s: must be a duration from 1s to 10m'],
  [['node', '--shutdown-grace', '1h'], 'error: --shutdown-grace 1h: must be a duration from 1s to 10m'],
  [['controller', '--shutdown-grace', 'later'], 'error: --shutdown-grace later: must be a duration from 1s to 10m'],
])('orchctl %j: a clear error, and no state directory made', async (args, message) => {
  const home = tempHome();
  try {
    const r = await orchctl(home, [...args, '--metrics-addr', '0']);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(message);
    expect(fs.existsSync(home)).toBe(false);
  } finally {
    fs.rmSync(path.dirname(home), { recursive: true, force: true });
  }
});
