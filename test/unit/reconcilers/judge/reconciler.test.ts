/**
 * The judge reconciler over a real SQLite store file with real informers and a temp home (no
 * tmux: sessions are written with the status the session controller would have written, and
 * their run workspaces' state.json). Backends: the heuristic one, and the openai one against the
 * fake server on 127.0.0.1.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registry } from '../../../../controller/config/crds.js';
import type { AgentSession } from '../../../../controller/api/kinds.js';
import type { Resource } from '../../../../controller/api/types.js';
import { validateObject } from '../../../../controller/api/validate.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import { runWorkspace, writeState } from '../../../../controller/observers/workspace.js';
import {
  type JudgeDeps,
  JudgeReconciler,
  newEvaluation,
  policyLimiter,
  type JudgeMetricsHooks,
} from '../../../../controller/reconcilers/judge/reconciler.js';
import type { Evaluation } from '../../../../controller/reconcilers/judge/types.js';
import { Informer } from '../../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';
import { GOOD_VERDICT } from '../../../support/fake-judge-server.js';
import { FakeOpenAI, openai } from '../../../support/fake-openai.js';

const T0 = '2026-03-01T10:00:00.000Z';
const T1 = '2026-03-01T10:20:00.000Z';

let dir: string;
let home: string;
let store: SqliteStore;
let policies: Informer<'SessionPolicy'>;
let evaluations: Informer<'Evaluation'>;
let sessions: Informer<'AgentSession'>;
let judge: JudgeReconciler;
let fake: FakeOpenAI | undefined;
let enqueued: string[];
let metrics: { evaluated: string[]; failed: string[]; requests: string[]; inFlight: number[] };

function makeJudge(over: Pick<JudgeDeps, 'store'> = { store }) {
  const hooks: JudgeMetricsHooks = {
    onEvaluated: (b, r, s) => metrics.evaluated.push(`${b}/${r}/${s}`),
    onFailed: (b, r) => metrics.failed.push(`${b}/${r}`),
    onRequest: (b, p, r) => metrics.requests.push(`${b}/${p}/${r}`),
    onInFlight: (n) => metrics.inFlight.push(n),
  };
  return new JudgeReconciler({
    store: over.store,
    policies,
    evaluations,
    sessions,
    recorder: new EventRecorder(store),
    home,
    log: { info() {}, warn() {}, error() {} },
    enqueue: (k) => enqueued.push(k),
    limiter: policyLimiter(policies), // as the manager wires it
    metrics: hooks,
    backoffMs: 5,
  });
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-judge-'));
  home = path.join(dir, 'home');
  store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
  policies = new Informer(store, 'SessionPolicy');
  evaluations = new Informer(store, 'Evaluation');
  sessions = new Informer(store, 'AgentSession');
  await Promise.all([policies.start(), evaluations.start(), sessions.start()]);
  enqueued = [];
  metrics = { evaluated: [], failed: [], requests: [], inFlight: [] };
  judge = makeJudge();
});

afterEach(async () => {
  await judge.stop();
  policies.stop();
  evaluations.stop();
  sessions.stop();
  await fake?.close();
  fake = undefined;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function policy(judgeSpec: object | undefined, name = 'default') {
  await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name, namespace: 'default' },
    spec: judgeSpec ? { judge: judgeSpec } : {},
  });
  await until(() => policies.list().some((p) => p.metadata.name === name));
}

/** A session whose run `run` ended as the session controller records it. */
async function endedSession(
  name: string,
  st: AgentSession['status'],
  spec: AgentSession['spec'] = {},
): Promise<AgentSession> {
  const created = await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {
      agent: { command: ['sh', '-c', 'true'] },
      prompt: 'Fix the parser and add tests.',
      projectRef: 'shop',
      ...spec,
    },
  });
  const run = st?.run ?? 1;
  const ws = runWorkspace(home, 'default', name, run);
  fs.mkdirSync(ws.dir, { recursive: true });
  const phaseWord = String(st?.phase ?? 'Succeeded').toUpperCase();
  writeState(ws, {
    session: `default/${name}`,
    run,
    status: ['BACKOFF', 'PENDING'].includes(phaseWord) ? 'FAILED' : phaseWord,
    startTime: T0,
    completedTime: T1,
    exitCode: st?.exitCode ?? null,
  });
  return (await store.updateStatus({
    ...created,
    status: { startTime: T0, completionTime: T1, workspace: ws.dir, ...st },
  })) as AgentSession;
}

