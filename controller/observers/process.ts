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

/** Every live process (from /proc): its parent and its process group; none where /proc is unavailable. */
function processTable(): { pid: number; ppid: number; pgrp: number }[] {
  const out: { pid: number; ppid: number; pgrp: number }[] = [];
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
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(p), ppid: Number(f[1]), pgrp: Number(f[2]) });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/**
 * The processes of a tmux pane's run but its leader: the group the pane process leads (tmux starts
 * it in a session of its own) and every descendant, also one that moved to a group of its own (an
 * agent's tool shell started detached).
 */
export function runProcesses(leader: number): number[] {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const found = new Set(table.filter((p) => p.pgrp === leader).map((p) => p.pid));
  const todo = [leader];
  while (todo.length)
    for (const c of children.get(todo.pop()!) ?? []) {
      if (found.has(c)) continue;
      found.add(c);
      todo.push(c);
    }
  found.delete(leader);
  return [...found];
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
};

/**
 * Stops (SIGSTOP) a tmux pane's run: every process of it ({@link runProcesses}) but its leader.
 * tmux answers a pane process that stops by continuing its group at once (server_child_stopped),
 * so the leader — the launch wrapper, which only waits for the agent — is left running. Twice: a
 * child forked while the first round went is caught by the second.
 */
export function stopRun(leader: number): void {
  for (let round = 0; round < 2; round++) for (const pid of runProcesses(leader)) signal(pid, 'SIGSTOP');
}

/** Continues (SIGCONT) every process of the run: the undo of {@link stopRun}. */
export function continueRun(leader: number): void {
  for (const pid of runProcesses(leader)) signal(pid, 'SIGCONT');
  signal(leader, 'SIGCONT');
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
