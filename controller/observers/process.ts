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
