/**
 * The project reconciler's pure plan on a fake clock: the Stale condition (seed 002 §2.5: idle
 * over 3 days; never when blocked or with an active session), lastActivity from commits and run
 * ends, activeSessions, and recentOutcomes (newest first, at most 5).
 */
import { describe, expect, it } from 'vitest';
import type { Evaluation } from '../../../../controller/api/evaluation.js';
import type { Phase } from '../../../../controller/api/phases.js';
import type { Project, ProjectSpec } from '../../../../controller/api/project.js';
import type { AgentSession } from '../../../../controller/api/session.js';
import type { GitTip } from '../../../../controller/observers/git.js';
import { planProject, type ProjectObserved } from '../../../../controller/reconcilers/project/plan.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();

function project(spec: Partial<ProjectSpec> = {}, status?: Project['status']): Project {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Project',
    metadata: { name: 'shop', namespace: 'default', generation: 2, creationTimestamp: ago(30 * DAY) },
    spec: { path: '/src/shop', ...spec },
    ...(status ? { status } : {}),
  };
}

function session(name: string, phase: Phase, completionTime?: string): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: { projectRef: 'shop' },
    status: { phase, ...(completionTime ? { completionTime } : {}) },
  };
}

function evaluation(name: string, score: number, at: string): Evaluation {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Evaluation',
    metadata: { name, namespace: 'default' },
    spec: { sessionRef: name.replace(/-run-\d+$/, ''), run: 1, projectRef: 'shop' },
    status: { phase: 'Judged', score, recommendation: score >= 4 ? 'complete' : 'retry', evaluatedAt: at },
  };
}

const commitAt = (time: string): GitTip => ({
  isGitRepo: true,
  branch: 'main',
  lastCommit: { sha: 'abc123', subject: 'Fix the parser', time },
});

function plan(o: Partial<ProjectObserved> = {}) {
  return planProject({
    project: project(),
    sessions: [],
    evaluations: [],
    exists: true,
    git: commitAt(ago(4 * DAY)),
    now: NOW,
    ...o,
  });
}

const cond = (s: ReturnType<typeof plan>, type: string) => s.conditions?.find((c) => c.type === type);

describe('the Stale condition', () => {
  it('is True after more than 3 days without a commit or a run end', () => {
    const s = plan();
    expect(cond(s, 'Stale')).toMatchObject({ status: 'True', reason: 'Idle' });
    expect(s.lastActivity).toBe(ago(4 * DAY));
    expect(s.activeSessions).toBe(0);
  });

  it('is False (Recent) within 3 days of the last commit', () => {
    expect(cond(plan({ git: commitAt(ago(2 * DAY)) }), 'Stale')).toMatchObject({ status: 'False', reason: 'Recent' });
  });

  it('counts a run end as activity: an old repository with a session that ended yesterday is Recent', () => {
    const s = plan({ sessions: [session('fix', 'Succeeded', ago(DAY))] });
    expect(s.lastActivity).toBe(ago(DAY));
    expect(cond(s, 'Stale')).toMatchObject({ status: 'False', reason: 'Recent' });
  });

  it('is False (Blocked) when blocked, however long idle, with the reason as message', () => {
    const s = plan({
      project: project({ blocked: { reason: 'waiting for the API key' } }),
      git: commitAt(ago(20 * DAY)),
    });
    expect(cond(s, 'Stale')).toMatchObject({ status: 'False', reason: 'Blocked', message: 'waiting for the API key' });
  });

  it('is False (Active) while a session is not in a terminal phase; ended sessions do not count', () => {
    const s = plan({
      sessions: [session('a', 'Running'), session('b', 'Backoff'), session('c', 'Failed', ago(10 * DAY))],
      git: commitAt(ago(20 * DAY)),
    });
    expect(s.activeSessions).toBe(2);
    expect(cond(s, 'Stale')).toMatchObject({ status: 'False', reason: 'Active' });
  });

  it('follows spec.staleAfter, and the override a planner passes', () => {
    expect(cond(plan({ project: project({ staleAfter: '120h' }) }), 'Stale')?.status).toBe('False');
    expect(cond(plan({ staleAfterMs: DAY, git: commitAt(ago(2 * DAY)) }), 'Stale')?.status).toBe('True');
  });

  it('measures a project that never had activity from its creation', () => {
    const s = plan({ git: { isGitRepo: false } });
    expect(s.lastActivity).toBeUndefined();
    expect(s.git).toBeUndefined();
    expect(cond(s, 'Stale')).toMatchObject({ status: 'True', reason: 'Idle' });
  });

  it('keeps lastTransitionTime when the status holds and gives the same status as time passes (no write)', () => {
    const first = plan();
    const later = plan({ project: project({}, first), now: NOW + 60_000 });
    expect(later).toEqual(first);
  });

  it('moves lastTransitionTime when the project turns stale', () => {
    const fresh = plan({ git: commitAt(ago(2 * DAY)) });
    const s = plan({ project: project({}, fresh), git: commitAt(ago(2 * DAY)), now: NOW + 2 * DAY });
    expect(cond(s, 'Stale')).toMatchObject({
      status: 'True',
      lastTransitionTime: new Date(NOW + 2 * DAY).toISOString(),
    });
  });
});

describe('recentOutcomes', () => {
  it('keeps the 5 newest judged Evaluations, newest first, and skips unjudged ones', () => {
    const evals = [1, 2, 3, 4, 5, 6, 7].map((i) => evaluation(`s${i}-run-1`, ((i - 1) % 5) + 1, ago(i * 3_600_000)));
    const pending: Evaluation = { ...evaluation('s0-run-1', 3, ago(0)), status: { phase: 'Judging' } };
    const s = plan({ evaluations: [evals[5], pending, evals[2], evals[0], evals[6], evals[3], evals[1], evals[4]] });
    expect(s.recentOutcomes?.map((o) => o.evaluation)).toEqual([
      's1-run-1',
      's2-run-1',
      's3-run-1',
      's4-run-1',
      's5-run-1',
    ]);
    expect(s.recentOutcomes?.[0]).toEqual({
      evaluation: 's1-run-1',
      session: 's1',
      score: 1,
      recommendation: 'retry',
      time: ago(3_600_000),
    });
  });

  it('is absent with no judged Evaluation', () => {
    expect(plan().recentOutcomes).toBeUndefined();
  });
});

describe('Ready and git', () => {
  it('says PathNotFound for a missing directory and shows the repository tip when there is one', () => {
    expect(cond(plan({ exists: false, git: { isGitRepo: false } }), 'Ready')).toMatchObject({ reason: 'PathNotFound' });
    const s = plan();
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True', reason: 'PathExists' });
    expect(s.git).toEqual({
      branch: 'main',
      head: 'abc123',
      lastCommitTime: ago(4 * DAY),
      lastCommitSubject: 'Fix the parser',
    });
    expect(s.observedGeneration).toBe(2);
  });
});
