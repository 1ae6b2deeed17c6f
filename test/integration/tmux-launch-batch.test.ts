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
import { LAUNCH_SCRIPT } from '../../controller/agents/launch.js';
import { type LaunchSpec, parseTags, TAGS_FORMAT, Tmux } from '../../controller/observers/tmux.js';
import { until } from '../support/until.js';

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
  const r = await execa('tmux', ['-L', tmux.socket, 'list-sessions', '-F', `#{session_name}\t${TAGS_FORMAT}`], {
    reject: false,
  });
  const out = new Map<string, { uid: string; key: string }>();
  for (const line of String(r.stdout).split('\n').filter(Boolean)) {
    const [name, tags] = line.split('\t');
    const { uid, key } = parseTags(tags);
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

it('a launch sends two tmux commands of its own: the session (tags, log path, window name in it), pipe', async () => {
  const lists: string[][] = [];
  const run = tmux.run.bind(tmux);
  tmux.run = (args, opts) => {
    if (args.includes('new-session')) lists.push(args);
    return run(args, opts);
  };
  // The wrapper's way of starting a program, and a program that shows what it inherited.
  const argv = ['sh', '-c', LAUNCH_SCRIPT, 'sh', '-c', 'env > "$ORCHCTL_WORKSPACE.env"; exec sh'];
  const s = spec(1, { window: 'default/s-1', argv });
  const log = path.join(dir, "out #1 $HOME `x` 'q'.log");
  await tmux.launch(s, log);
  expect(lists).toHaveLength(1);
  // The list's commands (';' alone separates them), from the session's own on.
  const commands = lists[0]
    .join('\n')
    .split('\n;\n')
    .map((c) => c.split('\n'));
  const own = commands.slice(commands.findIndex((c) => c[0] === 'new-session'));
  // Before: new-session, pipe-pane, rename-window and a set-option for the tags (each of the last two a
  // walk over every session in tmux 3.3a).
  expect(own.map((c) => c[0])).toEqual(['new-session', 'pipe-pane']);
  expect(own[0]).toContain('ORCHCTL_TAGS=uid-1 default/s-1#1 store-uid 1');
  const [pane] = (await tmux.listPanes()).panes;
  expect(pane).toMatchObject({ uid: 'uid-1', key: 'default/s-1#1', store: 'store-uid', epoch: '1' });
  // The pipe writes to the path, whatever the shell would make of it; the window shows the name given.
  await until('the program to start', () => fs.existsSync(`${s.env.ORCHCTL_WORKSPACE}.env`));
  await tmux.sendLiteral(`=${s.session}:`, 'echo piped-out');
  await tmux.sendKeys(`=${s.session}:`, ['Enter']);
  await until('the pipe to write', () => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('piped-out'));
  const shown = await execa('tmux', [
    '-L',
    tmux.socket,
    'display-message',
    '-p',
    '-t',
    `=${s.session}:`,
    '#{window_name}',
  ]);
  expect(String(shown.stdout).trim()).toBe('default/s-1');
  // tmux's own variables are not the program's: a tmux server it started would carry them.
  const inherited = fs.readFileSync(`${s.env.ORCHCTL_WORKSPACE}.env`, 'utf8');
  expect(inherited).toContain('ORCHCTL_RUN=1');
  expect(inherited).not.toMatch(/ORCHCTL_TAGS|ORCHCTL_OUTPUT_LOG/);
});

it('an output log path with any character but a control one is piped verbatim; a tab is refused', async () => {
  const log = path.join(dir, 'sortie-é #{x} \'q\' "d".log');
  const s = spec(2);
  await tmux.launch(s, log);
  await tmux.sendLiteral(`=${s.session}:`, 'echo piped-é');
  await tmux.sendKeys(`=${s.session}:`, ['Enter']);
  await until('the pipe to write', () => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('piped-é'));
  // tmux's shell quoting leaves a tab as it is: the shell would split the path there.
  await expect(tmux.launch(spec(3), path.join(dir, 'a\tb.log'))).rejects.toThrow(/output log path holds a control/);
  expect((await sessions()).has(spec(3).session)).toBe(false);
});

it('after a failed list, a session with its key but no output pipe yet is not taken as launched whole', async () => {
  // Sessions of the fourth launch already there, tagged with that launch's key: the list stops at its
  // new-session. One with its pipe open was launched whole; one without was not, and launching it
  // again alone fails with tmux's own error (before the pipe check, it was taken as started).
  const byHand = async (s: LaunchSpec, pipe: boolean) =>
    execa('tmux', [
      ...['-L', tmux.socket, '-f', '/dev/null', 'new-session', '-d', '-s', s.session],
      ...['-e', `ORCHCTL_TAGS=${s.tags.uid} ${s.tags.key} store-uid 1`, '-e', `ORCHCTL_OUTPUT_LOG=${dir}/by-hand.log`],
      ...['sleep', '300'],
      ...(pipe ? [';', 'pipe-pane', '-o', '-t', `=${s.session}:`, 'cat > /dev/null'] : []),
    ]);
  const launchAll = (from: number) =>
    Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => tmux.launch(spec(from + i), path.join(dir, `s-${from + i}.log`))),
    );
  await byHand(spec(3), true);
  expect((await launchAll(0)).map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
  await byHand(spec(13), false);
  const results = await launchAll(10);
  expect(results.map((r) => r.status)).toEqual([
    ...Array(3).fill('fulfilled'),
    'rejected',
    ...Array(4).fill('fulfilled'),
  ]);
  expect(String((results[3] as PromiseRejectedResult).reason)).toMatch(/duplicate session/);
});

