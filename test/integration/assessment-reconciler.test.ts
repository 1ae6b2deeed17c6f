/**
 * The assessment reconciler over a real SQLite store and real event-log files, with the sending
 * path replaced by a recorder (what it sends is the subject; the real tmux path is exercised in
 * assessment-controller.test.ts). Crashes are reproduced by putting status back where a killed
 * controller would have left it and running a fresh reconciler.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentSession, SessionPolicy } from '../../controller/api/kinds.js';
import type { Resource } from '../../controller/api/types.js';
import { EventRecorder } from '../../controller/client/events.js';
import { STOP_GRACE_MS } from '../../controller/reconcilers/assessment/assess.js';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import { readCheckpoints, checkpointsPath } from '../../controller/reconcilers/assessment/history.js';
import {
  type AssessmentDeps,
  AssessmentReconciler,
  type SendFn,
} from '../../controller/reconcilers/assessment/reconciler.js';
import type {
  AssessmentStatus,
  BreakerStatus,
  PendingIntervention,
} from '../../controller/reconcilers/assessment/status.js';
import { Informer } from '../../controller/runtime/informer.js';
import { EventLog, EventLogs, eventLogPath, type AgentEvent } from '../../controller/store/eventlog.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { toolOutput, TranscriptBuilder } from '../support/assessment-transcript.js';
import { until } from '../support/until.js';

let dir: string;
let store: SqliteStore;
let sent: { key: string; text: string }[];
let sendResult: Awaited<ReturnType<SendFn>> | Error;
let now: number;
let policySpec: Record<string, unknown>;

const NAME = 'fix-tests';
const key = `default/${NAME}`;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function reconciler(o: Partial<AssessmentDeps> = {}): AssessmentReconciler {
  const policy = {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name: 'default', namespace: 'default', uid: `pol-${JSON.stringify(policySpec)}`, generation: 1 },
    spec: policySpec,
  } as SessionPolicy;
  return new AssessmentReconciler({
    store,
    policies: { list: () => [policy] },
    home: dir,
    recorder: new EventRecorder(store, 'orchctl-controller'),
    log: quiet,
    send: async (k, text) => {
      sent.push({ key: k, text });
      if (sendResult instanceof Error) throw sendResult;
      return sendResult;
    },
    now: () => now,
    redeliverGraceMs: 30_000,
    ...o,
  });
}

async function session(): Promise<AgentSession> {
  return (await store.get({ kind: 'AgentSession', namespace: 'default', name: NAME })) as AgentSession;
}

async function setStatus(patch: Record<string, unknown>): Promise<void> {
  const s = await session();
  await store.updateStatus({ ...s, status: { ...(s.status ?? {}), ...patch } });
}

function append(events: AgentEvent[]): AgentEvent[] {
  const log = new EventLog(eventLogPath(dir, 'default', NAME));
  try {
    return log.append(events.map(({ seq: _s, ...e }) => e as never));
  } finally {
    log.close();
  }
}

/** Five failing pytest runs at real time (the trip is fresh), then a commit. */
function failingSession(): AgentEvent[] {
  const t = new TranscriptBuilder(new Date(Date.now() - 120_000).toISOString(), 1000).user('Make pytest pass.');
  for (let i = 0; i < 5; i++) t.bash('python3 -m pytest -q', toolOutput('pytest-fail'));
  return t.events();
}