async function until<T>(fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const getEval = async (name: string) =>
  (await store.get({ kind: 'Evaluation', namespace: 'default', name })) as Evaluation | undefined;
const getSession = async (name: string) =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name })) as AgentSession;
const evalsOf = async (session: string) =>
  ((await store.list('Evaluation', { namespace: 'default' })).items as Evaluation[]).filter(
    (e) => e.spec?.sessionRef === session,
  );
const eventsOf = async (name: string) =>
  (await store.list('Event', { namespace: 'default' })).items.filter(
    (e) => (e.involvedObject as { name: string }).name === name,
  ) as (Resource & { reason: string; type: string; message: string })[];

/**
 * What the controller's queue does: reconcile, let the background judgements finish (each brings
 * the key back) and the informer catch up, and reconcile again, a few times over.
 */
async function settle(key: string) {
  const [, name] = key.split('/');
  for (let i = 0; i < 3; i++) {
    await judge.reconcile(key);
    await judge.idle();
    await until(async () => {
      const stored = await evalsOf(name);
      const cached = evaluations.list('default') as Evaluation[];
      return stored.every((e) =>
        cached.some(
          (c) => c.metadata.name === e.metadata.name && c.metadata.resourceVersion === e.metadata.resourceVersion,
        ),
      );
    });
  }
}

const COMMITTED = {
  head: 'b'.repeat(40),
  commits: 2,
  insertions: 60,
  deletions: 4,
  filesChanged: 3,
  lastCommit: { sha: 'b'.repeat(40), subject: 'parser: quoted newlines', time: T1 },
};

