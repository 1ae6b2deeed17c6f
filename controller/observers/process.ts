/** Facts about local processes: liveness, and on Linux their state and start time from /proc. */
import fs from 'node:fs';

/** The process exists (EPERM: it exists but is not ours to signal). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live processes of process group `pgid` (from /proc; none where /proc is unavailable). */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const p of names) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      // After the parenthesised command name: state, ppid, pgrp.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) out.push(Number(p));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
};

/**
 * Stops (SIGSTOP) a tmux pane's run: every process of the group its pane process leads (tmux starts
 * it in a session of its own, so the agent and what it started share the group) except that leader.
 * tmux answers a pane process that stops by continuing its group at once (server_child_stopped),
 * so the leader — the launch wrapper, which only waits for the agent — is left running. Twice: a
 * child forked while the first round went is caught by the second. False when the group is gone.
 */
export function stopRun(leader: number): boolean {
  let found = false;
  for (let round = 0; round < 2; round++)
    for (const pid of groupMembers(leader)) {
      found = true;
      if (pid !== leader) signal(pid, 'SIGSTOP');
    }
  return found;
}

/** Continues (SIGCONT) every process of the run's group: the undo of {@link stopRun}. */
export function continueRun(leader: number): void {
  try {
    process.kill(-leader, 'SIGCONT');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

let bootTime: number | undefined;

/** State letter (R, S, Z...) and start time in unix seconds; undefined where /proc is unavailable. */
export function processInfo(pid: number): { state: string; startTime: number } | undefined {
  try {
    bootTime ??= Number(fs.readFileSync('/proc/stat', 'utf8').match(/^btime (\d+)$/m)?.[1]);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, starttime field 22 (clock ticks, USER_HZ 100).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], startTime: bootTime + Number(fields[19]) / 100 };
  } catch {
    return undefined;
  }
}
