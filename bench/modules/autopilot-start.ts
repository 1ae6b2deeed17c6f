/**
 * Decision → session Running through a real controller process (bin/orchctl controller), real
 * tmux on its own socket and the real database file: 100 stale Projects (git repositories whose
 * only commit is 10 days old), an Autopilot at `full` with cooldowns 0s and one start per think,
 * and an Agent that runs `sleep` (what is measured is the controller's part, not an agent's
 * start-up). Each round makes the Autopilot think at once — the benchmark edits its spec, as a
 * person's apply would (a spec change is a think trigger) — and times from the executed Decision's
 * status.executedAt (stamped by the controller just before its transaction) until this process's
 * watch sees the session it created in phase Running.
 *
 * Baseline, in the same run and interleaved round by round: a person's AgentSession of the same
 * shape (same Agent, restartPolicy Never, a prompt) written from this process as `orchctl apply`
 * commits it, from just before the write until the same watch sees it Running.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { isApiError } from '../../controller/api/errors.js';
import type { AgentSession } from '../../controller/api/session.js';
import { API_VERSION, type ObjectKey } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { ORCHCTL, orchctl, stats, tempDir, type Stats } from '../lib.js';

const PROJECTS = 100;
const ROUNDS = 20;
const NS = 'default';
const AP: ObjectKey<'Autopilot'> = { kind: 'Autopilot', namespace: NS, name: 'ap' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A git repository whose one commit is 10 days old (the project reconciler reads lastActivity from it). */
function oldRepo(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'README.md'), '# bench\n');
  const when = new Date(Date.now() - 10 * 86_400_000).toISOString();
  const env = { ...process.env, GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when };
  const who = ['-c', 'user.email=b@b', '-c', 'user.name=b'];
  for (const args of [
    ['init', '-q'],
    ['add', '.'],
    [...who, 'commit', '-qm', 'init'],
  ]) {
    const r = spawnSync('git', ['-C', dir, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  }
}

function manifests(projectsDir: string): object[] {
  const docs: object[] = [
    {
      apiVersion: API_VERSION,
      kind: 'Agent',
      metadata: { name: 'sleeper' },
      spec: { command: ['sleep', '3600'], promptDelivery: 'none' },
    },
    // The person's project: not selected by the Autopilot (no label).
    { apiVersion: API_VERSION, kind: 'Project', metadata: { name: 'manual' }, spec: { path: `${projectsDir}/manual` } },
  ];
  for (let i = 0; i < PROJECTS; i++) {
    const name = `proj-${String(i).padStart(3, '0')}`;
    docs.push({
      apiVersion: API_VERSION,
      kind: 'Project',
      metadata: { name, labels: { bench: 'autopilot' } },
      spec: { path: `${projectsDir}/${name}`, priority: (i * 7) % 10 },
    });
  }
  return docs;
}

const autopilot = {
  apiVersion: API_VERSION,
  kind: 'Autopilot',
  metadata: { name: 'ap' },
  spec: {
    autonomyLevel: 'full',
    // Long: every think in the run is one the benchmark asks for.
    interval: '10m',
    projectSelector: { matchLabels: { bench: 'autopilot' } },
    planner: { backend: 'heuristic' },
    guardrails: {
      stalenessDays: 3,
      cooldowns: { sameProject: '0s', sameAction: '0s' },
      maxActiveSessions: 1000,
      maxStartsPerThink: 1,
    },
    sessionTemplate: { agentRef: 'sleeper' },
  },
};

const personSession = (name: string): AgentSession => ({
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name, namespace: NS },
  spec: {
    projectRef: 'manual',
    agentRef: 'sleeper',
    prompt: 'Resume work on the project "manual".',
    restartPolicy: 'Never',
    desiredState: 'Running',
  },
});

async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** A think at once: a change of the Autopilot's spec (its interval, 10m ↔ 11m), by compare-and-swap. */
async function askForThink(store: SqliteStore): Promise<void> {
  for (;;) {
    const ap = (await store.get(AP))!;
    ap.spec = { ...ap.spec, interval: ap.spec?.interval === '10m' ? '11m' : '10m' };
    try {
      await store.update(ap);
      return;
    } catch (e) {
      if (!isApiError(e, 'Conflict')) throw e;
    }
  }
}

export interface StartResults {
  projects: number;
  starts: number;
  decisionToRunningMs: Stats;
  /** executedAt until this process sees the Decision committed (the transaction and the store's poll). */
  decisionToVisibleMs: Stats;
  personApplyToRunningMs: Stats;
  p50Ratio: number;
  p99Ratio: number;
}

