/**
 * Think + execute, in process: the AutopilotReconciler's reconcile with the heuristic planner over
 * 100 Projects, against a real SQLite store read through real informers (as the controller reads
 * it). Every think plans over all 100 projects and carries out one start (cooldowns 0s, one start
 * per think, no cap on active sessions), so each timed reconcile is the whole path: prune, view,
 * planner, guardrails and gate, the fresh read, the session's validation and the one transaction.
 * Successive thinks are interval thinks on an injected clock (10 s apart), as the reconciler's
 * `now` dependency allows; nothing sleeps between them but the wait for the informers to catch up.
 *
 * Baseline, in the same run and interleaved think by think: the I/O no implementation of the think
 * can skip, replayed on a second store file seeded identically and watched by the same informers —
 * the fresh read (the namespace's Projects and AgentSessions) and the very transactions the
 * reconcile just wrote (same ops, same objects; only resourceVersions and uids dropped, as they
 * belong to the other file). reconcile ÷ baseline is what planning, validation and the caches cost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Autopilot } from '../../controller/api/autopilot.js';
import type { Project } from '../../controller/api/project.js';
import type { AgentSession } from '../../controller/api/session.js';
import { API_VERSION, type Resource } from '../../controller/api/types.js';
import {
  decide,
  recoveryProposals,
  settings,
  view,
  type Dec,
  type World,
} from '../../controller/reconcilers/autopilot/plan.js';
import { planHeuristic } from '../../controller/reconcilers/autopilot/planner/heuristic.js';
import { AutopilotReconciler } from '../../controller/reconcilers/autopilot/reconciler.js';
import { Informer } from '../../controller/runtime/informer.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import type { Store, WriteOp } from '../../controller/store/store.js';
import { stats, tempDir, type Stats } from '../lib.js';

export const PROJECTS = 100;
const WARMUP = 5;
const THINKS = 50;
const INTERVAL_MS = 10_000;
const DAY = 86_400_000;
const NS = 'default';
const KINDS = ['Autopilot', 'Project', 'AgentSession', 'Evaluation', 'Decision', 'SessionPolicy', 'Node'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The world: 100 Projects idle 4–23 days (stale under stalenessDays 3), priorities 0–9; every
 * 20th blocked, every 25th protected (a skip Decision each think); a third with an ended run of a
 * person's session, every 10th with a person's session still Running (so not stale).
 */
