/**
 * The three writers of an AgentSession's status (api/status-fields.ts, client/status.ts) against a
 * real SQLite store: each writes only its own fields, a write by one does not undo another's made
 * in between, and a field or condition of another writer is refused.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../controller/api/kinds.js';
import { ownedBy, ownerOf, STATUS_FIELDS } from '../../../controller/api/status-fields.js';
import { API_VERSION, type Condition } from '../../../controller/api/types.js';
import { ApiError } from '../../../controller/api/errors.js';
import type { EventObject } from '../../../controller/api/event.js';
import type { Resource } from '../../../controller/api/types.js';
import { type EventNote, EventRecorder } from '../../../controller/client/events.js';
import { writeOwnedStatus, writeStatusMerged } from '../../../controller/client/status.js';
import { SqliteStore } from '../../../controller/store/sqlite.js';
import { FENCED } from '../../../controller/store/store.js';

const T0 = '2026-03-01T10:00:00.000Z';
const cond = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: T0,
});

let dir: string;
let store: SqliteStore;
let session: AgentSession;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-status-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
  const created = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { agentRef: 'a', prompt: 'p' },
  });
  session = (await store.updateStatus({
    ...created,
    status: { phase: 'Running', run: 1, conditions: [cond('Ready', 'True', 'Running')] },
  })) as AgentSession;
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reread = async () => (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's' })) as AgentSession;

describe('status field managers', () => {
  it('declares every status field exactly once (conditions are shared)', () => {
    const all = Object.values(STATUS_FIELDS).flat();
    expect(new Set(all).size).toBe(all.length);
    expect(ownerOf('breaker')).toBe('assessment');
    expect(ownerOf('lastEvaluation')).toBe('judge');
    expect(ownerOf('phase')).toBe('session');
    expect(ownerOf('conditions')).toBeUndefined();
  });

  it('writers that read the same object keep each other’s fields and conditions', async () => {
    const read = session;
    await writeOwnedStatus(store, read, 'judge', {
      lastEvaluation: {
        name: 's-run-1',
        run: 1,
        score: 2,
        recommendation: 'escalate',
        outcome: 'failure',
        evaluatedAt: T0,
      },
      conditions: [...read.status!.conditions!, cond('Escalated', 'True', 'JudgeEscalated')],
    });
    // The assessment writer still holds the object as read before the judge wrote (a conflict, then a merge).
    await writeOwnedStatus(store, read, 'assessment', {
      breaker: {
        state: 'Closed',
        trips: 0,
        consecutiveFailures: 1,
        correctionTimes: [],
        frustrationEma: 0.1,
        noProgressTurns: 0,
        turnFailures: 0,
        interventions: 0,
        history: [],
      },
      conditions: [...read.status!.conditions!, cond('BreakerOpen', 'False', 'Closed')],
    });
    const s = (await reread()).status!;
    expect(s.lastEvaluation?.name).toBe('s-run-1');
    expect(s.breaker?.consecutiveFailures).toBe(1);
    expect(s.phase).toBe('Running');
    expect(s.conditions?.map((c) => c.type)).toEqual(['Ready', 'Escalated', 'BreakerOpen']);
  });

  it('a session write from a whole status touches only its fields: a field it dropped is removed', async () => {
    await writeOwnedStatus(store, session, 'judge', {
      lastEvaluation: { name: 'e', run: 1, score: 4, recommendation: 'complete', outcome: 'success', evaluatedAt: T0 },
    });
    const whole = { ...structuredClone(session.status!), phase: 'Succeeded' as const, run: undefined };
    await writeOwnedStatus(store, session, 'session', ownedBy('session', whole));
    const s = (await reread()).status!;
    expect(s.phase).toBe('Succeeded');
    expect(s).not.toHaveProperty('run');
    expect(s.lastEvaluation?.name).toBe('e');
  });

  it('refuses a field or a condition type of another writer', async () => {
    // Past the types on purpose: the runtime check is what stops a writer that builds its patch dynamically.
    await expect(writeOwnedStatus(store, session, 'judge', { phase: 'Failed' } as never)).rejects.toThrow(
      /status\.phase of AgentSession s: owned by the session writer, not written by the judge writer/,
    );
    await expect(
      writeOwnedStatus(store, session, 'assessment', {
        conditions: [...session.status!.conditions!, cond('JudgeFailed', 'True', 'Timeout')],
      }),
    ).rejects.toThrow(/conditions JudgeFailed of AgentSession s: the assessment writer writes only BreakerOpen/);
    expect((await reread()).status).toEqual(session.status);
  });

  it('the untyped merged write still works for the other kinds and the runtime', async () => {
    const mine = { ...structuredClone(session.status!), conditions: [cond('Reconciled', 'True', 'Reconciled')] };
    const out = await writeStatusMerged(store, session, mine);
    expect(out?.status?.conditions?.map((c) => c.type)).toEqual(['Reconciled']);
  });
});

describe('a status write with the Events of its transition', () => {
  const recorder = () => new EventRecorder(store);
  const events = async () => (await store.list('Event', { namespace: 'default' })).items as EventObject[];
  const started = { type: 'Normal', reason: 'Started', message: 'Started run 2' } as const;

  it('writes them in the same transaction: both or neither', async () => {
    await writeOwnedStatus(store, session, 'session', { phase: 'Stopping' }, 8, {
      recorder: recorder(),
      events: [started],
    });
    expect((await reread()).status?.phase).toBe('Stopping');
    expect((await events()).map((e) => [e.reason, e.count, e.involvedObject.name])).toEqual([['Started', 1, 's']]);

    // A write that fails (here: a fence no retry helps) leaves neither the status nor the Event.
    const failing = Object.create(store) as SqliteStore;
    failing.txn = async () => {
      throw new ApiError('Conflict', 'fenced', [{ field: 'fence', message: `${FENCED}: lease x` }]);
    };
    const warn = { type: 'Warning', reason: 'Escalated', message: 'gave up' } as const;
    const write = writeOwnedStatus(failing, await reread(), 'session', { phase: 'Failed' }, 8, {
      recorder: new EventRecorder(failing),
      events: [warn],
    });
    await expect(write).rejects.toThrow('fenced');
    expect((await reread()).status?.phase).toBe('Stopping');
    expect((await events()).map((e) => e.reason)).toEqual(['Started']);
  });

  it('counts an Event told again (twice in one write: 2), and writes Events alone when nothing changed', async () => {
    const w = { recorder: recorder(), events: [started, started] };
    await writeOwnedStatus(store, session, 'session', { phase: 'Stopping' }, 8, w);
    expect((await events()).map((e) => e.count)).toEqual([2]);
    const same = await reread();
    const rv = same.metadata.resourceVersion;
    await writeOwnedStatus(store, same, 'session', { phase: 'Stopping' }, 8, {
      recorder: recorder(),
      events: [started],
    });
    expect((await reread()).metadata.resourceVersion).toBe(rv);
    expect((await events()).map((e) => e.count)).toEqual([3]);
  });

  it('retries from a fresh read when another writer wrote the session or the same Event meanwhile', async () => {
    const r = recorder();
    // Another process records the same Event between this writer's read of it and its transaction.
    const racing = {
      ops: async (obj: Resource, notes: readonly EventNote[]) => {
        const ops = await r.ops(obj, notes);
        if (!raced) {
          raced = true;
          await r.record(obj, started.type, started.reason, started.message);
        }
        return ops;
      },
    };
    let raced = false;
    await store.updateStatus({ ...session, status: { ...session.status, assessment: { state: 'ok' } } });
    await writeOwnedStatus(store, session, 'session', { phase: 'Stopping' }, 8, {
      recorder: racing,
      events: [started],
    });
    const now = await reread();
    expect(now.status).toMatchObject({ phase: 'Stopping', assessment: { state: 'ok' } });
    expect((await events()).map((e) => e.count)).toEqual([2]);
  });
});
