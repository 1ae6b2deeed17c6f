/** Helpers shared by the benchmark modules. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Resource } from '../controller/api/types.js';
import { packageRoot } from '../controller/config/paths.js';

export const ROOT = packageRoot();
export const ORCHCTL = path.join(ROOT, 'bin/orchctl');

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `orchctl-bench-${prefix}-`));
}

export interface Stats {
  runs: number;
  min: number;
  median: number;
  mean: number;
  p90: number;
  p99: number;
  max: number;
}

/** Percentile by the nearest-rank method on a sorted copy. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1];
}

const round = (n: number) => Math.round(n * 10) / 10;

export function stats(values: number[]): Stats {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return {
    runs: s.length,
    min: round(s[0]),
    median: round(mid),
    mean: round(s.reduce((a, b) => a + b, 0) / s.length),
    p90: round(percentile(s, 90)),
    p99: round(percentile(s, 99)),
    max: round(s[s.length - 1]),
  };
}

export interface Timed {
  ms: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion as a cold process and measures its wall time. Throws on failure. */
export function timeProcess(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Timed {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, args, {
    env,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${path.basename(file)} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

/** orchctl with its own state directory. */
export function orchctl(home: string, args: string[]): Timed {
  return timeProcess(ORCHCTL, args, { ...process.env, ORCHCTL_HOME: home });
}

/** How long a bare `node -e ""` takes here: the floor under any CLI start-up. */
export function nodeStartup(runs = 10): Stats {
  timeProcess(process.execPath, ['-e', '']);
  return stats(Array.from({ length: runs }, () => timeProcess(process.execPath, ['-e', '']).ms));
}

export function machineInfo(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    totalMemoryMB: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    kernel: os.release(),
    /** 1/5/15-minute load when the benchmark started: other work on the box skews the figures. */
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** `dir` as a git repository with one empty commit (sessions' workdirs in the benchmarks). */
export function gitRepoWithOneCommit(dir: string): void {
  spawnSync('git', ['-C', dir, 'init', '-q']);
  const who = ['-c', 'user.email=b@b', '-c', 'user.name=b'];
  spawnSync('git', ['-C', dir, ...who, 'commit', '-q', '--allow-empty', '-m', 'init']);
}

/**
 * CPU time of a process in seconds, from /proc/<pid>/stat (Linux, USER_HZ 100): utime + stime, and
 * with `children` the time of the children it reaped too (cutime + cstime).
 */
export function cpuSeconds(pid: number, children = false): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(f[11]) + Number(f[12]);
  return (children ? own + Number(f[13]) + Number(f[14]) : own) / 100;
}

/** A session that only sleeps: what the scale benchmarks start by the hundred. */
export function sleeperSession(name: string, workdir: string): Resource {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {
      agent: { command: ['sh', '-c', 'exec sleep 3600'], promptDelivery: 'none' },
      workdir,
      desiredState: 'Running',
    },
  };
}
