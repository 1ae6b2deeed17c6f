/**
 * The node's self-fencing watchdog (multi-node mode; docs/multi-host.md "The fuse"). `kill -STOP`
 * stops a node agent, not its tmux server and agents, and after the grace the control plane starts
 * the sessions elsewhere. So one process per node watches the heartbeat file the node agent touches
 * at every lease renewal, and once it is older than the lease + 5 s it hangs up the process group of
 * every live run on the node's tmux socket — what `tmux kill-session` does to a pane — and sends
 * SIGKILL 2 s later to whatever ignored the hangup. The panes stay (dead, remain-on-exit) so the run's
 * end and the node's stale-run sweep see what happened, as with any agent that died.
 *
 * One per node, not one per run: a watchdog beside each run's wrapper forked sleep, stat and date
 * every 2 s, ~16 % of a core per 100 runs on the lead's machine, growing with the runs.
 *
 * It is a constant sh script (data only as positional parameters), detached in its own session so
 * that it outlives the node agent: a `kill -9` and quick restart must find its runs alive, and a node
 * agent that is down must still be guarded. It writes its pid to the owner file and exits when that
 * file holds another pid (a restarted node agent started a newer one) or is gone (the home removed).
 * A graceful stop of the node agent leaves it running on purpose: the control plane moves the
 * sessions after the grace, so the runs must be gone by then. `fused` gets one line per hangup.
 */
import { execa } from 'execa';
import path from 'node:path';

/** The age of the heartbeat at which the runs are hung up, and the files the watchdog uses. */
export interface Fuse {
  heartbeatFile: string;
  seconds: number;
  /** Holds the pid of the node's current watchdog. */
  ownerFile: string;
  /** One line appended per hangup, for the record. */
  fusedFile: string;
}

/** The watchdog's files in a node agent's home. */
export const fuseFiles = (home: string) => ({
  heartbeatFile: path.join(home, 'heartbeat'),
  ownerFile: path.join(home, 'watchdog.pid'),
  fusedFile: path.join(home, 'fused'),
});

/** Its argv[0]: how `ps` (and the tests) tell it apart. */
export const WATCHDOG_NAME = 'orchctl-watchdog';

/**
 * $1 heartbeat file, $2 tmux socket, $3 seconds, $4 owner file, $5 fused file. The owner file is read
 * with the `read` builtin and the pane list is split by the shell (no globbing: set -f): a fresh
 * heartbeat costs a sleep, a stat and a date every 2 s. Only panes that carry an orchctl uid are
 * touched: another program's pane on the socket is not this node's run. INT and HUP are ignored:
 * neither is meant for it.
 */
export const WATCHDOG_SCRIPT = [
  "trap '' INT HUP; set -f",
  'echo $$ > "$4" || exit 1',
  'while sleep 2; do',
  '  o=; read -r o < "$4" 2>/dev/null; [ "$o" = $$ ] || exit 0',
  '  m=$(stat -c %Y "$1" 2>/dev/null || stat -f %m "$1" 2>/dev/null || echo 0)',
  '  [ $(($(date +%s) - m)) -le "$3" ] && continue',
  '  live=; ids=',
  // The last field is non-empty for a pane tagged by orchctl: in its session's environment, one
  // option or (older) several (observers/tmux.ts TAGS_FORMAT).
  '  for x in $(tmux -L "$2" list-panes -a -F ' +
    "'#{pane_dead}:#{pane_pid}:#{pane_id}:#{?@orchctl-tags,t,#{?ORCHCTL_TAGS,t,#{@orchctl-uid}}}' 2>/dev/null); do",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: sh parameter expansions, run by the watchdog's shell
  '    case $x in 0:*:*:?*) x=${x#0:}; live="$live ${x%%:*}"; x=${x#*:}; ids="$ids ${x%%:*}" ;; esac',
  '  done',
  '  [ -n "$live" ] || continue',
  // Tagged before the hangup: the node sees the run was fenced, not failed (no restart counted).
  '  for i in $ids; do tmux -L "$2" set-option -p -t "$i" @orchctl-fused 1 2>/dev/null; done',
  '  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) heartbeat older than $3 s: hung up the runs in panes$live" >> "$5"',
  '  for p in $live; do kill -s HUP -- -"$p" 2>/dev/null; done',
  '  sleep 2',
  '  for p in $live; do kill -s KILL -- -"$p" 2>/dev/null; done',
  'done',
].join('\n');

/**
 * Starts the node's watchdog and returns its pid; the one it replaces exits within 2 s. Detached and
 * unreferenced: this process neither waits for it nor takes it down when it ends.
 */
export function startWatchdog(fuse: Fuse, tmuxSocket: string): number | undefined {
  const args = [fuse.heartbeatFile, tmuxSocket, String(Math.ceil(fuse.seconds)), fuse.ownerFile, fuse.fusedFile];
  const p = execa('sh', ['-c', WATCHDOG_SCRIPT, WATCHDOG_NAME, ...args], {
    detached: true,
    cleanup: false,
    stdio: 'ignore',
    reject: false,
    // A daemon pins no working directory.
    cwd: '/',
  });
  p.unref();
  // Its end is not this process's business (it normally outlives it).
  p.catch(() => {});
  return p.pid;
}
