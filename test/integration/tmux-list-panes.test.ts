/**
 * `Tmux.listPanes` on a real tmux server (its own `-L` socket): a pane whose `list-panes` line did
 * not change since the last call is the same object, not parsed again (issue 29: the observe tick
 * took one snapshot of 1000 idle panes a second), and a pane that changes is seen changed at once.
 * Through a control-mode client (tmux-control.ts): one client for every call, and any failure of it
 * (killed, detached, no answer) answered by a list-panes process and a new client later.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Tmux } from '../../controller/observers/tmux.js';
import { until as waitFor } from '../support/until.js';

// A socket per test: a server still exiting after the last test's kill-server refuses new sessions.
let socket = '';
let tests = 0;
const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });

beforeEach(() => {
  socket = `orchctl-test-list-panes-${process.pid}-${tests++}`;
});
afterEach(() => {
  tmux('kill-server');
});

describe('tmux list-panes', () => {
  it('parses a pane again only when its line changed: the same object while unchanged, a new one dead', async () => {
    for (const s of ['a', 'b']) expect(tmux('new-session', '-d', '-s', s, 'sleep', '600').status).toBe(0);
    tmux('set-option', '-g', 'remain-on-exit', 'on');
    const t = new Tmux(socket);
    const first = await t.listPanes();
    const second = await t.listPanes();
    expect(second.panes.map((p) => p.session)).toEqual(['a', 'b']);
    expect(second.panes[0]).toBe(first.panes[0]);
    expect(second.panes[1]).toBe(first.panes[1]);
    expect(Object.isFrozen(second.panes[0])).toBe(true); // shared by snapshots: nobody may change it

    process.kill(second.panes[1].pid, 'SIGTERM');
    let third = await t.listPanes();
    for (let i = 0; i < 100 && !third.panes[1].dead; i++) {
      await new Promise((r) => setTimeout(r, 20));
      third = await t.listPanes();
    }
    expect(third.panes[0]).toBe(first.panes[0]);
    expect(third.panes[1]).not.toBe(first.panes[1]);
    expect(third.panes[1]).toMatchObject({ session: 'b', dead: true });
    expect(first.panes[1].dead).toBe(false); // the earlier snapshot keeps what it saw
  });

  it("a pane kept from an earlier call holds none of that call's whole output (only its own line)", async () => {
    // Names of 13 characters or more: V8 makes a field that long a slice of the string it was split
    // from (a shorter one is copied), as orchctl's session names are.
    const name = (i: number) => `keep-a-long-name-${String(i).padStart(2, '0')}`;
    for (let i = 0; i < 20; i++) expect(tmux('new-session', '-d', '-s', name(i), 'sleep', '600').status).toBe(0);
    const t = new Tmux(socket);
    let kept = (await t.listPanes()).panes;
    expect(tmux('new-session', '-d', '-s', name(20), 'sleep', '600').status).toBe(0);
    kept = [...kept, ...(await t.listPanes()).panes.slice(20)]; // the first 20 are the same objects
    expect(kept).toHaveLength(21);
    // The strings of the heap that begin with the first line and hold a later one: a whole `list-panes`
    // output (a snapshot shows only its first KB). Only the last call's may live (its lines key the
    // panes to reuse); the first call's lived on in the 20 panes kept from it.
    const file = v8.writeHeapSnapshot(path.join(os.tmpdir(), `orchctl-list-panes-${process.pid}.heapsnapshot`));
    const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.rmSync(file);
    const fields: string[] = snap.snapshot.meta.node_fields;
    const types: string[] = snap.snapshot.meta.node_types[0];
    const [ti, ni] = [fields.indexOf('type'), fields.indexOf('name')];
    let outputs = 0;
    for (let i = 0; i < snap.nodes.length; i += fields.length) {
      const text: string = snap.strings[snap.nodes[i + ni]];
      if (
        types[snap.nodes[i + ti]] === 'string' &&
        text.startsWith(`${name(0)}\x1f`) &&
        text.includes(`${name(5)}\x1f`)
      )
        outputs++;
    }
    expect(outputs).toBe(1);
  }, 30_000);
});

/** The pids of the server's clients (the control client is the only one here). */
const clientPids = () => tmux('list-clients', '-F', '#{client_pid}').stdout.split('\n').filter(Boolean).map(Number);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('tmux list-panes through a control-mode client', () => {
  it('one client answers every call after the first: the panes a list-panes process gives, no process', async () => {
    for (const s of ['a', 'b', 'c']) expect(tmux('new-session', '-d', '-s', s, 'sleep', '600').status).toBe(0);
    const t = new Tmux(socket, 'tmux', { controlClient: true });
    const plain = new Tmux(socket);
    try {
      await t.listPanes(); // a process: no listing yet to pick a session to attach to
      for (let i = 0; i < 5; i++) expect(await t.listPanes()).toEqual(await plain.listPanes());
      expect(t.spawned).toBe(1);
      expect(t.control?.stats).toMatchObject({ started: 1, answered: 5, failed: 0 });
      expect(clientPids()).toHaveLength(1);
    } finally {
      t.close();
    }
    await waitFor('the client gone', () => clientPids().length === 0);
  });

  it('a client killed, detached, or not answering: the call answers by a process, then a new client', async () => {
    for (const s of ['a', 'b', 'c']) expect(tmux('new-session', '-d', '-s', s, 'sleep', '600').status).toBe(0);
    const t = new Tmux(socket, 'tmux', { controlClient: { timeoutMs: 300, retryMs: 0 } });
    const plain = new Tmux(socket);
    const same = async () => expect((await t.listPanes()).panes).toEqual((await plain.listPanes()).panes);
    try {
      await t.listPanes();
      await same();
      // Killed.
      const [first] = clientPids();
      process.kill(first, 'SIGKILL');
      await waitFor('the client gone', () => !alive(first));
      await same();
      await same();
      const [second] = clientPids();
      expect(second).not.toBe(first);
      // Its session killed: tmux detaches it.
      const attached = tmux('list-clients', '-F', '#{session_name}').stdout.trim();
      tmux('kill-session', '-t', attached);
      await same();
      await same();
      expect(clientPids()).toHaveLength(1);
      // No answer (the server stopped: in control mode the server itself writes to the client's
      // output): the call does not wait on the client, which is killed, and runs its process.
      const [hung] = clientPids();
      const server = Number(tmux('display-message', '-p', '#{pid}').stdout.trim());
      process.kill(server, 'SIGSTOP');
      const answer = t.listPanes();
      try {
        await waitFor('the unanswered client killed', () => !alive(hung));
      } finally {
        process.kill(server, 'SIGCONT');
      }
      expect((await answer).panes).toEqual((await plain.listPanes()).panes);
      await same();
      expect(t.control?.stats.failed).toBe(3);
      expect(t.control?.stats.started).toBe(4);
    } finally {
      t.close();
    }
  });

  it('a client left by a controller killed with a reply unread is ended first; kill-server then ends', async () => {
    expect(tmux('new-session', '-d', '-s', 'a', 'sleep', '600').status).toBe(0);
    // An earlier controller: a process with a control client it stops reading, many replies asked
    // for, killed. tmux 3.3a keeps such a client, and the server waits for it when told to exit.
    const flags = 'ignore-size,no-output,read-only';
    const script =
      "const c = require('node:child_process').spawn('tmux', ['-L', process.argv[1], '-C', 'attach-session', " +
      `'-t', 'a', '-f', '${flags}'], { stdio: ['pipe', 'pipe', 'ignore'] });` +
      "c.stdout.pause(); for (let i = 0; i < 200; i++) c.stdin.write('list-keys\\n');" +
      "setTimeout(() => console.log('ready'), 1000); setInterval(() => {}, 1000);";
    const earlier = spawn(process.execPath, ['-e', script, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => earlier.stdout.once('data', r));
    const [leftover] = clientPids();
    earlier.kill('SIGKILL');
    const ppid = () => fs.readFileSync(`/proc/${leftover}/stat`, 'utf8').split(') ')[1].split(' ')[1];
    await waitFor('the leftover adopted by pid 1', () => ppid() === '1');
    // A client with the same flags whose parent lives (another program's) is not ours to end.
    const other = spawn('tmux', ['-L', socket, '-C', 'attach-session', '-t', 'a', '-f', flags], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    await waitFor('the other client attached', () => clientPids().includes(other.pid!));
    const t = new Tmux(socket, 'tmux', { controlClient: true });
    try {
      await t.listPanes(); // a process: no listing yet
      await t.listPanes(); // the first client: the leftover ended before it starts
      expect(t.control?.stats).toMatchObject({ started: 1, leftoversEnded: 1 });
      await waitFor('the leftover gone', () => !alive(leftover), 30_000);
      expect(alive(other.pid!)).toBe(true);
    } finally {
      t.close();
      other.kill('SIGKILL');
    }
    const server = Number(tmux('display-message', '-p', '#{pid}').stdout.trim());
    tmux('kill-server');
    await waitFor('the server gone', () => !alive(server), 30_000);
  });
});
