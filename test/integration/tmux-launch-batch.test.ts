/**
 * Launches asked for together share tmux processes (observers/launch-batch.ts), on a real tmux
 * server on a socket of its own: counted, not timed. One bad launch fails alone; an argument
 * ending in `;` is never a command separator.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type LaunchSpec, Tmux } from '../../controller/observers/tmux.js';

let dir: string;
let tmux: Tmux;
let counter = 0;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-batch-'));
  tmux = new Tmux(`orchctl-batch-${process.pid}-${++counter}`);
});
afterEach(async () => {
  await tmux.killServer();
  fs.rmSync(dir, { recursive: true, force: true });
});

function spec(i: number, extra: Partial<LaunchSpec> = {}): LaunchSpec {
  return {
    session: `default_s-${i}_0000000${i % 10}`,
    cwd: dir,
    argv: ['sh', '-c', 'exec sleep 300'],
    env: { ORCHCTL_RUN: '1', ORCHCTL_WORKSPACE: path.join(dir, `s-${i}`) },
    tags: { uid: `uid-${i}`, key: `default/s-${i}#1`, store: 'store-uid', epoch: 1 },
    ...extra,
  };
}

/** Every session on the server: name → its uid and key tags. */
async function sessions(): Promise<Map<string, { uid: string; key: string }>> {
  const r = await execa(
    'tmux',
    ['-L', tmux.socket, 'list-sessions', '-F', '#{session_name} #{@orchctl-uid} #{@orchctl-key}'],
    {
      reject: false,
    },
  );
  const out = new Map<string, { uid: string; key: string }>();
  for (const line of String(r.stdout).split('\n').filter(Boolean)) {
    const [name, uid, key] = line.split(' ');
    out.set(name, { uid, key });
  }
  return out;
}

it('launches asked for together share one tmux process per list that fits, not one each', async () => {
  const n = 24;
  const specs = Array.from({ length: n }, (_, i) => spec(i));
  await Promise.all(specs.map((s) => tmux.launch(s, path.join(dir, `${s.session}.log`))));
  const listed = await sessions();
  expect(listed.size).toBe(n);
  for (const [i, s] of specs.entries())
    expect(listed.get(s.session)).toEqual({ uid: `uid-${i}`, key: `default/s-${i}#1` });
  // The first starts at once, alone (an idle batcher does not wait: a crash between a recorded run and
  // its tmux client must stay as unlikely as before batching); the 23 asked for while it ran, ~1 KB
  // each, fit in one 15 KB list.
  expect(tmux.launches.stats).toEqual({ lists: 2, launches: n, retriedAlone: 0 });
});

it('launches too large to share one list go in as few lists as their size allows', async () => {
  // ~4 KB of environment each: three fit in a list; the first starts alone, the other 9 need 3 lists.
  const big = { PATHLIKE: 'x'.repeat(4000) };
  const specs = Array.from({ length: 10 }, (_, i) => spec(i, { env: big }));
  await Promise.all(specs.map((s) => tmux.launch(s)));
  expect((await sessions()).size).toBe(10);
  expect(tmux.launches.stats.lists).toBe(4);
});

it('one bad launch in a list fails alone: the launches after it in the same list still start', async () => {
  // A session already holding the name of the fourth launch: tmux stops the list at its new-session.
  await execa('tmux', [
    '-L',
    tmux.socket,
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    spec(3).session,
    'sleep',
    '300',
  ]);
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => tmux.launch(spec(i))));
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [[i, String(r.reason)]] : []));
  expect(failed).toEqual([[3, expect.stringMatching(/tmux new-session: duplicate session/)]]);
  const listed = await sessions();
  for (const i of [0, 1, 2, 4, 5, 6, 7]) expect(listed.get(spec(i).session)?.key, `s-${i}`).toBe(`default/s-${i}#1`);
  expect(listed.get(spec(3).session)?.key).toBe(''); // the one that was there, untouched
  // The first alone (an idle batcher starts at once), then 1–7 in one list, the bad one among them.
  expect(tmux.launches.stats.lists).toBe(2);
});

it('an argument ending in ";" reaches the agent whole and ends no tmux command', async () => {
  const out = path.join(dir, 'args.txt');
  // Before: tmux read ";" and "a;" as command separators, so "kill-server" ran as a tmux command.
  const argv = ['sh', '-c', 'printf "%s|" "$@" > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 300', out];
  await tmux.launch(spec(1, { argv: [...argv, 'a;', ';', 'kill-server', 'b\\;'] }));
  for (let i = 0; i < 100 && !fs.existsSync(out); i++) await new Promise((r) => setTimeout(r, 50));
  expect(fs.readFileSync(out, 'utf8')).toBe('a;|;|kill-server|b\\;|');
  expect((await sessions()).get(spec(1).session)?.key).toBe('default/s-1#1');
});
