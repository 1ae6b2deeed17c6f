/**
 * The planner's nextThinkIn schedules the autopilot's next think, within bounds (docs/autopilot.md):
 * the reconciler on a real SQLite store, its planner answering a chosen nextThinkIn.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Autopilot } from '../../controller/api/autopilot.js';
import type { Project } from '../../controller/api/project.js';
import { API_VERSION } from '../../controller/api/types.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { reconcilerFromStore } from '../support/autopilot-store.js';

const MIN = 60_000;
let dir: string;
let store: SqliteStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-ap-next-'));
  store = new SqliteStore(path.join(dir, 'state.db'));
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One think with a planner answering `nextThinkIn`; the delay the Autopilot's status then schedules. */
async function thinkWith(nextThinkIn: string | undefined): Promise<number> {
  const p: Project = {
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name: 'p', namespace: 'default' },
    spec: { path: dir },
  };
  await store.create(p);
  await store.create({
    apiVersion: API_VERSION,
    kind: 'Autopilot',
    metadata: { name: 'ap', namespace: 'default' },
    spec: { autonomyLevel: 'observe', projectSelector: {}, interval: '10m', sessionTemplate: { agentRef: 'sim' } },
  } as Autopilot);
  const r = await reconcilerFromStore(store, {
    plannerFor: () => ({
      name: 'fixed',
      plan: async () => ({ proposals: [], summary: 'nothing', ...(nextThinkIn ? { nextThinkIn } : {}) }),
    }),
  });
  await r.reconcile('default/ap');
  const ap = (await store.get({ kind: 'Autopilot', namespace: 'default', name: 'ap' })) as Autopilot;
  expect(ap.status?.lastThink?.error).toBeUndefined();
  return Date.parse(ap.status!.nextThinkTime!) - Date.parse(ap.status!.lastThink!.time);
}

describe("the planner's nextThinkIn", () => {
  it('schedules the next think when the planner asks for it within bounds', async () => {
    expect(await thinkWith('3m')).toBe(3 * MIN);
  });
  it('is clamped to 4 intervals when the planner asks for a later think', async () => {
    expect(await thinkWith('24h')).toBe(40 * MIN);
  });
  it('is clamped to 1 minute when the planner asks for a sooner think', async () => {
    expect(await thinkWith('5s')).toBe(MIN);
  });
  it('keeps the interval when the planner gives none', async () => {
    expect(await thinkWith(undefined)).toBe(10 * MIN);
  });
});