const status = async () =>
  (await session()).status as Record<string, unknown> & {
    assessment: AssessmentStatus;
    breaker: BreakerStatus;
    detector: { counts: Record<string, number>; events: number };
  };

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-assess-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  sent = [];
  sendResult = {
    delivered: true,
    reason: 'Confirmed',
    message: 'submitted and confirmed: the transcript gained the user message',
    retries: 0,
  };
  now = Date.now();
  policySpec = { selector: {} };
  await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: NAME, namespace: 'default' },
    spec: { agentRef: 'claude-code', workdir: dir, prompt: 'Make pytest pass.' },
  } as Resource);
  await setStatus({ phase: 'Running', run: 1, tmuxSession: 'default_fix-tests_1234', workspace: path.join(dir, 'ws') });
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('consuming the event log', () => {
  it('writes nothing for a session whose log is empty', async () => {
    expect(await reconciler().reconcile(key)).toBeUndefined();
    expect((await session()).status?.detector).toBeUndefined();
  });

  it('a pass over a session with nothing logged and nothing assessed reads no store (every resync)', async () => {
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
    // The cache holds what the store holds (an informer that has caught up).
    const sessions = { get: () => cached };
    let cached: AgentSession | undefined = await session();
    const r = reconciler({ store: counted, sessions });
    for (let i = 0; i < 3; i++) expect(await r.reconcile(key)).toBeUndefined();
    expect(reads).toBe(0);
    // An empty log file is nothing logged too.
    fs.mkdirSync(path.dirname(eventLogPath(dir, 'default', NAME)), { recursive: true });
    fs.writeFileSync(eventLogPath(dir, 'default', NAME), '');
    await r.reconcile(key);
    expect(reads).toBe(0);
    // Events logged: the pass reads the session and assesses them.
    append(failingSession());
    await r.reconcile(key);
    expect(reads).toBeGreaterThan(0);
    expect((await status()).assessment.position.seq).toBeGreaterThan(0);
    // A cache behind that write (no assessment in it) still reads the store: the log is not empty.
    const before = reads;
    await r.reconcile(key);
    expect(reads).toBeGreaterThan(before);
    // Unknown to the cache: read from the store as before.
    cached = undefined;
    fs.rmSync(eventLogPath(dir, 'default', NAME));
    const again = reads;
    await r.reconcile(key);
    expect(reads).toBeGreaterThan(again);
  });

  it('a replay from the committed position (status lost in a crash) counts and checkpoints nothing twice', async () => {
    const t = new TranscriptBuilder(new Date(Date.now() - 120_000).toISOString(), 1000).user('Fix the add() test.');
    for (const n of ['vitest-fail', 'vitest-fail', 'vitest-pass']) t.bash('npx vitest run', toolOutput(n));
    t.bash('git commit -qam "fix add()"', { output: '[main 1a2b3c4] fix add()', exitCode: 0 }).endTurn(
      'Fixed and committed.',
    );
    const evs = append(t.events());
    const before = structuredClone((await session()).status);
    await reconciler().reconcile(key);
    const first = await status();
    expect(first.detector.counts).toEqual({ TestFailure: 2, TestSuccess: 1, Commit: 1 });
    expect(first.assessment.position.seq).toBe(evs.at(-1)!.seq);
    const file = checkpointsPath(dir, 'default', NAME);
    expect(readCheckpoints(file).map((c) => c.trigger)).toEqual(['git-commit']);

    // The controller died after appending the checkpoint, before its status write: status is as before.
    await store.updateStatus({ ...(await session()), status: before });
    await reconciler().reconcile(key);
    const again = await status();
    expect(again.detector).toEqual(first.detector);
    expect(again.breaker.consecutiveFailures).toBe(first.breaker.consecutiveFailures);
    expect(readCheckpoints(file)).toHaveLength(1);

    // And a pass with nothing new changes nothing (no write at all).
    const rv = (await session()).metadata.resourceVersion;
    await reconciler().reconcile(key);
    expect((await session()).metadata.resourceVersion).toBe(rv);
  });

  it('takes a long log in batches, asking to come back at once', async () => {
    const t = new TranscriptBuilder(new Date(Date.now() - 3_600_000).toISOString(), 100).user('Refactor.');
    for (let i = 0; i < 400; i++) t.edit(`src/f${i}.ts`);
    const evs = append(t.events());
    expect(evs.length).toBeGreaterThan(500);
    const r = reconciler();
    expect(await r.reconcile(key)).toEqual({ requeueAfterMs: 0 });
    expect((await status()).assessment.position.seq).toBe(500);
    await r.reconcile(key);
    expect((await status()).assessment.position.seq).toBe(evs.at(-1)!.seq);
    expect((await status()).detector.events).toBe(evs.length);
  });
  it('reads on from its position after retention cut the log, keeping what it counted', async () => {
    const evs = append(failingSession());
    await reconciler().reconcile(key);
    const first = await status();
    expect(first.assessment.position.seq).toBe(evs.at(-1)!.seq);
    // More events, into a log cut past a limit a little above the committed position: the file is now
    // shorter than the position, which is still valid (a logical offset).
    const t = new TranscriptBuilder(new Date(Date.now() - 60_000).toISOString(), 1000);
    for (let i = 0; i < 40; i++) t.edit(`src/f${i}.ts`);
    const log = new EventLog(eventLogPath(dir, 'default', NAME), { maxBytes: first.assessment.position.offset + 4096 });
    const more = log.append(t.events().map(({ seq: _s, ...e }) => e as never));
    log.close();
    const file = eventLogPath(dir, 'default', NAME);
    expect(fs.statSync(file).size).toBeLessThan(first.assessment.position.offset);
    await reconciler().reconcile(key);
    const after = await status();
    expect(after.detector.counts).toEqual(first.detector.counts); // not started over
    expect(after.assessment.position.seq).toBe(more.at(-1)!.seq);
  });
});

