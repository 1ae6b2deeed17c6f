/** Event TTL cleanup (reconcilers/housekeeping) over a real SQLite store in a temp directory. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { API_VERSION, type Resource } from '../../../../controller/api/types.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import {
  AUTOPILOT_SESSIONS,
  EVALUATIONS,
  EVENTS,
  HousekeepingReconciler,
} from '../../../../controller/reconcilers/housekeeping/reconciler.js';
import { Informer } from '../../../../controller/runtime/informer.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-housekeeping-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const session: Resource = {
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name: 's', namespace: 'default' },
};

async function eventNames(): Promise<string[]> {
  return (await store.list('Event')).items.map((e) => e.metadata.name).sort();
}

/** An Event as another process left it: first seen `firstAgeMs` ago, last seen `ageMs` ago. */
async function oldEvent(name: string, ageMs: number, firstAgeMs = ageMs): Promise<void> {
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  await store.create({
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { apiVersion: API_VERSION, kind: 'AgentSession', name: 's', namespace: 'default' },
    reason: 'Old',
    message: 'long ago',
    type: 'Normal',
    count: 1,
    firstTimestamp: ago(firstAgeMs),
    lastTimestamp: ago(ageMs),
  });
}

it('deletes Events last seen longer ago than the TTL (1 h by default) and keeps the rest', async () => {
  await new EventRecorder(store).record(session, 'Normal', 'Started', 'just now');
  const [fresh] = await eventNames();
  await oldEvent('s.two-hours', 2 * HOUR);
  await oldEvent('s.half-hour', HOUR / 2, 3 * HOUR); // first seen long ago, again half an hour ago

  await new HousekeepingReconciler({ store }).reconcile(EVENTS);
  expect(await eventNames()).toEqual([fresh, 's.half-hour'].sort());

  await new HousekeepingReconciler({ store, eventTtlMs: 10 * 60_000 }).reconcile(EVENTS);
  expect(await eventNames()).toEqual([fresh]);

  await new HousekeepingReconciler({ store, now: () => Date.now() + 2 * HOUR }).reconcile(EVENTS);
  expect(await eventNames()).toEqual([]);
});

it('leaves other kinds alone, and two passes racing over the same Events both succeed', async () => {
  await oldEvent('s.old', 2 * HOUR);
  await store.create({ ...session, spec: {} });
  const r = new HousekeepingReconciler({ store });
  await Promise.all([r.reconcile(EVENTS), r.reconcile(EVENTS)]); // racing passes: NotFound is not a failure
  expect(await eventNames()).toEqual([]);
  expect((await store.list('AgentSession')).items.map((o) => o.metadata.name)).toEqual(['s']);
});

/** An Evaluation of run `run` of session `s`, as the judge leaves it (phase as given). */
async function evaluation(s: string, run: number, phase: string): Promise<void> {
  const created = await store.create({
    apiVersion: API_VERSION,
    kind: 'Evaluation',
    metadata: { name: `${s}-run-${run}`, namespace: 'default' },
    spec: { sessionRef: s, run, trigger: 'SessionEnded' },
  });
  await store.updateStatus({ ...created, status: { phase } });
}

const evaluationNames = async () => (await store.list('Evaluation')).items.map((e) => e.metadata.name).sort();

it("keeps a session's newest finished Evaluations and every one still judged, deletes the older", async () => {
  for (let run = 1; run <= 8; run++)
    await evaluation('a', run, run === 2 ? 'Judging' : run === 3 ? 'Failed' : 'Judged');
  await evaluation('b', 1, 'Judged'); // another session's: under its own bound
  await new HousekeepingReconciler({ store, retention: { evaluationsPerSession: 3 } }).reconcile(EVALUATIONS);
  expect(await evaluationNames()).toEqual(['a-run-2', 'a-run-6', 'a-run-7', 'a-run-8', 'b-run-1']);
});

it('never keeps fewer than the two newest Evaluations (the judge would judge those runs again)', async () => {
  for (let run = 1; run <= 4; run++) await evaluation('a', run, 'Judged');
  await new HousekeepingReconciler({ store, retention: { evaluationsPerSession: 1 } }).reconcile(EVALUATIONS);
  expect(await evaluationNames()).toEqual(['a-run-3', 'a-run-4']);
});

it('holds Events and Evaluations to their bounds after many rounds of insertions and sweeps', async () => {
  let clock = Date.now();
  const r = new HousekeepingReconciler({ store, now: () => clock, retention: { evaluationsPerSession: 5 } });
  const counts: number[] = [];
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < 20; i++) await oldEvent(`s.r${round}-${i}`, Date.now() - clock);
    await evaluation('a', round + 1, 'Judged');
    clock += 20 * 60_000; // a sweep every 20 minutes of a 1-hour TTL: at most 3 rounds' Events stay
    await r.reconcile(EVENTS);
    await r.reconcile(EVALUATIONS);
    counts.push((await store.list('Event')).items.length);
  }
  expect(Math.max(...counts)).toBeLessThanOrEqual(3 * 20);
  expect(counts.at(-1)).toBe(3 * 20);
  expect((await store.list('Evaluation')).items).toHaveLength(5);
});

