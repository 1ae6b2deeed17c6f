/**
 * Decisions that wait for a person (issue 25 item 2), against a real SQLite store in process: a
 * PendingApproval Decision is told (DecisionPending, with the commands that answer it), does not
 * wait forever (approval.timeout → Expired, its default action taken, DecisionExpired told), and a
 * person's later `orchctl restart session` supersedes an older stop. At the observe level a think's
 * recommendations are one AutopilotNotice. The clock is an input (`now`), so no test sleeps.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Autopilot, AutopilotSpec, Decision } from '../../controller/api/autopilot.js';
import { RESTARTED_AT_ANNOTATION } from '../../controller/api/autopilot.js';
import type { EventObject } from '../../controller/api/event.js';
import type { Project } from '../../controller/api/project.js';
import type { AgentSession } from '../../controller/api/session.js';
import { API_VERSION } from '../../controller/api/types.js';
import type { Planner } from '../../controller/reconcilers/autopilot/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { reconcilerFromStore } from '../support/autopilot-store.js';

const T0 = Date.parse('2026-11-24T02:00:00Z');
const MIN = 60_000;
const iso = (t: number) => new Date(t).toISOString();

let dir: string;
let store: SqliteStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-ap-approval-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The planner's proposal is the input here: stop the long-running session `s` of project `p`. */
const stopper: Planner = {
  name: 'fixed',
  plan: async () => ({
    proposals: [{ action: 'stop', project: 'p', session: 's', reason: 'it has run all night', priority: 2 }],
  }),
};

async function seed(spec: AutopilotSpec) {
  const p = await store.create({
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name: 'p', namespace: 'default' },
    spec: { path: dir },
  } as Project);
  await store.updateStatus({ ...p, status: { lastActivity: iso(T0 - MIN), activeSessions: 1 } });
  const s = await store.create({
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default' },
    spec: { projectRef: 'p', prompt: 'work' },
  } as AgentSession);
  await store.updateStatus({ ...s, status: { phase: 'Running', run: 1, startTime: iso(T0 - 300 * MIN) } });
  await store.create({
    apiVersion: API_VERSION,
    kind: 'Autopilot',
    metadata: { name: 'ap', namespace: 'default' },
    spec: { projectSelector: {}, ...spec },
  } as Autopilot);
}

/** One reconcile at `now` by a reconciler reading the store as it is now. */
const reconcileAt = async (now: number) =>
  (await reconcilerFromStore(store, { plannerFor: () => stopper, now: () => now })).reconcile('default/ap');
const decisions = async () => (await store.list('Decision')).items as Decision[];
const events = async (reason: string) =>
  ((await store.list('Event')).items as EventObject[]).filter((e) => e.reason === reason);
const session = async () =>
  (await store.get({ kind: 'AgentSession', namespace: 'default', name: 's' })) as AgentSession;

describe('a Decision that waits for a person', () => {
  it('records DecisionPending about the project, with the commands that answer it and its expiry', async () => {
    await seed({ autonomyLevel: 'cautious', approval: { timeout: '30m' } });
    await reconcileAt(T0);
    const [d] = await decisions();
    expect(d.status).toMatchObject({ phase: 'PendingApproval', expiresAt: iso(T0 + 30 * MIN) });
    const [e, ...more] = await events('DecisionPending');
    expect(more).toEqual([]);
    expect(e).toMatchObject({ type: 'Normal', involvedObject: { kind: 'Project', name: 'p' } });
    expect(e.message).toContain(`orchctl approve decision ${d.metadata.name}`);
    expect(e.message).toContain(`orchctl reject decision ${d.metadata.name}`);
    expect(e.message).toContain('stop session s (project p): it has run all night');
    // The next think does not ask again while it waits (one Decision, one Event).
    await reconcileAt(T0 + 6 * MIN);
    expect(await decisions()).toHaveLength(1);
    expect(await events('DecisionPending')).toHaveLength(1);
  });

  it('unanswered past approval.timeout: Expired, a stop proceeds (the default), DecisionExpired told', async () => {
    await seed({ autonomyLevel: 'cautious', approval: { timeout: '30m' } });
    await reconcileAt(T0);
    const r = await reconcileAt(T0 + 10 * MIN);
    // Woken for the expiry even though the next think is later.
    expect(r?.requeueAfterMs).toBeLessThanOrEqual(20 * MIN);
    expect((await session()).spec?.desiredState).toBeUndefined();
    await reconcileAt(T0 + 30 * MIN);
    const [d] = await decisions();
    expect(d.status).toMatchObject({ phase: 'Expired', executedAt: iso(T0 + 30 * MIN) });
    expect(d.status?.message).toBe('nobody answered within 30m: proceeded (onTimeout proceed)');
    expect((await session()).spec?.desiredState).toBe('Stopped');
    const [e] = await events('DecisionExpired');
    expect(e).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Project', name: 'p' } });
    expect(e.message).toContain('proceeded');
  });

  it('with onTimeout reject it is Expired and nothing is changed', async () => {
    await seed({ autonomyLevel: 'cautious', approval: { timeout: '30m', onTimeout: { stop: 'reject' } } });
    await reconcileAt(T0);
    await reconcileAt(T0 + 31 * MIN);
    const [d] = await decisions();
    expect(d.status).toMatchObject({
      phase: 'Expired',
      message: 'nobody answered within 30m: dropped (onTimeout reject)',
    });
    expect(d.status?.executedAt).toBeUndefined();
    expect((await session()).spec?.desiredState).toBeUndefined();
    expect(await events('DecisionExpired')).toHaveLength(1);
  });

  it("a person's later orchctl restart supersedes it: approving the old stop stops nothing, says why", async () => {
    await seed({ autonomyLevel: 'cautious' });
    await reconcileAt(T0);
    const [d] = await decisions();
    const s = await session();
    await store.update({
      ...s,
      metadata: { ...s.metadata, annotations: { [RESTARTED_AT_ANNOTATION]: iso(T0 + 2 * MIN) } },
    });
    await store.update({ ...d, spec: { ...d.spec, approval: { verdict: 'Approved', at: iso(T0 + 3 * MIN) } } });
    await reconcileAt(T0 + 3 * MIN);
    const [settled] = await decisions();
    expect(settled.status?.phase).toBe('Superseded');
    expect(settled.status?.message).toContain('was restarted at 2026-11-24T02:02:00.000Z, after the decision');
    expect((await session()).spec?.desiredState).toBeUndefined();
  });

  it("at the observe level a think's recommendations reach a person as one AutopilotNotice (tier 3)", async () => {
    await seed({ autonomyLevel: 'observe' });
    await reconcileAt(T0);
    const [d] = await decisions();
    expect(d.status?.phase).toBe('Logged');
    const [e, ...more] = await events('AutopilotNotice');
    expect(more).toEqual([]);
    expect(e).toMatchObject({ type: 'Normal', involvedObject: { kind: 'Autopilot', name: 'ap' } });
    expect(e.message).toBe(
      'observe level, recommended (nothing done): ' +
        `stop session s (project p): it has run all night (${d.metadata.name})`,
    );
  });
});