describe('the periodic resync', () => {
  it('a pass over a session with nothing new reads neither store nor log; an append or write brings one', async () => {
    const logs = new EventLogs(dir);
    const sessions = new Informer(store, 'AgentSession');
    await sessions.start();
    const r = reconciler({ changes: { sessions, onAppend: (fn) => logs.onAppend(fn) } });
    const file = eventLogPath(dir, 'default', NAME);
    const storeReads = vi.spyOn(store, 'get');
    const open = vi.spyOn(fs, 'openSync');
    const stat = vi.spyOn(fs, 'statSync');
    const reads = () => ({
      store: storeReads.mock.calls.length,
      log:
        open.mock.calls.filter(([f, flags]) => f === file && flags === 'r').length +
        stat.mock.calls.filter(([f]) => f === file).length,
    });
    const logged = (events: AgentEvent[]) =>
      logs.get('default', NAME).append(events.map(({ seq: _s, ...e }) => e as never));
    const cached = async () => {
      const rv = (await session()).metadata.resourceVersion;
      await until('the cache has the session', () => sessions.get('default', NAME)?.metadata.resourceVersion === rv);
      storeReads.mockClear();
      open.mockClear();
      stat.mockClear();
    };
    try {
      const t = new TranscriptBuilder(new Date(Date.now() - 120_000).toISOString(), 1000).user('Fix the add() test.');
      t.bash('npx vitest run', toolOutput('vitest-pass')).endTurn('Fixed.');
      const first = logged(t.events());
      expect(await r.reconcile(key)).toBeUndefined();
      expect((await status()).assessment.position.seq).toBe(first.at(-1)!.seq);
      await cached();
      for (let i = 0; i < 3; i++) expect(await r.reconcile(key)).toBeUndefined();
      expect(reads()).toEqual({ store: 0, log: 0 });

      // An append: the next pass reads and assesses it, and the one after that reads nothing again.
      const more = logged(new TranscriptBuilder(new Date().toISOString(), 1000).user('Now the docs.').events());
      await r.reconcile(key);
      expect(reads().store).toBe(1);
      expect(reads().log).toBeGreaterThan(0);
      expect((await status()).assessment.position.seq).toBe(more.at(-1)!.seq);
      await cached();
      await r.reconcile(key);
      expect(reads()).toEqual({ store: 0, log: 0 });

      // Another writer changed the session: read again once.
      await setStatus({ message: 'changed by someone else' });
      await cached();
      await r.reconcile(key);
      await r.reconcile(key);
      expect(reads().store).toBe(1);
    } finally {
      sessions.stop();
      logs.closeAll();
      vi.restoreAllMocks();
    }
  });
});

