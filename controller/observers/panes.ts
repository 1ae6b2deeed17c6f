/**
 * One snapshot of every pane on the orchctl tmux server, shared by all reconciles of a loop:
 * at most one `tmux list-panes -a` per `maxAgeMs`, however many sessions there are, and
 * concurrent callers share the call in flight. invalidate() after anything that changes tmux
 * (a launch, a kill, a pane-died signal) so the next reader sees it.
 */
import type { PaneInfo, Tmux } from './tmux.js';

export interface PaneSnapshot {
  serverRunning: boolean;
  panes: PaneInfo[];
  takenAt: number;
  byUid(uid: string): PaneInfo[];
}

export class PaneObserver {
  private cached?: PaneSnapshot;
  private inflight?: Promise<PaneSnapshot>;
  private inflightEpoch = -1;
  private epoch = 0;

  constructor(
    private readonly tmux: Tmux,
    private readonly maxAgeMs = 1000,
  ) {}

  invalidate(): void {
    this.cached = undefined;
    this.epoch++;
  }

  async snapshot(): Promise<PaneSnapshot> {
    if (this.cached && Date.now() - this.cached.takenAt < this.maxAgeMs) return this.cached;
    // A call in flight is shared only if nothing changed tmux since it started: one started before
    // a launch must not tell a later reader that the new session does not exist.
    if (this.inflight && this.inflightEpoch === this.epoch) return this.inflight;
    const epoch = this.epoch;
    this.inflightEpoch = epoch;
    const call: Promise<PaneSnapshot> = (async () => {
      try {
        const { serverRunning, panes } = await this.tmux.listPanes();
        const index = new Map<string, PaneInfo[]>();
        for (const p of panes) if (p.uid) index.set(p.uid, [...(index.get(p.uid) ?? []), p]);
        const snap: PaneSnapshot = { serverRunning, panes, takenAt: Date.now(), byUid: (uid) => index.get(uid) ?? [] };
        // A snapshot started before an invalidation may already be stale: serve it once, don't cache it.
        if (epoch === this.epoch) this.cached = snap;
        return snap;
      } finally {
        if (this.inflightEpoch === epoch) this.inflight = undefined; // not a newer call's
      }
    })();
    this.inflight = call;
    return call;
  }
}
