/**
 * `Tmux.listPanes` on a real tmux server (its own `-L` socket): a pane whose `list-panes` line did
 * not change since the last call is the same object, not parsed again (issue 29: the observe tick
 * took one snapshot of 1000 idle panes a second), and a pane that changes is seen changed at once.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { Tmux } from '../../controller/observers/tmux.js';

const socket = `orchctl-test-list-panes-${process.pid}`;
const tmux = (...args: string[]) => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });

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