/** A session as the autopilot (`autopilot` set) or a person left it, completed `agoMs` ago in `phase`. */
async function finished(name: string, phase: string, agoMs: number, autopilot?: string): Promise<void> {
  const o = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', labels: autopilot ? { 'orchctl.io/autopilot': autopilot } : {} },
    spec: { agent: { command: ['true'] }, workdir: dir },
  });
  await store.updateStatus({
    ...o,
    status: { phase, run: 1, completionTime: new Date(Date.now() - agoMs).toISOString() },
  });
}

it("deletes an Autopilot's finished sessions past their TTL; keeps people's, running and awaited ones", async () => {
  await finished('ap-old', 'Succeeded', 2 * HOUR, 'ap');
  await finished('ap-failed', 'Failed', 2 * HOUR, 'ap');
  await finished('ap-young', 'Succeeded', HOUR / 2, 'ap');
  await finished('ap-running', 'Running', 2 * HOUR, 'ap');
  await finished('ap-awaited', 'Failed', 2 * HOUR, 'ap');
  await finished('mine', 'Succeeded', 2 * HOUR);
  const d = await store.create({
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: { name: 'ap-1-0', namespace: 'default' },
    spec: { autopilot: 'ap', think: 1, action: 'restart', target: { session: 'ap-awaited' }, reason: 'retry' },
  });
  await store.updateStatus({ ...d, status: { phase: 'PendingApproval' } });
  await new HousekeepingReconciler({ store, retention: { autopilotSessionTtlMs: HOUR } }).reconcile(AUTOPILOT_SESSIONS);
  const left = (await store.list('AgentSession')).items.map((s) => s.metadata.name).sort();
  expect(left).toEqual(['ap-awaited', 'ap-running', 'ap-young', 'mine']);
});

it('deletes every expired Event in one pass, however many (a cap per pass falls behind the rate)', async () => {
  await store.txn(
    Array.from({ length: 1200 }, (_, i) => ({
      op: 'create' as const,
      object: {
        apiVersion: API_VERSION,
        kind: 'Event',
        metadata: { name: `s.old-${i}`, namespace: 'default' },
        involvedObject: { apiVersion: API_VERSION, kind: 'AgentSession', name: 's', namespace: 'default' },
        reason: 'Old',
        message: `long ago ${i}`,
        type: 'Normal',
        count: 1,
        lastTimestamp: new Date(Date.now() - 2 * HOUR).toISOString(),
      },
    })),
  );
  await new HousekeepingReconciler({ store }).reconcile(EVENTS);
  expect(await eventNames()).toEqual([]);
});

it('lists Events only once one can have expired: a pass before the oldest kept one is due reads nothing', async () => {
  await oldEvent('s.ten-minutes', 10 * 60_000);
  let now = Date.now();
  const r = new HousekeepingReconciler({ store, now: () => now });
  const lists = vi.spyOn(store, 'list');
  const eventLists = () => lists.mock.calls.filter(([kind]) => kind === 'Event').length;
  await r.reconcile(EVENTS);
  expect(eventLists()).toBe(1);
  for (let i = 1; i <= 3; i++) {
    now += 60_000; // the minute sweeps: the oldest Event is due 50 minutes after the first
    await r.reconcile(EVENTS);
  }
  expect(eventLists()).toBe(1);
  await oldEvent('s.new', 0);
  now += 48 * 60_000;
  await r.reconcile(EVENTS);
  expect(eventLists()).toBe(2);
  expect(await eventNames()).toEqual(['s.new']);
  vi.restoreAllMocks();
});

it('an Autopilot sweep reads no store while the cache shows none to delete; else the store decides', async () => {
  await finished('mine', 'Succeeded', 2 * HOUR);
  await finished('ap-young', 'Succeeded', HOUR / 2, 'ap');
  const sessions = new Informer(store, 'AgentSession');
  await sessions.start();
  try {
    const r = new HousekeepingReconciler({ store, sessions, retention: { autopilotSessionTtlMs: HOUR } });
    const lists = vi.spyOn(store, 'list');
    for (let i = 0; i < 3; i++) await r.reconcile(AUTOPILOT_SESSIONS);
    expect(lists).not.toHaveBeenCalled();

    await finished('ap-old', 'Succeeded', 2 * HOUR, 'ap');
    for (let i = 0; i < 100 && !sessions.get('default', 'ap-old')?.status; i++)
      await new Promise((f) => setTimeout(f, 20));
    await r.reconcile(AUTOPILOT_SESSIONS);
    expect(lists.mock.calls.map(([kind]) => kind).sort()).toEqual(['AgentSession', 'Decision']);
    expect((await store.list('AgentSession')).items.map((s) => s.metadata.name).sort()).toEqual(['ap-young', 'mine']);
  } finally {
    sessions.stop();
    vi.restoreAllMocks();
  }
});
