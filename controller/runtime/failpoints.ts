/**
 * Failpoints for crash tests, after etcd's gofail: `ORCHCTL_FAILPOINTS=name[,name…]` in the
 * controller's environment makes it kill itself with SIGKILL when it reaches a named point, so a
 * test can stop it exactly between two steps (a notification recorded but not sent; sent but not
 * marked) and check that the restarted controller converges. Unset, a failpoint is one lookup.
 */
const armed = new Set(
  (process.env.ORCHCTL_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** The failpoints the code has; a name not listed here is a typo in a test. */
export const FAILPOINTS = ['notifier-before-send', 'notifier-after-send', 'pipeline-after-create'] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

export function failpoint(name: Failpoint): void {
  if (armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
