/**
 * The morning digest of one night (issue 25 item 4), golden: the sections in order — needs you now
 * (pending decisions with the commands that answer them, a question, a blocked phase, an open
 * escalation from before the window), what happened per project (runs grouped by how they ended,
 * commits, phases done, pauses), cost per project and session and the budgets, held back — and the
 * counts of the summary computed from the same records as the lines.
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../../../controller/api/autopilot.js';
import type { Pipeline } from '../../../../controller/api/pipeline.js';
import type { Project } from '../../../../controller/api/project.js';
import type { SessionPolicy } from '../../../../controller/api/session-policy.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import { collectDigest, needsYouLines, renderDigestTemplate } from '../../../../controller/notify/digest/index.js';
import { channel, NOW, notif, policy, SINCE, session } from './digest-fixtures.js';

const meta = (name: string) => ({ name, namespace: 'default' });
const hourly = (tokens: number, costUSD: number) => [
  { hour: '2026-06-01T06:00:00.000Z', tokens: 999_999, costUSD: 99 }, // before the window: not counted
  { hour: '2026-06-02T01:00:00.000Z', tokens, costUSD },
];

function night() {
  const web = (name: string, commits: number, tokens: number, usd: number) => {
    const s = session(name);
    s.spec = { ...s.spec!, projectRef: 'web' };
    s.status = { ...s.status, git: { commits } as never, usage: { hourly: hourly(tokens, usd) } as never };
    return s;
  };
  const auth = session('auth-1');
  auth.spec = { ...auth.spec!, projectRef: 'auth-svc' };
  auth.status = { ...auth.status, usage: { hourly: hourly(52_000, 0.41) } as never };
  const project: Project = {
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: meta('auth-svc'),
    spec: { path: '/work/auth-svc' },
    status: {
      conditions: [
        {
          type: 'Escalated',
          status: 'True',
          reason: 'AutopilotEscalated',
          message: 'Auth failure: 401 Unauthorized - invalid x-api-key',
          // Before the window: an open escalation is repeated whatever its age.
          lastTransitionTime: '2026-05-31T22:10:00Z',
        },
      ],
    },
  };
  const decision = {
    apiVersion: API_VERSION,
    kind: 'Decision',
    metadata: meta('pilot-7-0'),
    spec: {
      autopilot: 'pilot',
      think: 7,
      action: 'restart',
      target: { project: 'web', session: 'web-2' },
      reason: 'run 1 failed (Transient): connect ETIMEDOUT',
      priority: 2,
      planner: 'recovery',
      level: 'cautious',
      snapshot: { revision: 1, objects: [] },
    },
    status: { phase: 'PendingApproval', decidedAt: '2026-06-02T03:12:00Z', expiresAt: '2026-06-02T04:12:00Z' },
  } as Decision;
  const pipeline = {
    apiVersion: API_VERSION,
    kind: 'Pipeline',
    metadata: meta('release'),
    spec: { phases: [{ name: 'build', template: { projectRef: 'web', prompt: 'x' } }] },
    status: {
      phases: [
        { name: 'build', state: 'Succeeded' },
        {
          name: 'test',
          state: 'Blocked',
          session: 'release-test',
          startedAt: '2026-06-02T02:00:00Z',
          message: 'which database should the tests use?',
        },
      ],
    },
  } as Pipeline;
  const budget = {
    apiVersion: API_VERSION,
    kind: 'SessionPolicy',
    metadata: meta('team'),
    spec: {},
    status: { budget: { display: '2.1M/2M, $6.94/$5.00', exceeded: true } },
  } as unknown as SessionPolicy;
  const notifications = [
    notif({ reason: 'Started', session: 'web-1', created: '2026-06-01T22:00:00Z', phase: 'Suppressed' }),
    notif({ reason: 'Completed', session: 'web-1', created: '2026-06-01T23:30:00Z' }),
    notif({ reason: 'Started', session: 'web-2', created: '2026-06-01T22:05:00Z', phase: 'Suppressed' }),
    notif({ reason: 'Error', session: 'web-2', created: '2026-06-02T03:10:00Z', message: 'Run 1 Failed: exit 1' }),
    notif({ reason: 'Error', session: 'web-3', created: '2026-06-02T03:40:00Z', message: 'Run 1 Failed: exit 1' }),
    notif({ reason: 'TimedOut', session: 'web-3', created: '2026-06-02T04:40:00Z', message: 'Run 2 TimedOut' }),
    notif({ reason: 'Paused', session: 'web-1', created: '2026-06-01T22:40:00Z', phase: 'Suppressed' }),
    notif({ reason: 'Resumed', session: 'web-1', created: '2026-06-01T23:00:00Z', phase: 'Suppressed' }),
    notif({ reason: 'AgentCannotConnect', session: 'auth-1', created: '2026-06-02T01:00:00Z' }),
    notif({
      reason: 'PhaseSucceeded',
      session: 'release',
      kind: 'Pipeline',
      created: '2026-06-02T01:30:00Z',
      message: 'phase build succeeded',
    }),
    notif({
      reason: 'Stalled',
      session: 'web-1',
      tier: 2,
      created: '2026-06-02T05:10:00Z',
      phase: 'Deferred',
      why: 'quietHours',
      until: '2026-06-02T07:00:00Z',
    }),
  ];
  return collectDigest({
    now: NOW,
    since: SINCE,
    policy: policy(),
    notifications,
    sessions: [
      web('web-1', 3, 1_200_000, 3.4),
      web('web-2', 0, 300_000, 0.9),
      web('web-3', 1, 10_000, 0.05),
      auth,
      session('docs-1', { since: '2026-06-02T05:55:00Z', message: 'Overwrite CHANGELOG.md? (y/n)' }),
    ],
    evaluations: [],
    channels: [channel('default', 'webhook', { day: '2026-06-02', sent: 6, budget: 20 })],
    decisions: [decision],
    projects: [project],
    pipelines: [pipeline],
    sessionPolicies: [budget],
  });
}

describe('the digest of a night', () => {
  it('renders the sections in order with every needs-you-now item (golden)', async () => {
    const t = renderDigestTemplate(night(), 16_000);
    await expect(`${t.title}\n\n${t.body}\n`).toMatchFileSnapshot('../../../golden/digest-night.txt');
  });

  it('counts what it lists: the summary, the title and the lines come from the same records', () => {
    const d = night();
    const t = renderDigestTemplate(d, 16_000);
    const needs = needsYouLines(d);
    expect(needs).toHaveLength(4);
    expect(t.body).toContain(`Needs you now (${needs.length}):`);
    expect(t.title).toContain(`${needs.length} need you`);
    const failed = d.projects.reduce((n, p) => n + p.failures.reduce((m, f) => m + f.count, 0), 0);
    expect(failed).toBe(d.runs.failed);
    expect(t.body).toContain(`${d.runs.failed} failed.`);
  });
});