describe('the periodic resync over a session with nothing logged', () => {
  it('looks at its empty log once; later passes read neither log nor store until an append', async () => {
    const logs = new EventLogs(dir);
    const sessions = new Informer(store, 'AgentSession');
    await sessions.start();
    const r = reconciler({ sessions, changes: { sessions, onAppend: (fn) => logs.onAppend(fn) } });
    const file = eventLogPath(dir, 'default', NAME);
    const rv = (await session()).metadata.resourceVersion;
    await until('the cache has the session', () => sessions.get('default', NAME)?.metadata.resourceVersion === rv);
    const storeReads = vi.spyOn(store, 'get');
    const stat = vi.spyOn(fs, 'statSync');
    const logLooks = () => stat.mock.calls.filter(([f]) => f === file).length;
    try {
      for (let i = 0; i < 4; i++) expect(await r.reconcile(key)).toBeUndefined();
      // One look (the first pass) for the four: a resync of 1000 idle sessions was 1000 stats.
      expect({ log: logLooks(), store: storeReads.mock.calls.length }).toEqual({ log: 1, store: 0 });
      expect(r.needsPass(key)).toBe(false); // so the resync does not queue it at all

      // An append unsettles it: the next pass reads the store and the log, and assesses.
      const t = new TranscriptBuilder(new Date().toISOString(), 1000).user('Fix the add() test.');
      const first = logs.get('default', NAME).append(t.events().map(({ seq: _s, ...e }) => e as never));
      expect(r.needsPass(key)).toBe(true);
      await r.reconcile(key);
      expect(storeReads.mock.calls.length).toBe(1);
      expect((await status()).assessment.position.seq).toBe(first.at(-1)!.seq);
    } finally {
      sessions.stop();
      logs.closeAll();
      vi.restoreAllMocks();
    }
  });
});

