/**
 * The SessionPolicy reconciler against a real SQLite store: a budget crossing is told once, even
 * when a pass runs on an informer copy that does not show this controller's own write yet (the
 * next session write wakes the policy before the watch delivers the crossing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventObject } from '../../../../controller/api/event.js';
import type { AgentSession, SessionPolicy } from '../../../../controller/api/kinds.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import { EventRecorder } from '../../../../controller/client/events.js';
import { PolicyReconciler } from '../../../../controller/reconcilers/policy/reconciler.js';
import { SqliteStore } from '../../../../controller/store/sqlite.js';

const NOW = Date.parse('2026-11-24T14:30:00Z');
let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-policy-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const session = (tokens: number): AgentSession =>
  ({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 'a', namespace: 'default', labels: { team: 'a' } },
    spec: {},
    status: { usage: { hourly: [{ hour: '2026-11-24T14:00:00.000Z', tokens }] } },
  }) as unknown as AgentSession;

describe('PolicyReconciler', () => {
  it('records BudgetExceeded once per crossing when a pass reads a stale copy of the policy', async () => {
    const created = (await store.create({
      apiVersion: API_VERSION,
      kind: 'SessionPolicy',
      metadata: { name: 'team', namespace: 'default' },
      spec: { selector: { matchLabels: { team: 'a' } }, budget: { maxTokens: 1000, window: '1h' } },
    })) as SessionPolicy;
    // The informer still holds the copy from before the crossing, whatever was written since.
    const stale = created;
    let tokens = 5000;
    const r = new PolicyReconciler({
      store,
      policies: { get: () => stale, list: () => [stale] },
      sessions: { list: () => [session(tokens)] },
      recorder: new EventRecorder(store),
      now: () => NOW,
    });
    await r.reconcile('default/team');
    await r.reconcile('default/team');
    // The agent went on meanwhile: the next stale pass has other figures to write, and still no crossing to tell.
    tokens = 6000;
    await r.reconcile('default/team');
    const stored = (await store.get({ kind: 'SessionPolicy', namespace: 'default', name: 'team' })) as SessionPolicy;
    expect(stored.status?.budget).toMatchObject({ exceeded: true, usedTokens: 6000 });
    const events = (await store.list('Event')).items as EventObject[];
    const exceeded = events.filter((e) => e.reason === 'BudgetExceeded');
    expect(exceeded).toHaveLength(1);
    expect(exceeded[0].count ?? 1).toBe(1);
  });
});
