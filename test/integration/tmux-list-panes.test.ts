/**
 * `Tmux.listPanes` on a real tmux server (its own `-L` socket): a pane whose `list-panes` line did
 * not change since the last call is the same object, not parsed again (issue 29: the observe tick
 * took one snapshot of 1000 idle panes a second), and a pane that changes is seen changed at once.
 */
import { spawnSync } from 'node:child_process';
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
});
