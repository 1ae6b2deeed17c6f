/**
 * `tmux wait-for` on the channel our pane-died hook signals, as an event source: an agent's exit
 * reaches status within a second instead of at the next observe tick. Each event first drops the
 * shared pane snapshot (it no longer shows the dead pane as it is).
 */
import type { PaneObserver } from '../observers/panes.js';
import type { Tmux } from '../observers/tmux.js';
import type { EventSource, Runnable } from '../runtime/manager.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PaneDeaths implements EventSource<void>, Runnable {
  private readonly handlers: (() => void)[] = [];
  private waiter?: ReturnType<Tmux['waitForPaneDied']>;
  private stopped = false;

  constructor(
    private readonly tmux: Tmux,
    private readonly panes: PaneObserver,
  ) {}

  subscribe(handler: () => void): void {
    this.handlers.push(handler);
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.waiter?.kill();
  }

  private async loop(): Promise<void> {
    let quickFailures = 0;
    while (!this.stopped) {
      const t0 = Date.now();
      this.waiter = this.tmux.waitForPaneDied();
      const r = await this.waiter;
      if (this.stopped) return;
      this.panes.invalidate();
      for (const h of this.handlers) h();
      // No server yet (or it just died): don't spin; the first launch starts one.
      if (r.exitCode !== 0 && Date.now() - t0 < 200) await sleep(Math.min(2000, 100 * 2 ** quickFailures++));
      else quickFailures = 0;
    }
  }
}