describe('judge reconciler', () => {
  it('creates one Evaluation per ended run, owned by the session, with the heuristic verdict and summary', async () => {
    await policy({});
    const s = await endedSession('fix-parser', {
      phase: 'Succeeded',
      run: 1,
      exitCode: 0,
      reason: 'Completed',
      headBefore: 'a'.repeat(40),
      git: COMMITTED,
      lastOutput: 'Tests  12 passed (12)',
    });
    await settle('default/fix-parser');
    const ev = (await getEval('fix-parser-run-1'))!;
    expect(ev.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'AgentSession',
        name: 'fix-parser',
        uid: s.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(ev.metadata.labels).toEqual({
      'orchctl.io/session': 'fix-parser',
      'orchctl.io/run': '1',
      'orchctl.io/trigger': 'SessionEnded',
    });
    expect(ev.spec).toMatchObject({
      sessionRef: 'fix-parser',
      run: 1,
      trigger: 'SessionEnded',
      projectRef: 'shop',
      evidence: { phase: 'Succeeded', git: { commits: 2 }, tests: { signal: 'passing' } },
    });
    expect(ev.status).toMatchObject({
      phase: 'Judged',
      score: 4,
      outcome: 'success',
      recommendation: 'complete',
      backend: 'heuristic',
      model: 'rules-v1',
      attempts: 1,
    });
    expect(ev.status?.conditions?.find((c) => c.type === 'Judged')).toMatchObject({
      status: 'True',
      reason: 'VerdictRecorded',
    });
    expect(validateObject(ev, registry().resolve('evaluation'))).toEqual([]);
    const after = await getSession('fix-parser');
    expect(after.status?.lastEvaluation).toEqual({
      name: 'fix-parser-run-1',
      run: 1,
      score: 4,
      recommendation: 'complete',
      outcome: 'success',
      evaluatedAt: ev.status!.evaluatedAt,
    });
    expect(validateObject(after, registry().resolve('agentsession'))).toEqual([]);
    expect((await eventsOf('fix-parser')).map((e) => e.reason)).toContain('Evaluated');
    expect(metrics.evaluated).toEqual(['heuristic/complete/4']);
    // Looking again changes nothing: still one Evaluation, the same verdict.
    for (let i = 0; i < 3; i++) await settle('default/fix-parser');
    expect(await evalsOf('fix-parser')).toHaveLength(1);
    expect((await getEval('fix-parser-run-1'))!.status!.evaluatedAt).toBe(ev.status!.evaluatedAt);
    expect(metrics.evaluated).toHaveLength(1);
  });

  it('judges the ended run even when the session is already in Backoff; escalates a score of 2 or less', async () => {
    await policy({});
    await endedSession('flaky', {
      phase: 'Backoff',
      run: 1,
      restarts: 1,
      exitCode: 3,
      reason: 'Error',
      headBefore: 'a'.repeat(40),
      git: { head: 'a'.repeat(40), commits: 0, insertions: 0, deletions: 0, filesChanged: 0 },
      nextRestartTime: T1,
      conditions: [
        {
          type: 'Succeeded',
          status: 'False',
          reason: 'Error',
          message: 'agent exited with code 3',
          lastTransitionTime: T1,
        },
      ],
    });
    await settle('default/flaky');
    const ev = (await getEval('flaky-run-1'))!;
    expect(ev.status).toMatchObject({ score: 1, outcome: 'failure', recommendation: 'retry' });
    expect(ev.spec?.evidence).toMatchObject({ phase: 'Failed', exitCode: 3 });
    const s = await getSession('flaky');
    expect(s.status?.conditions?.find((c) => c.type === 'Escalated')).toMatchObject({
      status: 'True',
      reason: 'JudgeEscalated',
    });
    expect(s.status?.phase).toBe('Backoff'); // only its own fields were written
    const warn = (await eventsOf('flaky')).find((e) => e.reason === 'Escalated');
    expect(warn).toMatchObject({ type: 'Warning' });
    expect(warn?.message).toContain('judged 1/5');
  });

  it('judges the previous run from its workspace when the session has already started the next one', async () => {
    await policy({});
    const s = await endedSession('next', {
      phase: 'Running',
      run: 2,
      restarts: 1,
      exitCode: undefined,
      completionTime: undefined,
      startTime: T1,
    });
    const ws1 = runWorkspace(home, 'default', 'next', 1);
    fs.mkdirSync(ws1.dir, { recursive: true });
    writeState(ws1, {
      run: 1,
      status: 'TIMEDOUT',
      reason: 'TimedOut',
      exitCode: 130,
      startTime: T0,
      completedTime: T1,
      git: { commits: 1, insertions: 10, deletions: 0, filesChanged: 1 },
    });
    fs.writeFileSync(ws1.outputLog, 'working on run 1\n');
    expect(judge.endedRuns(s)).toEqual([1]);
    await settle('default/next');
    expect((await evalsOf('next')).map((e) => e.metadata.name)).toEqual(['next-run-1']);
    expect((await getEval('next-run-1'))!.spec?.evidence).toMatchObject({
      phase: 'TimedOut',
      durationSeconds: 1200,
      outputTail: 'working on run 1',
      git: { commits: 1 },
    });
  });

  it('without a judge policy nothing is created, but an OnDemand Evaluation gets evidence and a verdict', async () => {
    const s = await endedSession('plain', { phase: 'Failed', run: 1, exitCode: 1, reason: 'Error' });
    await settle('default/plain');
    expect(await evalsOf('plain')).toHaveLength(0);
    expect((await getSession('plain')).metadata.resourceVersion).toBe(s.metadata.resourceVersion); // nothing written
    await store.create(newEvaluation(s, 'plain-run-1-ondemand-1', 1, 'OnDemand'));
    await until(() => evaluations.list('default').length === 1);
    await settle('default/plain');
    const ev = (await getEval('plain-run-1-ondemand-1'))!;
    expect(ev.spec?.evidence).toMatchObject({ trigger: 'OnDemand', phase: 'Failed', exitCode: 1 });
    expect(ev.status).toMatchObject({ phase: 'Judged', score: 1, backend: 'heuristic' });
  });

  it('nothing to judge (no Evaluation, no judging policy): a pass reads no store, a resync skips it', async () => {
    await policy(undefined);
    const s = await endedSession('quiet', { phase: 'Running', run: 1 });
    await until(() => sessions.get('default', 'quiet')?.metadata.resourceVersion === s.metadata.resourceVersion);
    let reads = 0;
    const counted = new Proxy(store, {
      get: (t, k, r) =>
        k === 'get'
          ? (...a: Parameters<SqliteStore['get']>) => {
              reads++;
              return t.get(...a);
            }
          : Reflect.get(t, k, r),
    });
    const quiet = makeJudge({ store: counted });
    for (let i = 0; i < 3; i++) await quiet.reconcile('default/quiet'); // what every resync did
    expect(reads).toBe(0);
    expect(quiet.needsPass('default/quiet')).toBe(false); // so the resync does not queue it at all
    expect((await getSession('quiet')).metadata.resourceVersion).toBe(s.metadata.resourceVersion);
    // An Evaluation for it (orchctl judge): the pass reads the session and judges it.
    await store.create(newEvaluation(s, 'quiet-run-1-ondemand-1', 1, 'OnDemand'));
    await until(() => evaluations.list('default').length === 1);
    expect(quiet.needsPass('default/quiet')).toBe(true);
    await quiet.reconcile('default/quiet');
    await quiet.idle();
    expect(reads).toBeGreaterThan(0);
    expect((await getEval('quiet-run-1-ondemand-1'))?.status).toMatchObject({ phase: 'Judged', backend: 'heuristic' });
    await quiet.stop();
  });

  it('invalid after the repair: JudgeFailed on Evaluation and session, a Warning, no score, no retry', async () => {
    fake = await FakeOpenAI.start(() => openai.garbage());
    await policy({ backend: 'openai', model: 'qwen2.5-coder:7b', endpoint: fake.endpoint, maxRetries: 2 });
    await endedSession('bad', { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    await settle('default/bad');
    const ev = (await getEval('bad-run-1'))!;
    expect(ev.status?.score).toBeUndefined();
    expect(ev.status?.recommendation).toBeUndefined();
    expect(ev.status?.phase).toBe('Failed');
    expect(ev.status?.conditions?.find((c) => c.type === 'JudgeFailed')).toMatchObject({
      status: 'True',
      reason: 'InvalidOutput',
    });
    expect(fake.requests).toHaveLength(2); // the answer and one repair; bad output is not "retried"
    const s = await getSession('bad');
    expect(s.status?.conditions?.find((c) => c.type === 'JudgeFailed')).toMatchObject({
      status: 'True',
      reason: 'InvalidOutput',
    });
    expect(s.status?.lastEvaluation).toBeUndefined();
    expect((await eventsOf('bad')).find((e) => e.reason === 'JudgeFailed')).toMatchObject({ type: 'Warning' });
    expect(metrics.failed).toEqual(['openai/InvalidOutput']);
    expect(metrics.requests).toEqual(['openai/judge/invalid', 'openai/judge/invalid']);
    for (let i = 0; i < 3; i++) await settle('default/bad');
    expect(fake.requests).toHaveLength(2);
  });

  it('server errors: bounded retries, then JudgeFailed (BackendError); a later good verdict clears it', async () => {
    fake = await FakeOpenAI.start(() => openai.status(503));
    await policy({ backend: 'openai', model: 'm', endpoint: fake.endpoint, maxRetries: 1 });
    const s = await endedSession('down', { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    await settle('default/down');
    expect(fake.requests).toHaveLength(2);
    expect((await getSession('down')).status?.conditions?.find((c) => c.type === 'JudgeFailed')).toMatchObject({
      status: 'True',
      reason: 'BackendError',
    });
    fake.server.setDefault(() => openai.answer(GOOD_VERDICT));
    await store.create(newEvaluation(s, 'down-run-1-ondemand-1', 1, 'OnDemand'));
    await until(() => evaluations.list('default').length === 2);
    await settle('default/down');
    const after = await getSession('down');
    expect(after.status?.conditions?.find((c) => c.type === 'JudgeFailed')).toMatchObject({
      status: 'False',
      reason: 'VerdictRecorded',
    });
    expect(after.status?.lastEvaluation).toMatchObject({ name: 'down-run-1-ondemand-1', score: 4 });
  });

  it('restart-safe: an Evaluation left Judging by a killed controller is redone; 3 attempts, then fails', async () => {
    await policy({});
    const s = await endedSession('crashy', {
      phase: 'Succeeded',
      run: 1,
      exitCode: 0,
      reason: 'Completed',
      git: COMMITTED,
    });
    const left = (await store.create(newEvaluation(s, 'crashy-run-1', 1, 'SessionEnded'))) as Evaluation;
    await store.updateStatus({ ...left, status: { phase: 'Judging', attempts: 1 } });
    await until(() => evaluations.list('default').length === 1);
    await settle('default/crashy');
    expect((await getEval('crashy-run-1'))!.status).toMatchObject({ phase: 'Judged', attempts: 2, score: 4 });
    expect(await evalsOf('crashy')).toHaveLength(1);

    const s2 = await endedSession('crashier', { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    const e2 = (await store.create(newEvaluation(s2, 'crashier-run-1', 1, 'SessionEnded'))) as Evaluation;
    await store.updateStatus({ ...e2, status: { phase: 'Judging', attempts: 3 } });
    await until(() => evaluations.list('default').length === 2);
    await settle('default/crashier');
    const failed = (await getEval('crashier-run-1'))!;
    expect(failed.status?.score).toBeUndefined();
    expect(failed.status?.conditions?.find((c) => c.type === 'JudgeFailed')).toMatchObject({
      status: 'True',
      reason: 'TooManyAttempts',
    });
  });

  it('never overwrites a verdict and never calls the backend for a judged Evaluation', async () => {
    fake = await FakeOpenAI.start(() => openai.answer({ ...GOOD_VERDICT, score: 1 }));
    await policy({ backend: 'openai', model: 'm', endpoint: fake.endpoint });
    const s = await endedSession('done', { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    const e = (await store.create(
      newEvaluation(s, 'done-run-1', 1, 'SessionEnded', {
        session: 'default/done',
        run: 1,
        trigger: 'SessionEnded',
        phase: 'Succeeded',
      }),
    )) as Evaluation;
    const verdict = {
      phase: 'Judged' as const,
      score: 5,
      recommendation: 'complete' as const,
      outcome: 'success' as const,
      confidence: 0.9,
      accomplishments: [],
      failures: [],
      reasoning: 'r',
      backend: 'openai',
      evaluatedAt: T1,
    };
    await store.updateStatus({ ...e, status: verdict });
    await until(() => (evaluations.list('default') as Evaluation[]).some((x) => x.status?.score === 5));
    for (let i = 0; i < 2; i++) await settle('default/done');
    expect(fake.requests).toHaveLength(0);
    expect((await getEval('done-run-1'))!.status).toMatchObject(verdict);
  });

  it("keeps judgements in flight at the policies' smallest limit (the fake counts concurrent requests)", async () => {
    fake = await FakeOpenAI.start(() => openai.answer(GOOD_VERDICT, 200));
    await policy({ backend: 'openai', model: 'm', endpoint: fake.endpoint, maxConcurrent: 3 });
    await policy({ maxConcurrent: 5 }, 'other');
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
    for (const n of names) await endedSession(n, { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    await Promise.all(names.map((n) => judge.reconcile(`default/${n}`)));
    await judge.idle();
    expect(fake.requests).toHaveLength(6);
    expect(fake.server.maxInFlight).toBe(3);
    expect(Math.max(...metrics.inFlight)).toBe(3);
    for (const n of names) expect((await getEval(`${n}-run-1`))!.status?.score).toBe(4);
  });

  it('stopping mid-call leaves the Evaluation with no verdict, no JudgeFailed, for the next controller', async () => {
    fake = await FakeOpenAI.start(() => openai.hang());
    await policy({ backend: 'openai', model: 'm', endpoint: fake.endpoint, timeout: '60s' });
    await endedSession('slow', { phase: 'Succeeded', run: 1, exitCode: 0, reason: 'Completed' });
    await judge.reconcile('default/slow');
    await fake.server.waitForRequests(1);
    await judge.stop();
    const ev = (await getEval('slow-run-1'))!;
    expect(ev.status).toMatchObject({ phase: 'Judging', attempts: 1 });
    expect(ev.status?.score).toBeUndefined();
    expect(ev.status?.conditions?.find((c) => c.type === 'JudgeFailed')).toBeUndefined();
  });
});
