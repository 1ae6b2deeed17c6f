/**
 * The project reconciler against the real SQLite store, real informers and a real git repository:
 * a repository idle for 5 days is Stale; a running session makes it Active; a new commit makes it
 * Recent; a reconcile with nothing changed spawns no git and writes nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Project } from '../../controller/api/project.js';
import type { Resource } from '../../controller/api/types.js';
import { GitObserver } from '../../controller/observers/git.js';
import { ProjectReconciler } from '../../controller/reconcilers/project/reconciler.js';
import { Informer } from '../../controller/runtime/informer.js';
import { SqliteStore } from '../../controller/store/sqlite.js';
import { git } from '../support/controller-harness.js';
import { until } from '../support/until.js';

const DAY = 86_400_000;
let dir: string;
let repo: string;
let store: SqliteStore;
const informers: Informer[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-project-'));
  repo = path.join(dir, 'shop');
  fs.mkdirSync(repo);
  store = new SqliteStore(path.join(dir, 'state.db'), { pollIntervalMs: 10 });
});

afterAll(async () => {
  for (const i of informers) i.stop();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function commit(file: string, when: Date) {
  fs.writeFileSync(path.join(repo, file), file);
  await git(repo, ['add', '.']);
  const date = when.toISOString();
  await git(repo, ['commit', '-qm', `add ${file}`, '--date', date]);
}

const get = async () => (await store.get({ kind: 'Project', namespace: 'default', name: 'shop' })) as Project;
const stale = (p: Project) => p.status?.conditions?.find((c) => c.type === 'Stale');

it('reports lastActivity, activeSessions and Stale from the repository and the sessions', async () => {
  await git(repo, ['init', '-q', '-b', 'main']);
  const fiveDaysAgo = new Date(Math.floor((Date.now() - 5 * DAY) / 1000) * 1000);
  await commit('a.txt', fiveDaysAgo);
  const meta = (name: string) => ({ name, namespace: 'default' });
  await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Project',
    metadata: meta('shop'),
    spec: { path: repo },
  });
  const projects = new Informer(store, 'Project');
  const sessions = new Informer(store, 'AgentSession');
  const evaluations = new Informer(store, 'Evaluation');
  informers.push(projects, sessions, evaluations);
  await Promise.all(informers.map((i) => i.start()));
  const gitObserver = new GitObserver();
  const r = new ProjectReconciler({ store, projects, sessions, evaluations, git: gitObserver });

  await r.reconcile('default/shop');
  let p = await get();
  expect(stale(p)).toMatchObject({ status: 'True', reason: 'Idle' });
  expect(Date.parse(p.status?.lastActivity ?? '')).toBe(fiveDaysAgo.getTime());
  expect(p.status).toMatchObject({ activeSessions: 0, isGitRepo: true, git: { branch: 'main' } });
  expect(gitObserver.spawned).toBe(1);

  // Nothing changed: no git process, no write.
  await until('the informer to see the status', () => !!projects.get('default', 'shop')?.status);
  const rv = p.metadata.resourceVersion;
  await r.reconcile('default/shop');
  expect(gitObserver.spawned).toBe(1);
  expect((await get()).metadata.resourceVersion).toBe(rv);

  const s = (await store.create({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: meta('fix'),
    spec: { projectRef: 'shop', agentRef: 'simulated', prompt: 'fix it' },
  })) as Resource;
  await store.updateStatus({ ...s, status: { phase: 'Running', run: 1 } });
  await until('the informer to see the session', () => !!sessions.get('default', 'fix')?.status);
  await r.reconcile('default/shop');
  p = await get();
  expect(p.status?.activeSessions).toBe(1);
  expect(stale(p)).toMatchObject({ status: 'False', reason: 'Active' });

  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  await commit('b.txt', now);
  const ended = (await store.get({ kind: 'AgentSession', namespace: 'default', name: 'fix' })) as Resource;
  await store.updateStatus({
    ...ended,
    status: { phase: 'Succeeded', run: 1, completionTime: fiveDaysAgo.toISOString() },
  });
  await until(
    'the session to end',
    () => (sessions.get('default', 'fix')?.status as { phase?: string } | undefined)?.phase === 'Succeeded',
  );
  await r.reconcile('default/shop');
  p = await get();
  expect(gitObserver.spawned).toBe(2);
  expect(Date.parse(p.status?.lastActivity ?? '')).toBe(now.getTime());
  expect(p.status?.activeSessions).toBe(0);
  expect(stale(p)).toMatchObject({ status: 'False', reason: 'Recent' });
});
