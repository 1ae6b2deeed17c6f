/**
 * A real controller process (the built bin/orchctl) against a temp ORCHCTL_HOME, a real git
 * repository and a tmux server on a socket unique to the test, plus helpers to apply manifests
 * and read status straight from the database file.
 */
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import type { AgentSession } from '../../controller/api/kinds.js';
import type { Resource } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { BIN, ROOT } from './cli.js';
import { pollFor } from './until.js';
import { parseTags, TAGS_FORMAT } from '../../controller/observers/tmux.js';

let counter = 0;

export interface Harness {
  dir: string;
  home: string;
  repo: string;
  socket: string;
  env: NodeJS.ProcessEnv;
  store: SqliteStore;
  controller?: ResultPromise;
  controllerLog: string[];
  /** More text for a failed wait's message (e.g. what a fake model API received). */
  diagnostics: (() => string)[];
  start(args?: string[]): ResultPromise;
  stopController(signal?: NodeJS.Signals): Promise<void>;
  apply(docs: object[] | string): Promise<void>;
  orchctl(args: string[], input?: string): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  session(name: string): Promise<AgentSession | undefined>;
  waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, ms?: number): Promise<T>;
  tmuxSessions(): Promise<{ name: string; uid: string; dead: boolean }[]>;
  events(name: string): Promise<Resource[]>;
  cleanup(): Promise<void>;
}

/** Pids of processes whose working directory is inside `dir` (from /proc). */
export function processesIn(dir: string): number[] {
  const out: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (fs.readlinkSync(`/proc/${p}/cwd`).startsWith(dir)) out.push(Number(p));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

export function git(repo: string, args: string[]) {
  return execa('git', ['-C', repo, '-c', 'user.email=test@orchctl.io', '-c', 'user.name=orchctl test', ...args]);
}

export async function makeHarness(opts: { homeName?: string } = {}): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-it-'));
  const home = path.join(dir, opts.homeName ?? 'home');
  const repo = path.join(dir, 'repo');
  fs.mkdirSync(repo, { recursive: true });
  await git(repo, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(repo, 'README.md'), '# test\n');
  await git(repo, ['add', '.']);
  await git(repo, ['commit', '-qm', 'initial']);
  const socket = `orchctl-it-${process.pid}-${++counter}`;
  // Metrics off unless a test asks (--metrics-addr): parallel controllers must not race for :9464.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ORCHCTL_HOME: home,
    ORCHCTL_TMUX_SOCKET: socket,
    ORCHCTL_METRICS_ADDR: '0',
    NO_COLOR: '1',
  };
  delete env.ORCHCTL_NAMESPACE;
  fs.mkdirSync(home, { recursive: true });
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 20 });

  const h: Harness = {
    dir,
    home,
    repo,
    socket,
    env,
    store,
    controllerLog: [],
    diagnostics: [],
    start(args = []) {
      const p = execa(
        BIN,
        ['controller', '--log-format', 'json', '--observe-interval', '1s', '--resync', '3s', ...args],
        {
          cwd: ROOT,
          env,
          extendEnv: false,
          reject: false,
          stdin: 'ignore',
        },
      );
      p.stderr?.on('data', (d: Buffer) => h.controllerLog.push(...d.toString().split('\n').filter(Boolean)));
      h.controller = p;
      return p;
    },
    async stopController(signal = 'SIGTERM') {
      const p = h.controller;
      if (!p) return;
      h.controller = undefined;
      p.kill(signal);
      await p;
    },
    async apply(docs) {
      const text = typeof docs === 'string' ? docs : docs.map((d) => YAML.stringify(d)).join('---\n');
      const r = await h.orchctl(['apply', '-f', '-'], text);
      if (r.exitCode !== 0) throw new Error(`apply failed: ${r.stderr}`);
    },
    async orchctl(args, input) {
      const r = await execa(BIN, args, { cwd: ROOT, env, extendEnv: false, reject: false, input, timeout: 30_000 });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    async session(name) {
      return (await store.get({ kind: 'AgentSession', namespace: 'default', name })) as AgentSession | undefined;
    },
    waitFor(what, fn, ms = 20_000) {
      return pollFor(what, fn, ms, {
        everyMs: 50,
        context: async () => {
          const panes = await execa(
            'tmux',
            [
              '-L',
              socket,
              'list-panes',
              '-a',
              '-F',
              '#{session_name} pid=#{pane_pid} dead=#{pane_dead} status=#{pane_dead_status} ' +
                'signal=#{pane_dead_signal} cmd=#{pane_current_command}',
            ],
            { reject: false },
          );
          // What each pane shows: a stuck agent explains itself there (a dialog, an unsent prompt).
          let screens = '';
          const ids = await execa('tmux', ['-L', socket, 'list-panes', '-a', '-F', '#{pane_id}'], { reject: false });
          for (const id of String(ids.stdout).split('\n').filter(Boolean)) {
            const c = await execa('tmux', ['-L', socket, 'capture-pane', '-p', '-t', id, '-S', '-40'], {
              reject: false,
            });
            screens += `--- pane ${id} ---\n${String(c.stdout).trimEnd()}\n`;
          }
          return (
            `controller log tail:\n${h.controllerLog.slice(-15).join('\n')}\n` +
            `tmux panes:\n${panes.stdout}${panes.stderr}\n${screens}` +
            h.diagnostics.map((d) => d()).join('\n')
          );
        },
      }) as never;
    },
    async tmuxSessions() {
      const r = await execa(
        'tmux',
        ['-L', socket, 'list-panes', '-a', '-F', `#{session_name}\t${TAGS_FORMAT}\t#{pane_dead}`],
        { reject: false },
      );
      if (r.exitCode !== 0) return [];
      return String(r.stdout)
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [name, tags, dead] = l.split('\t');
          return { name, uid: parseTags(tags).uid, dead: dead === '1' };
        });
    },
    async events(name) {
      const { items } = await store.list('Event', { namespace: 'default' });
      return items
        .filter((e) => (e.involvedObject as { name: string }).name === name)
        .sort((a, b) => String(a.firstTimestamp).localeCompare(String(b.firstTimestamp)));
    },
    async cleanup() {
      await h.stopController('SIGKILL').catch(() => undefined);
      await execa('tmux', ['-L', socket, 'kill-server'], { reject: false });
      // Agents die of the hangup, but may take a moment (Claude Code writes its config and
      // transcript on the way out, and recreates its working directory): wait for them.
      for (let i = 0; i < 100 && processesIn(dir).length; i++) await new Promise((r) => setTimeout(r, 100));
      await store.close();
      // Agents killed with the tmux server may still be writing (Claude Code flushes its config): retry.
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 50, retryDelay: 100 });
    },
  };
  return h;
}

/** An AgentSession running an inline shell agent in `workdir`. */
export function shellSession(
  name: string,
  script: string,
  workdir: string,
  spec: Record<string, unknown> = {},
  agent: Record<string, unknown> = {},
): object {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name },
    spec: { agent: { command: ['sh', '-c', script], promptDelivery: 'none', ...agent }, workdir, ...spec },
  };
}

export const phaseOf = (s: AgentSession | undefined) => s?.status?.phase;
/** Whether every session of `names` is Running now (a waitFor condition). */
export const allRunning = async (h: Harness, names: string[]) =>
  (await Promise.all(names.map((n) => h.session(n)))).every((s) => phaseOf(s) === 'Running');
export const condition = (s: AgentSession | undefined, type: string) =>
  s?.status?.conditions?.find((c) => c.type === type);
