/**
 * The autopilot's just-in-time checks against a real SQLite store, in process (no tmux: what is
 * under test is which objects get written). Each reconciler reads "caches" loaded from the store
 * at a moment the test chooses, so a test can put a person's write or a second controller exactly
 * between a think and its write.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Autopilot, Decision } from '../../controller/api/autopilot.js';
import type { Project } from '../../controller/api/project.js';
import type { AgentSession } from '../../controller/api/session.js';
import { API_VERSION } from '../../controller/api/types.js';
import { HeuristicPlanner } from '../../controller/reconcilers/autopilot/planner/heuristic.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { reconcilerFromStore } from '../support/autopilot-store.js';

const DAY = 86_400_000;

let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-ap-race-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The reconciler on this test's store (or a wrapper of it), reading a snapshot taken now. */
const reconcilerOn = (beforeWrite?: (ap: Autopilot) => Promise<void>, via: SqliteStore = store) =>
  reconcilerFromStore(via, { plannerFor: () => new HeuristicPlanner(), beforeWrite });

/** Resolves once `n` callers have arrived: both reconcilers have planned before either writes. */
function barrier(n: number) {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((r) => {
    release = r;
  });
  return async () => {
    if (++arrived === n) release();
    await all;
  };
}

async function seed(autopilots: string[] = ['ap']) {
  const old = new Date(Date.now() - 10 * DAY).toISOString();
  const p: Project = {
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name: 'p', namespace: 'default' },
    spec: { path: dir, priority: 5 },
  };
  const created = await store.create(p);
  await store.updateStatus({ ...created, status: { lastActivity: old, activeSessions: 0 } });
  for (const name of autopilots)
    await store.create({
      apiVersion: API_VERSION,
      kind: 'Autopilot',
      metadata: { name, namespace: 'default' },
      spec: {
        autonomyLevel: 'full',
        projectSelector: {},
        guardrails: { stalenessDays: 3 },
        sessionTemplate: { agentRef: 'sim' },
      },
    } as Autopilot);
}

const personSession = (): AgentSession => ({
  apiVersion: API_VERSION,
  kind: 'AgentSession',
  metadata: { name: 'by-hand', namespace: 'default' },
  spec: { projectRef: 'p', prompt: 'I will do it myself' },
});

const sessionsOf = async (project: string) =>
  ((await store.list('AgentSession')).items as AgentSession[]).filter((s) => s.spec?.projectRef === project);
const decisions = async () => (await store.list('Decision')).items as Decision[];

describe('autopilot execution under races', () => {
  it('starts the stale project when nothing interferes (the baseline of the races below)', async () => {
    await seed();
    await (await reconcilerOn()).reconcile('default/ap');
    const sessions = await sessionsOf('p');
    expect(sessions).toHaveLength(1);
    const [d] = await decisions();
    expect(d.status).toMatchObject({ phase: 'Executed', result: { session: sessions[0].metadata.name } });
    expect(sessions[0].metadata.labels).toMatchObject({ 'orchctl.io/decision': d.metadata.name });
    expect(sessions[0].spec?.prompt).toContain('Resume work on the project "p"');
  });

  it('a person applies a session for P between the think and its execution → Superseded, one session', async () => {
    await seed();
    const r = await reconcilerOn(async () => {
      await store.create(personSession());
    });
    await r.reconcile('default/ap');
    const sessions = await sessionsOf('p');
    expect(sessions.map((s) => s.metadata.name)).toEqual(['by-hand']);
    const [d] = await decisions();
    expect(d.spec?.action).toBe('start');
    expect(d.status?.phase).toBe('Superseded');
    expect(d.status?.message).toContain('by-hand');
  });

  it('two controllers think the same think of one Autopilot at once → one writes, one session', async () => {
    await seed();
    const both = barrier(2);
    const a = await reconcilerOn(both);
    const b = await reconcilerOn(both);
    await Promise.all([a.reconcile('default/ap'), b.reconcile('default/ap')]);
    expect(await sessionsOf('p')).toHaveLength(1);
    expect(await decisions()).toHaveLength(1);
    const ap = (await store.get({ kind: 'Autopilot', namespace: 'default', name: 'ap' })) as Autopilot;
    expect(ap.status?.thinks).toBe(1);
  });

  it('two Autopilots selecting the same project race → one session, the other decision Superseded', async () => {
    await seed(['ap', 'bp']);
    const both = barrier(2);
    const a = await reconcilerOn(both);
    const b = await reconcilerOn(both);
    await Promise.all([a.reconcile('default/ap'), b.reconcile('default/bp')]);
    expect(await sessionsOf('p')).toHaveLength(1);
    const phases = (await decisions()).map((d) => d.status?.phase).sort();
    expect(phases).toEqual(['Executed', 'Superseded']);
  });

  it('many rounds of the same races never make a second session', async () => {
    for (let round = 0; round < 10; round++) {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-ap-race-'));
      store = new SqliteStore(path.join(dir, 'state.db'));
      await seed(['ap', 'bp', 'cp']);
      const rs = await Promise.all([reconcilerOn(), reconcilerOn(), reconcilerOn()]);
      await Promise.all([
        rs[0].reconcile('default/ap'),
        rs[1].reconcile('default/bp'),
        rs[2].reconcile('default/cp'),
        store.create(personSession()).catch(() => undefined),
      ]);
      expect(await sessionsOf('p')).toHaveLength(1);
    }
  });

  it('costs: a think reads the store twice and writes once; a reconcile with nothing due touches none', async () => {
    await seed();
    const calls: string[] = [];
    const counting = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return v.apply(target, args);
        };
      },
    });
    const first = await reconcilerOn(undefined, counting);
    calls.length = 0; // filling its caches is the informers' cost, not the think's
    await first.reconcile('default/ap');
    expect(calls.sort()).toEqual(['list', 'list', 'txn']);
    calls.length = 0;
    // The caches now hold the think it wrote: nothing is due until the interval.
    const r = await reconcilerOn(undefined, counting);
    calls.length = 0;
    const result = await r.reconcile('default/ap');
    expect(calls).toEqual([]);
    expect(result?.requeueAfterMs).toBeGreaterThan(60_000);
  });

  it('a think waiting for its planner ends at shutdown and writes nothing', async () => {
    await seed();
    let asked!: () => void;
    const waiting = new Promise<void>((r) => {
      asked = r;
    });
    const r = await reconcilerFromStore(store, {
      plannerFor: () => ({
        name: 'slow',
        plan: (_input, signal) =>
          new Promise((_resolve, reject) => {
            asked();
            signal?.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
          }),
      }),
    });
    const done = r.reconcile('default/ap');
    await waiting;
    r.stop();
    await done;
    expect(await decisions()).toEqual([]);
    const ap = (await store.get({ kind: 'Autopilot', namespace: 'default', name: 'ap' })) as Autopilot;
    expect(ap.status?.thinks).toBeUndefined();
  });
});
