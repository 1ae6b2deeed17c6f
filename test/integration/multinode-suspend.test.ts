/**
 * One host, the default: `orchctl controller` (control plane + embedded node) on SQLite, stopped
 * (SIGSTOP, as a laptop's sleep does) for longer than the node-lost grace. On SIGCONT both leases
 * have lapsed; the embedded node renews before the control plane judges anything, so its own
 * host is never declared lost: the run (restartPolicy Never, which a lost node would fail) goes
 * on in the same pane, and no session is failed, moved or restarted.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Harness, makeHarness, shellSession } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  h.controller?.kill('SIGCONT');
  await h.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a controller suspended past the grace resumes with its runs as they were', async () => {
  await h.apply([shellSession('long', 'echo started; exec sleep 600', h.repo)]);
  h.start(['--node-lost-grace', '25s']);
  const s = await h.waitFor('Running', async () => {
    const x = await h.session('long');
    return x?.status?.phase === 'Running' && x;
  });
  expect(s.status?.binding?.epoch).toBe(1);
  const before = (await h.tmuxSessions()).filter((t) => !t.dead);
  h.controller!.kill('SIGSTOP');
  await sleep(32_000); // past the lease (15 s), the fuse's age (20 s) and the grace (25 s)
  h.controllerLog.length = 0;
  h.controller!.kill('SIGCONT');
  await h.waitFor('the leases taken back', async () => h.controllerLog.some((l) => l.includes('taking it back')));
  await sleep(4000); // node lifecycle looks every 2 s; several observe ticks
  const after = (await h.session('long'))!;
  expect(after.status).toMatchObject({
    phase: 'Running',
    run: 1,
    binding: { nodeName: s.status!.binding!.nodeName, epoch: 1 },
  });
  expect(after.status?.conditions?.find((c) => c.type === 'NodeLost')?.status ?? 'False').toBe('False');
  expect((await h.tmuxSessions()).filter((t) => !t.dead)).toEqual(before);
  const reasons = (await h.events('long')).map((e) => (e as { reason?: string }).reason);
  expect(reasons).not.toContain('NodeLost');
  expect(reasons).not.toContain('RunMoved');
}, 90_000);
