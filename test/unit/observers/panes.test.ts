/** The shared pane snapshot: one list-panes per loop, never a stale one after tmux changed. */
import { describe, expect, it } from 'vitest';
import { PaneObserver } from '../../../controller/observers/panes.js';
import type { PaneInfo, Tmux } from '../../../controller/observers/tmux.js';

/** A tmux whose list-panes answers when the test says, with the sessions that exist at that moment. */
function slowTmux() {
  const calls: { resolve: () => void }[] = [];
  const sessions: string[] = [];
  const tmux = {
    listPanes: () =>
      new Promise<{ serverRunning: boolean; panes: PaneInfo[] }>((resolve) => {
        const seen = [...sessions];
        calls.push({
          resolve: () => resolve({ serverRunning: true, panes: seen.map((s) => ({ session: s, uid: s }) as PaneInfo) }),
        });
      }),
  } as unknown as Tmux;
  return { tmux, calls, sessions };
}

describe('PaneObserver', () => {
  it('shares one list-panes between concurrent readers', async () => {
    const t = slowTmux();
    const panes = new PaneObserver(t.tmux);
    const a = panes.snapshot();
    const b = panes.snapshot();
    expect(t.calls).toHaveLength(1);
    t.calls[0].resolve();
    expect(await a).toBe(await b);
  });

  it('a reader after invalidate() does not get a call started before it (the launch it follows is seen)', async () => {
    const t = slowTmux();
    const panes = new PaneObserver(t.tmux);
    const before = panes.snapshot(); // in flight while a session is launched
    t.sessions.push('new');
    panes.invalidate();
    const after = panes.snapshot();
    expect(t.calls).toHaveLength(2);
    for (const c of t.calls) c.resolve();
    expect((await before).byUid('new')).toEqual([]);
    expect((await after).byUid('new')).toHaveLength(1);
    // The fresh one is what later readers get; the stale one was never cached.
    expect((await panes.snapshot()).byUid('new')).toHaveLength(1);
    expect(t.calls).toHaveLength(2);
  });

  it('a burst of launches costs one list-panes: a call started after them serves every launched session', async () => {
    const t = slowTmux();
    const panes = new PaneObserver(t.tmux);
    for (const uid of ['a', 'b', 'c']) {
      t.sessions.push(uid);
      panes.changed(uid);
    }
    const reads = ['a', 'b', 'c'].map((uid) => panes.snapshot(uid));
    expect(t.calls).toHaveLength(1);
    t.calls[0].resolve();
    for (const [i, r] of reads.entries()) expect((await r).byUid(['a', 'b', 'c'][i])).toHaveLength(1);
    expect(panes.calls).toBe(1);
  });

  it('a session launched while a call was in flight is not answered from that call; others share it', async () => {
    const t = slowTmux();
    const panes = new PaneObserver(t.tmux);
    const early = panes.snapshot('other');
    t.sessions.push('new');
    panes.changed('new');
    const mine = panes.snapshot('new');
    expect(t.calls).toHaveLength(2);
    for (const c of t.calls) c.resolve();
    expect((await early).byUid('new')).toEqual([]);
    expect((await mine).byUid('new')).toHaveLength(1);
    // Cached now: an unchanged session reads it without another call, and so does `new`.
    await panes.snapshot('other');
    await panes.snapshot('new');
    expect(t.calls).toHaveLength(2);
  });

  it('a reader of every pane (no uid) sees every change, a session’s included', async () => {
    const t = slowTmux();
    const panes = new PaneObserver(t.tmux);
    const first = panes.snapshot();
    t.calls[0].resolve();
    await first;
    t.sessions.push('x');
    panes.changed('x');
    const all = panes.snapshot();
    expect(t.calls).toHaveLength(2);
    t.calls[1].resolve();
    expect((await all).byUid('x')).toHaveLength(1);
  });
});