describe('interventions', () => {
  it('on a trip: BreakerOpen condition and Event, the text sent once, the outcome in the history', async () => {
    append(failingSession());
    const r = await reconciler().reconcile(key);
    expect(sent).toEqual([{ key, text: assessmentConfig(undefined).breaker.texts.ApproachPivot }]);
    const s = await status();
    expect(s.breaker).toMatchObject({
      state: 'Open',
      reason: 'ApproachPivot',
      interventions: 1,
      consecutiveFailures: 5,
    });
    expect(s.breaker.history).toHaveLength(1);
    expect(s.breaker.history[0]).toMatchObject({
      type: 'ApproachPivot',
      delivered: true,
      result: 'Delivered',
      why: '5 consecutive failures (threshold 5), the last a TestFailure',
    });
    expect(s.assessment.pendingIntervention).toBeUndefined();
    const cond = (s.conditions as { type: string; status: string; reason: string }[]).find(
      (c) => c.type === 'BreakerOpen',
    );
    expect(cond).toMatchObject({ status: 'True', reason: 'ApproachPivot' });
    const events = (await store.list('Event', { namespace: 'default' })).items.map((e) => [e.type, e.reason]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['Warning', 'BreakerOpen'],
        ['Normal', 'InterventionDelivered'],
      ]),
    );
    // Comes back when the cooldown (10m from the tripping event) is over, to go half-open.
    expect(r).toEqual({ requeueAfterMs: Date.parse(s.breaker.openedTime!) + 600_000 - now + 50 });
    // Nothing new: nothing sent again.
    await reconciler().reconcile(key);
    expect(sent).toHaveLength(1);
  });

  const pendingOf = async (): Promise<PendingIntervention> => {
    // Decide without delivering: the session is not Running while it trips, then put the
    // decision back as pending, as a controller killed between its write and the send leaves it.
    append(failingSession());
    sendResult = new Error('must not be called');
    const s0 = structuredClone((await session()).status);
    policySpec = { selector: {}, autonomy: 'observe' };
    await reconciler().reconcile(key);
    const s = await status();
    const rec = s.breaker.history[0];
    policySpec = { selector: {} };
    sendResult = { delivered: true, reason: 'Confirmed', message: 'confirmed', retries: 1 };
    const pending: PendingIntervention = {
      id: rec.id,
      type: rec.type,
      why: rec.why,
      text: assessmentConfig(undefined).breaker.texts[rec.type],
      seq: rec.seq,
      decidedTime: rec.decidedTime,
      from: { seq: 0, offset: 0 },
    };
    await store.updateStatus({
      ...(await session()),
      status: {
        ...s0,
        ...structuredClone(s),
        breaker: { ...s.breaker, history: [], interventions: 0 },
        assessment: { ...s.assessment, pendingIntervention: pending },
      },
    });
    return pending;
  };

  it('a decision persisted before a crash (no attempt yet) is delivered once after the restart', async () => {
    const p = await pendingOf();
    await reconciler().reconcile(key);
    expect(sent.map((x) => x.text)).toEqual([p.text]);
    const s = await status();
    expect(s.breaker.history.map((h) => [h.id, h.result, h.retries])).toEqual([[p.id, 'Delivered', 1]]);
    expect(s.breaker.interventions).toBe(1);
    expect(s.assessment.pendingIntervention).toBeUndefined();
    await reconciler().reconcile(key);
    expect(sent).toHaveLength(1);
  });

  it('an attempt that reached the agent before the crash is not sent again', async () => {
    const p = await pendingOf();
    await setStatus({
      assessment: {
        ...(await status()).assessment,
        pendingIntervention: { ...p, attemptTime: new Date(now - 5000).toISOString() },
      },
    });
    // The agent's transcript got the text; the ingester put it into the log.
    append([
      {
        seq: 0,
        ts: new Date().toISOString(),
        run: 1,
        source: 'transcript',
        type: 'user_message',
        text: p.text,
        index: 1,
      },
    ]);
    await reconciler().reconcile(key);
    expect(sent).toEqual([]);
    const s = await status();
    expect(s.breaker.history.map((h) => [h.result, h.delivered])).toEqual([['DeliveredBeforeRestart', true]]);
    // The text came back as a user message: it is not scored as the user's frustration.
    expect(s.detector.counts.Frustration ?? 0).toBe(0);
  });

  it('an attempt not (yet) seen in the log waits out the grace period, then is sent once', async () => {
    const p = await pendingOf();
    await setStatus({
      assessment: {
        ...(await status()).assessment,
        pendingIntervention: { ...p, attemptTime: new Date(now - 10_000).toISOString() },
      },
    });
    const r = await reconciler().reconcile(key);
    expect(sent).toEqual([]);
    expect(r).toEqual({ requeueAfterMs: 20_000 });
    now += 20_000;
    await reconciler().reconcile(key);
    expect(sent.map((x) => x.text)).toEqual([p.text]);
    expect((await status()).breaker.history.map((h) => h.result)).toEqual(['Delivered']);
  });

  it('a failed send is recorded, not retried forever', async () => {
    sendResult = new Error('agentsession "fix-tests" is waiting for an answer');
    append(failingSession());
    await reconciler().reconcile(key);
    await reconciler().reconcile(key);
    expect(sent).toHaveLength(1);
    const s = await status();
    expect(s.breaker.history.map((h) => [h.delivered, h.result, h.message])).toEqual([
      [false, 'SendFailed', 'agentsession "fix-tests" is waiting for an answer'],
    ]);
    const events = (await store.list('Event', { namespace: 'default' })).items.map((e) => e.reason);
    expect(events).toContain('InterventionNotDelivered');
  });

  it('nothing is sent to a session that is not running, or under autonomy observe', async () => {
    await setStatus({ phase: 'Failed' });
    append(failingSession());
    await reconciler().reconcile(key);
    expect(sent).toEqual([]);
    expect((await status()).breaker.history.map((h) => h.result)).toEqual(['NotRunning']);
  });

  it('autonomy observe records the decision and sends nothing', async () => {
    policySpec = { selector: {}, autonomy: 'observe' };
    append(failingSession());
    await reconciler().reconcile(key);
    expect(sent).toEqual([]);
    const s = await status();
    expect(s.breaker.history.map((h) => [h.type, h.result])).toEqual([['ApproachPivot', 'Observe']]);
    expect(s.breaker.state).toBe('Open');
  });

  it('an intervention whose trip is older than the cooldown is not sent (catching up on a backlog)', async () => {
    const t = new TranscriptBuilder(new Date(Date.now() - 3 * 3_600_000).toISOString(), 1000).user('Make pytest pass.');
    for (let i = 0; i < 5; i++) t.bash('python3 -m pytest -q', toolOutput('pytest-fail'));
    append(t.events());
    await reconciler().reconcile(key);
    expect(sent).toEqual([]);
    expect((await status()).breaker.history.map((h) => h.result)).toEqual(['Stale']);
  });
});

