/**
 * Failpoints for crash tests, after etcd's gofail: `ORCHCTL_FAILPOINTS=name[@n][=action][,…]` in the
 * controller's environment acts when it reaches a named point (the n-th time, 1 by default). The
 * action `kill` (the default) makes it kill itself with SIGKILL, so a test can stop it exactly
 * between two steps (a notification recorded but not sent; sent but not marked; a status written)
 * at any step of a lifecycle, and check that the restarted controller converges. The action `hold`
 * (only at a point the code awaits, HOLD_POINTS) makes the pass wait there forever, as a call that
 * never answers would: a test of what a stop does with a reconcile that does not finish. Unset, a
 * failpoint is one lookup.
 */
const armed = new Map<string, { left: number; action: 'kill' | 'hold' }>();
for (const spec of (process.env.ORCHCTL_FAILPOINTS ?? '').split(',')) {
  const [point, action = 'kill'] = spec.trim().split('=');
  const [name, nth] = (point ?? '').split('@');
  const n = nth === undefined ? 1 : Number(nth);
  if (name && Number.isInteger(n) && n > 0 && (action === 'kill' || action === 'hold'))
    armed.set(name, { left: n, action });
}

/** The failpoints the code has; a name not listed here is a typo in a test. */
export const FAILPOINTS = [
  'notifier-before-send',
  /** A send returned, its key not yet in the channel's delivered-keys record. */
  'notifier-before-record',
  /** A send returned and its key recorded, the Notification not yet marked Sent. */
  'notifier-after-send',
  'pipeline-after-create',
  /** A pipeline's status (and, in the same transaction, its Events) written. */
  'pipeline-after-status',
  /** A session pass's effects performed, its one status write (and its Events) not yet done. */
  'session-before-status',
  /** A session pass's status (and its Events) written. */
  'session-after-status',
  /** A tmux client started with a list of launches (their runs recorded), its outcome not yet read. */
  'tmux-launch-list-sent',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

/** The failpoints the code awaits (holdpoint()): `kill` or `hold` there. */
export const HOLD_POINTS = [
  /** A session pass began (the session read, its finalizer in place), nothing observed or done yet. */
  'session-reconcile',
] as const;
export type HoldPoint = (typeof HOLD_POINTS)[number];

/** Whether the n-th hit of an armed point is this one; its action if so. */
function reached(name: string): 'kill' | 'hold' | undefined {
  const a = armed.get(name);
  if (a === undefined) return undefined;
  if (a.left > 1) {
    a.left--;
    return undefined;
  }
  armed.delete(name);
  return a.action;
}

export function failpoint(name: Failpoint): void {
  const action = reached(name);
  // A point the code does not await cannot hold: the armed `hold` is a mistake in the test.
  if (action === 'hold') throw new Error(`failpoint ${name}: hold works only at ${HOLD_POINTS.join(', ')}`);
  if (action === 'kill') process.kill(process.pid, 'SIGKILL');
}

/**
 * A failpoint the code awaits: `kill` as failpoint(); `hold` never resolves, and keeps a timer
 * alive meanwhile as a stuck child process or socket would. `log` is told that it holds.
 */
export function holdpoint(name: HoldPoint, log: (m: string) => void): Promise<void> | undefined {
  const action = reached(name);
  if (action === 'kill') process.kill(process.pid, 'SIGKILL');
  if (action !== 'hold') return undefined;
  log(`failpoint ${name}: holding this pass forever`);
  return new Promise<void>(() => setInterval(() => undefined, 60_000));
}
