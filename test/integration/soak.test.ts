/**
 * The shortened soak (issue 29; the full one is `npm run bench -- soak`): sim sessions restarting
 * every few seconds, paused, resumed and replaced under a real `orchctl controller` with its
 * retention at the flags' lower bounds. Asserts only what is deterministic: once the sessions are
 * stopped, the next sweep leaves each at most --run-dirs-per-session run directories whatever the
 * number of runs; open fds grow by no more than a constant, and no ended session's event log holds
 * one; no reconcile failed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { type Phase, TERMINAL_PHASES } from '../../controller/api/phases.js';
import { runSoak, SCALED_RETENTION, type SoakSample } from '../../bench/modules/soak.js';
import { pollFor } from '../support/until.js';

const KEEP = 3;
/** Open fds the controller may add over a run whatever its length (sqlite, sockets, a pipe or two). */
const FD_SLACK = 30;

it('keeps run directories, fds and reconcile errors bounded under churn', { timeout: 300_000 }, async () => {
  const samples: SoakSample[] = [];
  let end: { runDirs: number[]; maxRun: number; last: SoakSample } | undefined;
  await runSoak({
    minutes: 1.1, // one round of churn (at 60 s): pauses, resumes, a session replaced
    sessions: 12,
    sampleMs: 5_000,
    runSeconds: [1, 3],
    retentionFlags: SCALED_RETENTION,
    onSample: (s) => samples.push(s),
    atEnd: async ({ home, pid, store, live }) => {
      for (const name of live) {
        const o = (await store.get({ kind: 'AgentSession', namespace: 'default', name }))!;
        await store.update({ ...o, spec: { ...(o.spec as object), desiredState: 'Stopped' } });
      }
      const root = path.join(home, 'sessions', 'default');
      const runDirs = () => live.map((n) => fs.readdirSync(path.join(root, n)).filter((f) => /^\d+$/.test(f)).length);
      // Stopped sessions start no run: the next sweep (once a minute) brings every one to the bound.
      await pollFor('run directories within the bound', async () => runDirs().every((n) => n <= KEEP), 150_000, {
        everyMs: 1000,
        context: () => `run dirs per session: ${runDirs().join(' ')}`,
      });
      // Open fds, once the stops are done: a child process in flight (tmux, git) holds its stdio
      // sockets for a moment, a leak holds them for good. Polled until settled, never waited out.
      const fds = () => fs.readdirSync(`/proc/${pid}/fd`).length;
      await pollFor('open fds within the slack of the start', async () => fds() - samples[0]!.fds <= FD_SLACK, 30_000, {
        everyMs: 500,
        context: async () => `fds at the start ${samples[0]!.fds}, now ${fds()}`,
      });
      // Only a running session's event log holds a descriptor: before runs let theirs go when they
      // ended, every finished session kept one (a hundred in this minute, the Autopilot's above all).
      const logFds = () =>
        fs
          .readdirSync(`/proc/${pid}/fd`)
          .map((f) => {
            try {
              return fs.readlinkSync(`/proc/${pid}/fd/${f}`);
            } catch {
              return '';
            }
          })
          .filter((l) => l.endsWith('/events.jsonl'))
          .map((l) => path.basename(path.dirname(l)));
      const ended = async () => {
        const { items } = await store.list('AgentSession');
        // Between runs (Backoff) or finished: no run in progress.
        const idle = (p: unknown) => p === 'Backoff' || TERMINAL_PHASES.has(p as Phase);
        return new Set(items.filter((s) => idle(s.status?.phase)).map((s) => s.metadata.name));
      };
      await pollFor(
        'no ended session holding its event log open',
        async () => {
          const gone = await ended();
          return logFds().every((n) => !gone.has(n));
        },
        30_000,
        { everyMs: 500, context: async () => `logs open: ${logFds().join(' ')}` },
      );
      const { items } = await store.list('AgentSession');
      const maxRun = Math.max(...items.map((s) => (s.status as { run?: number } | undefined)?.run ?? 0));
      end = { runDirs: runDirs(), maxRun, last: { ...samples.at(-1)!, fds: fds() } };
    },
  });
  expect(end).toBeDefined();
  // Retention had runs to remove: some session ran more runs than it keeps.
  expect(end!.maxRun).toBeGreaterThan(KEEP);
  expect(Math.max(...end!.runDirs)).toBeLessThanOrEqual(KEEP);
  expect(end!.last.fds - samples[0].fds).toBeLessThanOrEqual(FD_SLACK);
  expect(end!.last.reconcileErrors).toBe(0);
});