function seedOps(now: number): WriteOp[] {
  const ops: WriteOp[] = [];
  const withStatus = (object: Resource, status: Record<string, unknown>) =>
    ops.push({ op: 'create', object }, { op: 'updateStatus', object: { ...object, status } });
  for (let i = 0; i < PROJECTS; i++) {
    const name = `proj-${String(i).padStart(3, '0')}`;
    const idle = now - (4 + (i % 20)) * DAY;
    const project: Project = {
      apiVersion: API_VERSION,
      kind: 'Project',
      metadata: { name, namespace: NS, labels: { team: i % 2 ? 'web' : 'core' } },
      spec: {
        path: `/srv/${name}`,
        priority: (i * 7) % 10,
        notes: `Goals for ${name}: keep the tests green and the dependencies current.`,
        ...(i % 20 === 3 ? { blocked: { reason: 'waiting for the API freeze' } } : {}),
        ...(i % 25 === 11 ? { protected: true } : {}),
      },
    };
    withStatus(project, { lastActivity: iso(idle), activeSessions: i % 10 === 5 ? 1 : 0 });
    const session = (suffix: string, status: AgentSession['status']) =>
      withStatus(
        {
          apiVersion: API_VERSION,
          kind: 'AgentSession',
          metadata: { name: `${name}-${suffix}`, namespace: NS },
          spec: { projectRef: name, agentRef: 'sleeper', prompt: 'Fix the flaky test.', desiredState: 'Running' },
        } as AgentSession,
        status as Record<string, unknown>,
      );
    if (i % 3 === 0)
      session('done', { phase: 'Succeeded', run: 1, startTime: iso(idle - 3_600_000), completionTime: iso(idle) });
    if (i % 10 === 5) session('live', { phase: 'Running', run: 1, startTime: iso(now - 7_200_000) });
  }
  const autopilot: Autopilot = {
    apiVersion: API_VERSION,
    kind: 'Autopilot',
    metadata: { name: 'ap', namespace: NS },
    spec: {
      autonomyLevel: 'full',
      projectSelector: {},
      interval: '10s',
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
  ops.push({ op: 'create', object: autopilot });
  return ops;
}

type Informers = { [K in (typeof KINDS)[number]]: Informer<K> };

async function informers(store: Store): Promise<Informers> {
  const out: Record<string, Informer> = {};
  for (const k of KINDS) {
    out[k] = new Informer(store, k);
    await out[k].start();
  }
  return out as Informers; // each filed under its own kind just above
}

/** The real store, with the transactions written through it kept (with their results) for the replay. */
function recording(store: SqliteStore): { store: Store; txns: { ops: WriteOp[]; results: Resource[] }[] } {
  const txns: { ops: WriteOp[]; results: Resource[] }[] = [];
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'txn')
        return async (ops: WriteOp[], opts?: Parameters<Store['txn']>[1]) => {
          const results = await target.txn(ops, opts);
          txns.push({ ops, results });
          return results;
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: proxy as Store, txns };
}

/** The same op for the other store file: its resourceVersions and uids are not this file's. */
function forBaseline(op: WriteOp): WriteOp {
  if (op.op === 'delete') return { op: 'delete', key: op.key };
  if (op.op === 'unchanged') return { ...op };
  const object = structuredClone(op.object);
  delete object.metadata.resourceVersion;
  delete object.metadata.uid;
  return { ...op, object };
}

/** Until every object the reconcile wrote is in the informers' caches at least at the version written. */
async function caughtUp(inf: Informers, txns: { ops: WriteOp[]; results: Resource[] }[]): Promise<void> {
  const pending = txns.flatMap(({ ops, results }) => {
    const writes = ops.filter((o) => o.op !== 'unchanged');
    return writes.map((op, i) => ({ op, result: results[i] }));
  });
  for (let t = 0; t < 1000; t++) {
    const behind = pending.filter(({ op, result }) => {
      const cached = inf[result.kind as (typeof KINDS)[number]]?.get(result.metadata.namespace, result.metadata.name);
      if (op.op === 'delete') return cached !== undefined;
      return Number(cached?.metadata.resourceVersion ?? 0) < Number(result.metadata.resourceVersion);
    });
    if (!behind.length) return;
    await sleep(2);
  }
  throw new Error('the informers did not catch up with the think within 2 s');
}

/** view + heuristic planner + recovery + guardrails and gate on the caches: the think without I/O. */
function pureThink(inf: Informers, now: number, think: number): number {
  const t0 = performance.now();
  const ap = inf.Autopilot.get(NS, 'ap')!;
  const w: World = {
    autopilot: ap,
    projects: inf.Project.list(NS),
    sessions: inf.AgentSession.list(NS),
    evaluations: [],
    decisions: inf.Decision.list(NS).filter((d): d is Dec => d.spec?.autopilot === 'ap'),
    now,
  };
  const s = settings(ap.spec);
  const v = view(w, s);
  const plan = planHeuristic(v.input);
  decide({
    world: w,
    settings: s,
    view: v,
    think,
    planner: 'heuristic',
    proposals: [...recoveryProposals(v.input, () => ''), ...plan.proposals],
  });
  return performance.now() - t0;
}

export interface ThinkResults {
  projects: number;
  thinks: number;
  reconcileMs: Stats;
  pureThinkMs: Stats;
  baselineMs: Stats;
  p50Ratio: number;
  p99Ratio: number;
  decisionsPerThink: number;
  opsPerThinkTxn: number;
  sessionsAtEnd: number;
  decisionsKept: number;
}

export async function thinkAndExecute(): Promise<ThinkResults> {
  const dir = tempDir('autopilot-think');
  const main = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 5 });
  const base = new SqliteStore(path.join(dir, 'baseline.db'), { pollIntervalMs: 5 });
  const stopAll: Informers[] = [];
  try {
    let clock = Date.now();
    const seed = seedOps(clock);
    await main.txn(seed);
    await base.txn(seed.map(forBaseline));
    const inf = await informers(main);
    stopAll.push(inf, await informers(base));
    const rec = recording(main);
    const reconciler = new AutopilotReconciler({
      store: rec.store,
      autopilots: inf.Autopilot,
      projects: inf.Project,
      sessions: inf.AgentSession,
      evaluations: inf.Evaluation,
      decisions: inf.Decision,
      policies: inf.SessionPolicy,
      nodes: inf.Node,
      log: silentLogger,
      now: () => clock,
    });
    const reconcileMs: number[] = [];
    const pureMs: number[] = [];
    const baselineMs: number[] = [];
    let decisions = 0;
    let thinkOps = 0;
    for (let i = 0; i < WARMUP + THINKS; i++) {
      const timed = i >= WARMUP;
      if (i > 0) clock += INTERVAL_MS;
      const pure = pureThink(inf, clock, i + 1);
      rec.txns.length = 0;
      const t0 = performance.now();
      await reconciler.reconcile(`${NS}/ap`);
      const ms = performance.now() - t0;
      const txns = rec.txns.splice(0);
      const starts = txns.flatMap((t) => t.ops).filter((o) => o.op === 'create' && o.object.kind === 'AgentSession');
      if (starts.length !== 1) throw new Error(`think ${i + 1} did not carry out exactly one start (${starts.length})`);
      await caughtUp(inf, txns);
      // The baseline: the fresh read and the same transactions, on the other file.
      const replay = txns.map((t) => t.ops.map(forBaseline));
      const b0 = performance.now();
      const [, sessions] = await Promise.all([
        base.list('Project', { namespace: NS }),
        base.list('AgentSession', { namespace: NS }),
      ]);
      for (const ops of replay)
        await base.txn(ops.map((o) => (o.op === 'unchanged' ? { ...o, since: sessions.revision } : o)));
      const bms = performance.now() - b0;
      if (!timed) continue;
      reconcileMs.push(ms);
      pureMs.push(pure);
      baselineMs.push(bms);
      const think = txns[txns.length - 1].ops;
      thinkOps += think.length;
      decisions += think.filter((o) => o.op === 'create' && o.object.kind === 'Decision').length;
    }
    const r = stats(reconcileMs);
    const b = stats(baselineMs);
    const ratio = (x: number, y: number) => Math.round((x / y) * 10) / 10;
    return {
      projects: PROJECTS,
      thinks: THINKS,
      reconcileMs: r,
      pureThinkMs: stats(pureMs),
      baselineMs: b,
      p50Ratio: ratio(r.median, b.median),
      p99Ratio: ratio(r.p99, b.p99),
      decisionsPerThink: Math.round((decisions / THINKS) * 10) / 10,
      opsPerThinkTxn: Math.round((thinkOps / THINKS) * 10) / 10,
      sessionsAtEnd: (await main.list('AgentSession', { namespace: NS })).items.length,
      decisionsKept: (await main.list('Decision', { namespace: NS })).items.length,
    };
  } finally {
    for (const i of stopAll) for (const k of KINDS) i[k].stop();
    await main.close();
    await base.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