it('a session launched with its tags in its environment is re-tagged for another store by an option', async () => {
  const s = spec(4);
  await tmux.launch(s);
  await tmux.tagStore(s.session, 'other-store');
  const [pane] = (await tmux.listPanes()).panes;
  expect(pane).toMatchObject({ uid: 'uid-4', key: 'default/s-4#1', store: 'other-store', epoch: '1' });
});

/** A global option of the server, or its hooks (`-w`: its window hooks), as tmux shows them. */
async function serverShows(what: 'option' | 'hooks', name = ''): Promise<string> {
  const args = what === 'option' ? ['show-options', '-gv', name] : ['show-hooks', '-g', ...(name ? [name] : [])];
  return String((await execa('tmux', ['-L', tmux.socket, ...args], { reject: false })).stdout).trim();
}

it('a server is set up by the first launch list, not again by each later one', async () => {
  await tmux.launch(spec(1));
  expect(await serverShows('option', 'remain-on-exit')).toBe('on');
  expect(await serverShows('option', 'history-limit')).toBe('5000');
  expect(await serverShows('option', 'exit-empty')).toBe('off');
  expect(await serverShows('hooks', '-w')).toMatch(/pane-died.*wait-for -S orchctl-pane-died/);
  expect(await serverShows('hooks')).toMatch(/session-closed.*wait-for -S orchctl-pane-died/);
  expect(await serverShows('option', '@orchctl-setup')).toBe('1');
  // Before: every list set the five options and hooks again (each a walk over all sessions). A set-up
  // that ran again would write its marker back to 1.
  await execa('tmux', ['-L', tmux.socket, 'set-option', '-g', '@orchctl-setup', '2']);
  await tmux.launch(spec(2));
  expect(await serverShows('option', '@orchctl-setup')).toBe('2');
});

it('a set-up server whose option was changed since is set up again by the next launch', async () => {
  await tmux.launch(spec(1));
  await execa('tmux', ['-L', tmux.socket, 'set-option', '-g', 'remain-on-exit', 'off']);
  await tmux.launch(spec(2));
  expect(await serverShows('option', 'remain-on-exit')).toBe('on');
  // A server started by hand, without the marker (as an older orchctl's), is set up too.
  await tmux.killServer();
  await execa('tmux', ['-L', tmux.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'by-hand', 'sleep', '300']);
  await tmux.launch(spec(3));
  expect(await serverShows('option', 'remain-on-exit')).toBe('on');
  expect(await serverShows('option', '@orchctl-setup')).toBe('1');
});

/** A session as an older orchctl launched it: each tag its own session option. */
async function oldStyleSession(name: string, tags: { uid: string; key: string; store?: string; epoch?: string }) {
  const set = (option: string, value: string) => [';', 'set-option', '-t', `=${name}:`, option, value];
  await execa('tmux', [
    ...['-L', tmux.socket, '-f', '/dev/null', 'new-session', '-d', '-s', name, 'sleep', '300'],
    ...set('@orchctl-uid', tags.uid),
    ...(tags.store ? set('@orchctl-store', tags.store) : []),
    ...(tags.epoch ? set('@orchctl-epoch', tags.epoch) : []),
    ...set('@orchctl-key', tags.key),
  ]);
}

it('a session tagged by an older orchctl (an option per tag) is read whole and re-tagged in one option', async () => {
  await oldStyleSession('default_old_00000001', { uid: 'uid-old', key: 'default/old#2', epoch: '3' });
  await oldStyleSession('other_by_hand', { uid: '', key: '' });
  const panes = async () => new Map((await tmux.listPanes()).panes.map((p) => [p.session, p]));
  expect((await panes()).get('default_old_00000001')).toMatchObject({
    uid: 'uid-old',
    key: 'default/old#2',
    store: '',
    epoch: '3',
  });
  expect((await panes()).get('other_by_hand')).toMatchObject({ uid: '', key: '', store: '', epoch: '' });
  // Adopted by a store: its tags are written back whole, as one option, with the store's identity.
  await tmux.tagStore('default_old_00000001', 'store-uid');
  expect((await panes()).get('default_old_00000001')).toMatchObject({
    uid: 'uid-old',
    key: 'default/old#2',
    store: 'store-uid',
    epoch: '3',
  });
  const shown = await execa('tmux', [
    '-L',
    tmux.socket,
    'show-options',
    '-v',
    '-t',
    '=default_old_00000001:',
    '@orchctl-tags',
  ]);
  expect(String(shown.stdout).trim()).toBe('uid-old default/old#2 store-uid 3');
  await tmux.tagStore('other_by_hand', 'store-uid'); // not orchctl's: left untagged
  expect((await panes()).get('other_by_hand')?.store).toBe('');
});

it('a session an older orchctl launched whole (key in its own option) is launched, after a failed list', async () => {
  // The session of the fourth launch already there, tagged the old way with that launch's key: the
  // list stops at its new-session, and the batcher finds the session carrying its key (launched whole).
  await oldStyleSession(spec(3).session, { uid: 'uid-3', key: 'default/s-3#1', store: 'store-uid', epoch: '1' });
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => tmux.launch(spec(i))));
  expect(results.map((r) => r.status)).toEqual(Array(8).fill('fulfilled'));
  const listed = await sessions();
  for (let i = 0; i < 8; i++)
    expect(listed.get(spec(i).session), `s-${i}`).toEqual({ uid: `uid-${i}`, key: `default/s-${i}#1` });
});
