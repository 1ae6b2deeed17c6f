/**
 * One snapshot of every pane on the orchctl tmux server, shared by all reconciles of a loop:
 * at most one `tmux list-panes -a` per `maxAgeMs`, however many sessions there are, and
 * concurrent callers share the call in flight.
 *
 * A reader must never be told a pane is missing or alive when this process has since launched or
 * killed it. Changes are numbered: `changed(uid)` after launching or killing a session's panes,
 * `invalidate()` after anything else that changes tmux (a pane-died signal, an orphan killed). A
 * snapshot serves a reader only if it was started after every change that reader must see: the
 * session's own (`snapshot(uid)`), or every change (`snapshot()`). Numbering per session keeps a
 * burst of launches from costing a `list-panes` each: one call started after them serves them all.
 */
import type { PaneInfo, Tmux } from './tmux.js';

export interface PaneSnapshot {
  serverRunning: boolean;
  panes: PaneInfo[];
  takenAt: number;
  byUid(uid: string): PaneInfo[];
}

interface Numbered {
  /** The change number when its list-panes started: it sees every change up to this one. */
  seq: number;
  snap: Promise<PaneSnapshot>;
}

export class PaneObserver {
  private cached?: { seq: number; snap: PaneSnapshot };
  private inflight?: Numbered;
  private seq = 0;
  /** Changes every reader must see (invalidate()). */
  private floor = 0;
  /** A session's last launch or kill by this process, by uid; dropped once a cached snapshot covers it. */
  private readonly changes = new Map<string, number>();

  constructor(
    private readonly tmux: Tmux,
    private readonly maxAgeMs = 1000,
  ) {}

  /** Something changed tmux that any reader may care about. */
  invalidate(): void {
    this.floor = ++this.seq;
  }

  /** This process launched or killed the panes of session `uid`. */
  changed(uid: string): void {
    this.changes.set(uid, ++this.seq);
  }

  /** list-panes calls started, for the cost tests. */
  calls = 0;

  async snapshot(uid?: string): Promise<PaneSnapshot> {
    const need = uid === undefined ? this.seq : Math.max(this.floor, this.changes.get(uid) ?? 0);
    const c = this.cached;
    if (c && c.seq >= need && Date.now() - c.snap.takenAt < this.maxAgeMs) return c.snap;
    if (this.inflight && this.inflight.seq >= need) return this.inflight.snap;
    const seq = this.seq;
    const call: Numbered = { seq, snap: this.list(seq) };
    this.inflight = call;
    return call.snap;
  }

  private async list(seq: number): Promise<PaneSnapshot> {
    this.calls++;
    try {
      const { serverRunning, panes } = await this.tmux.listPanes();
      const index = new Map<string, PaneInfo[]>();
      for (const p of panes) {
        if (!p.uid) continue;
        const l = index.get(p.uid);
        if (l) l.push(p);
        else index.set(p.uid, [p]);
      }
      const snap: PaneSnapshot = { serverRunning, panes, takenAt: Date.now(), byUid: (u) => index.get(u) ?? [] };
      if (!this.cached || seq >= this.cached.seq) {
        this.cached = { seq, snap };
        for (const [u, n] of this.changes) if (n <= seq) this.changes.delete(u);
      }
      return snap;
    } finally {
      if (this.inflight?.seq === seq) this.inflight = undefined; // not a newer call's
    }
  }
}