export async function decisionToRunning(): Promise<StartResults> {
  const dir = tempDir('autopilot-start');
  const home = path.join(dir, 'home');
  const projectsDir = path.join(dir, 'projects');
  fs.mkdirSync(home, { recursive: true });
  const socket = `orchctl-bench-autopilot-${process.pid}`;
  const env = { ...process.env, ORCHCTL_HOME: home, ORCHCTL_TMUX_SOCKET: socket, ORCHCTL_METRICS_ADDR: '0' };
  const store = new SqliteStore(path.join(home, 'state.db'), { pollIntervalMs: 5 });
  let controller: ChildProcess | undefined;
  try {
    oldRepo(path.join(dir, 'template'));
    for (const name of ['manual', ...Array.from({ length: PROJECTS }, (_, i) => `proj-${String(i).padStart(3, '0')}`)])
      fs.cpSync(path.join(dir, 'template'), path.join(projectsDir, name), { recursive: true });
    const write = (file: string, docs: object[]) => {
      fs.writeFileSync(file, docs.map((d) => YAML.stringify(d)).join('---\n'));
      orchctl(home, ['apply', '-f', file]);
    };
    write(path.join(dir, 'world.yaml'), manifests(projectsDir));
    controller = spawn(ORCHCTL, ['controller', '--log-format', 'json'], { env, stdio: 'ignore' });
    await until('the controller to lead', async () => (await store.getLease('orchctl-controller')) ?? undefined);
    // The Autopilot only once every Project shows its last activity, so its first think sees them stale.
    await until('every Project observed', async () => {
      const { items } = await store.list('Project', { namespace: NS });
      return (items.length === PROJECTS + 1 && items.every((p) => p.status?.lastActivity)) || undefined;
    });

    // What this process sees, as `orchctl get -w` would: when a session is first Running, when an
    // executed start Decision is first visible.
    const runningAt = new Map<string, number>();
    const starts: { executedAt: number; seenAt: number; session: string }[] = [];
    const counted = new Set<string>();
    const from = await store.revision();
    const watches = [
      store.watch({ kind: 'AgentSession', fromRevision: from }, (ev) => {
        const name = ev.object.metadata.name;
        if (ev.object.status?.phase === 'Running' && !runningAt.has(name)) runningAt.set(name, Date.now());
      }),
      store.watch({ kind: 'Decision', fromRevision: from }, (ev) => {
        const d = ev.object;
        if (d.spec?.action !== 'start' || d.status?.phase !== 'Executed' || counted.has(d.metadata.name)) return;
        counted.add(d.metadata.name);
        starts.push({
          executedAt: Date.parse(d.status.executedAt ?? ''),
          seenAt: Date.now(),
          session: d.status.result?.session ?? '',
        });
      }),
    ];
    try {
      write(path.join(dir, 'autopilot.yaml'), [autopilot]);
      // The first think (trigger: start) is the warm-up.
      const first = await until('the first start', () => starts[0]);
      await until('the first session Running', () => runningAt.get(first.session));
      const auto: number[] = [];
      const visible: number[] = [];
      const person: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // More than the autopilot's least gap between thinks (1 s), with jitter off the store's poll.
        await sleep(1100 + Math.random() * 200);
        const before = starts.length;
        await askForThink(store);
        const s = await until(`the start of round ${i}`, () => starts[before]);
        const running = await until(`session ${s.session} Running`, () => runningAt.get(s.session));
        auto.push(running - s.executedAt);
        visible.push(s.seenAt - s.executedAt);

        await sleep(200 + Math.random() * 100);
        const name = `manual-${String(i).padStart(2, '0')}`;
        const t0 = Date.now();
        await store.create(personSession(name));
        person.push((await until(`session ${name} Running`, () => runningAt.get(name))) - t0);
      }
      // One start per think: a second one would have been timed in the wrong round.
      if (starts.length !== ROUNDS + 1) throw new Error(`${starts.length} starts for ${ROUNDS + 1} thinks`);
      const a = stats(auto);
      const p = stats(person);
      const ratio = (x: number, y: number) => Math.round((x / Math.max(1, y)) * 10) / 10;
      return {
        projects: PROJECTS,
        starts: ROUNDS,
        decisionToRunningMs: a,
        decisionToVisibleMs: stats(visible),
        personApplyToRunningMs: p,
        p50Ratio: ratio(a.median, p.median),
        p99Ratio: ratio(a.p99, p.p99),
      };
    } finally {
      for (const w of watches) w.close();
    }
  } finally {
    controller?.kill('SIGKILL');
    spawnSync('tmux', ['-L', socket, 'kill-server']);
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
