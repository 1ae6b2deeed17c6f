/**
 * Failpoints for crash tests, after etcd's gofail: `ORCHCTL_FAILPOINTS=name[@n][,name[@n]…]` in the
 * controller's environment makes it kill itself with SIGKILL when it reaches a named point (the
 * n-th time, 1 by default), so a test can stop it exactly between two steps (a notification
 * recorded but not sent; sent but not marked; a status written) at any step of a lifecycle, and
 * check that the restarted controller converges. Unset, a failpoint is one lookup.
 */
const armed = new Map<string, number>();
for (const spec of (process.env.ORCHCTL_FAILPOINTS ?? '').split(',')) {
  const [name, nth] = spec.trim().split('@');
  const n = nth === undefined ? 1 : Number(nth);
  if (name && Number.isInteger(n) && n > 0) armed.set(name, n);
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

export function failpoint(name: Failpoint): void {
  const left = armed.get(name);
  if (left === undefined) return;
  if (left <= 1) process.kill(process.pid, 'SIGKILL');
  else armed.set(name, left - 1);
}