describe('turns', () => {
  /** One turn: a prompt, a Bash call, the answer and Claude Code's Stop hook. */
  function oneTurn(): AgentEvent[] {
    return new TranscriptBuilder(new Date(Date.now() - 120_000).toISOString(), 1000)
      .user('Add a greeting.')
      .bash('printf hi > hello.txt', { output: '', exitCode: 0 })
      .endTurn('Added hello.txt.')
      .events();
  }

  it('the first turn of a run counts the git change since headBefore as progress', async () => {
    const head = 'a'.repeat(40);
    await setStatus({
      headBefore: head,
      git: { head, commits: 0, insertions: 1, deletions: 0, filesChanged: 1 },
    });
    append(oneTurn());
    await reconciler().reconcile(key);
    const s = await status();
    expect(s.assessment.turn.count).toBe(1);
    expect(s.breaker.noProgressTurns).toBe(0);
  });

  it('and a first turn that changed nothing since headBefore is a turn without progress', async () => {
    const head = 'a'.repeat(40);
    await setStatus({ headBefore: head, git: { head, commits: 0, insertions: 0, deletions: 0, filesChanged: 0 } });
    append(oneTurn());
    await reconciler().reconcile(key);
    expect((await status()).breaker.noProgressTurns).toBe(1);
  });

  it('a Stop read before its turn end_turn line waits for it, and asks to come back when its grace ends', async () => {
    const events = oneTurn();
    const end = events.findIndex((e) => e.type === 'assistant_message' && e.stopReason === 'end_turn');
    const stop = events.find((e) => e.type === 'hook' && e.hook === 'Stop')!;
    // The hooks were read first: the Stop is in the log, the transcript's last line not yet.
    append([...events.slice(0, end), stop]);
    now = Date.parse(stop.ts) + 1000;
    const r = await reconciler().reconcile(key);
    expect((await status()).assessment.turn.count).toBe(0);
    expect(r).toEqual({ requeueAfterMs: STOP_GRACE_MS - 1000 + 50 });
    // The transcript's line arrives: the turn ends once, at it.
    append([events[end]]);
    await reconciler().reconcile(key);
    expect((await status()).assessment.turn.count).toBe(1);
    expect((await status()).assessment.turn.stops).toBeUndefined();
  });

  it('a Stop whose transcript line never comes ends its turn when the grace is over', async () => {
    const events = oneTurn();
    const end = events.findIndex((e) => e.type === 'assistant_message' && e.stopReason === 'end_turn');
    const stop = events.find((e) => e.type === 'hook' && e.hook === 'Stop')!;
    append([...events.slice(0, end), stop]);
    now = Date.parse(stop.ts) + 1000;
    await reconciler().reconcile(key);
    now = Date.parse(stop.ts) + STOP_GRACE_MS;
    expect(await reconciler().reconcile(key)).toBeUndefined();
    expect((await status()).assessment.turn.count).toBe(1);
  });
});
