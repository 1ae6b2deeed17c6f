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
});
