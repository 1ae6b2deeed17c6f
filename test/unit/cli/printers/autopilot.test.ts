/**
 * `describe autopilot` and `describe decision` output, and the decisions table's WHY column, with
 * the real CRDs: what a person reads to see what the autopilot did and why, to the character.
 */
import { describe, expect, it } from 'vitest';
import type { Autopilot, Decision, DecisionPhase, Guardrail } from '../../../../controller/api/autopilot.js';
import { registry } from '../../../../controller/config/crds.js';
import type { EventObject } from '../../../../controller/client/events.js';
import { header, rows } from '../../../../controller/cli/printers/columns.js';
import {
  describeAutopilot,
  describeDecision,
  RECENT_DECISIONS,
  selectorText,
} from '../../../../controller/cli/printers/autopilot.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString().replace('.000Z', 'Z');

const autopilot = (spec: Autopilot['spec'], status?: Autopilot['status']): Autopilot => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Autopilot',
  metadata: { name: 'pilot', namespace: 'default', creationTimestamp: at(600) },
  spec,
  status,
});

function decision(
  name: string,
  minutesAgo: number,
  phase: DecisionPhase,
  extra: { guardrail?: Guardrail; message?: string; session?: string; action?: 'start' | 'restart' } = {},
): Decision {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Decision',
    metadata: { name, namespace: 'default', creationTimestamp: at(minutesAgo) },
    spec: {
      autopilot: 'pilot',
      think: 1,
      action: extra.action ?? 'start',
      target: { project: 'webapp', ...(extra.session ? { session: extra.session } : {}) },
      reason: 'stale for 4.2 days',
      priority: 2,
      planner: 'heuristic',
      level: 'moderate',
      snapshot: { revision: 10, objects: [] },
    },
    status: {
      phase,
      ...(extra.guardrail ? { guardrail: extra.guardrail } : {}),
      ...(extra.message ? { message: extra.message } : {}),
    },
  };
}

const event: EventObject = {
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Event',
  metadata: { name: 'pilot.1', namespace: 'default' },
  involvedObject: { apiVersion: 'orchctl.io/v1alpha1', kind: 'Autopilot', name: 'pilot', namespace: 'default' },
  reason: 'Thought',
  message: 'one decision',
  type: 'Normal',
  count: 1,
  firstTimestamp: at(3),
  lastTimestamp: at(3),
  source: { component: 'orchctl-autopilot', host: 'devbox' },
  reportingController: 'orchctl-autopilot',
};

describe('describe autopilot', () => {
  const kind = registry().resolve('ap');

  it('shows level, planner, projects, the last and next think, counts, guardrails and the newest decisions', () => {
    const ap = autopilot(
      {
        autonomyLevel: 'moderate',
        planner: { backend: 'openai', model: 'gpt-4o-mini' },
        projectSelector: { matchLabels: { team: 'web' } },
        guardrails: { cooldowns: { sameProject: '15m' }, protectedProjects: { matchLabels: { env: 'prod' } } },
      },
      {
        level: 'cautious',
        selectedProjects: 5,
        staleProjects: 2,
        lastThink: {
          time: at(3),
          trigger: 'session-ended',
          planner: 'openai',
          model: 'gpt-4o-mini',
          durationMs: 812.4,
          decisions: 2,
          error: 'the planner answered garbage twice',
        },
        nextThinkTime: new Date(NOW + 2 * 60_000).toISOString().replace('.000Z', 'Z'),
        counts: { Executed: 3, PendingApproval: 1, Rejected: 1 },
      },
    );
    const decisions = [
      decision('pilot-1-1', 30, 'Executed', { message: 'created session webapp-ap-1' }),
      decision('pilot-2-1', 3, 'Rejected', { guardrail: 'SameProjectCooldown', message: 'acted on 4m ago' }),
      decision('pilot-2-2', 3, 'PendingApproval', { action: 'restart', session: 'api-7' }),
    ];
    expect(describeAutopilot(kind, ap, decisions, [event], NOW)).toBe(
      [
        'Name:         pilot',
        'Namespace:    default',
        'Labels:       <none>',
        'Annotations:  <none>',
        'API Version:  orchctl.io/v1alpha1',
        'Kind:         Autopilot',
        'Level:        moderate (last think: cautious)',
        'Planner:      openai (model gpt-4o-mini)',
        'Projects:     5 selected, 2 stale (selector team=web)',
        'Interval:     5m',
        'Last Think:',
        '  Time:       2026-03-01T11:57:00Z (3m ago)',
        '  Trigger:    session-ended',
        '  Planner:    openai (model gpt-4o-mini)',
        '  Duration:   812ms',
        '  Decisions:  2',
        '  Error:      the planner answered garbage twice',
        'Next Think:   2026-03-01T12:02:00Z (in 2m)',
        'Decisions:    Executed 3, PendingApproval 1, Rejected 1',
        'Guardrails:',
        '  Actions:              start, stop, restart, notify, skip',
        '  Cooldowns:            same project 15m, same action 5m',
        '  Protected Projects:   env=prod',
        '  Young Session Window: 30m',
        '  Error Retries:        3 per 24h',
        "  Staleness Days:       (each Project's spec.staleAfter)",
        "  Min Free Memory MB:   2048 (or the session policy's)",
        '  Max Active Sessions:  4',
        '  Max Starts Per Think: 1',
        'Recent Decisions (newest 10):',
        '  Name       Action   Target        Phase            Why                          Age',
        '  pilot-2-2  restart  webapp/api-7  PendingApproval  <none>                       3m',
        '  pilot-2-1  start    webapp        Rejected         SameProjectCooldown          3m',
        '  pilot-1-1  start    webapp        Executed         created session webapp-ap-1  30m',
        'Conditions:   <none>',
        'Events:',
        '  Type    Reason   Age   From               Message',
        '  ----    ------   ----  ----               -------',
        '  Normal  Thought  3m    orchctl-autopilot  one decision',
        '',
      ].join('\n'),
    );
  });

  it('before its first think, and suspended; lists only the newest ten decisions', () => {
    const ap = autopilot({ suspend: true });
    const many = Array.from({ length: 12 }, (_, i) => decision(`pilot-${i + 1}-1`, 60 - i, 'Logged'));
    const text = describeAutopilot(kind, ap, many, [], NOW);
    expect(text).toContain('Level:        observe\n');
    expect(text).toContain('Suspended:    true (it does not think; approved decisions still execute)\n');
    expect(text).toContain('Planner:      heuristic\n');
    expect(text).toContain('Projects:     selector <none>; counted at the first think\n');
    expect(text).toContain('Last Think:   <none>\nNext Think:   <suspended>\nDecisions:    <none>\n');
    const listed = text.match(/^ {2}pilot-\d+-1 /gm)!.map((s) => s.trim());
    expect(listed).toHaveLength(RECENT_DECISIONS);
    expect(listed[0]).toBe('pilot-12-1');
    expect(listed.at(-1)).toBe('pilot-3-1');
    expect(describeAutopilot(kind, ap, [], [], NOW)).toContain('Recent Decisions (newest 10):  <none>\n');
  });
});

describe('describe decision', () => {
  const kind = registry().resolve('dec');

  it('shows every spec field, the prompt as an indented block, the snapshot objects, the approval and status', () => {
    const d: Decision = {
      ...decision('pilot-4-1', 5, 'Executed', { action: 'restart', session: 'webapp-2' }),
      metadata: {
        name: 'pilot-4-1',
        namespace: 'default',
        creationTimestamp: at(5),
        labels: { 'orchctl.io/autopilot': 'pilot' },
      },
    };
    d.spec = {
      ...d.spec!,
      think: 4,
      reason: 'the last run failed: rate limited',
      prompt: 'Resume the work on webapp.\nThe last run failed with:\n  429 Too Many Requests\n',
      model: undefined,
      level: 'observe',
      snapshot: {
        revision: 41,
        objects: [
          { kind: 'Project', name: 'webapp', resourceVersion: '12' },
          { kind: 'AgentSession', name: 'webapp-2', resourceVersion: '40', generation: 3, run: 2 },
        ],
      },
      recovery: {
        class: 'Transient',
        attempt: 2,
        session: 'webapp-2',
        run: 2,
        evidence: 'Error: 429 Too Many Requests',
      },
      approval: { verdict: 'Approved', at: at(2), by: 'ada', message: 'go' },
    };
    d.status = {
      phase: 'Executed',
      message: 'restarted webapp-2',
      notifyAfter: false,
      decidedAt: at(5),
      executedAt: at(1),
      result: { session: 'webapp-2' },
    };
    expect(describeDecision(kind, d, [], NOW)).toBe(
      [
        'Name:         pilot-4-1',
        'Namespace:    default',
        'Labels:       orchctl.io/autopilot=pilot',
        'Annotations:  <none>',
        'API Version:  orchctl.io/v1alpha1',
        'Kind:         Decision',
        'Autopilot:    pilot (think 4)',
        'Action:       restart',
        'Project:      webapp',
        'Session:      webapp-2',
        'Priority:     2',
        'Level:        observe',
        'Planner:      heuristic',
        'Reason:       the last run failed: rate limited',
        'Prompt:',
        '  Resume the work on webapp.',
        '  The last run failed with:',
        '    429 Too Many Requests',
        'Recovery:',
        '  Class:       Transient',
        '  Attempt:     2',
        '  Failed Run:  webapp-2 run 2',
        '  Evidence:    Error: 429 Too Many Requests',
        'Snapshot:     revision 41',
        'Snapshot Objects:',
        '  Kind          Name      Resource Version  Generation  Run',
        '  Project       webapp    12',
        '  AgentSession  webapp-2  40                3           2',
        'Approval:',
        '  Verdict:    Approved',
        '  By:         ada',
        '  At:         2026-03-01T11:58:00Z (2m ago)',
        '  Message:    go',
        'Status:',
        '  Phase:         Executed',
        '  Message:       restarted webapp-2',
        '  Notify After:  false',
        '  Decided At:    2026-03-01T11:55:00Z (5m ago)',
        '  Executed At:   2026-03-01T11:59:00Z (60s ago)',
        '  Result:        session webapp-2',
        'Events:       <none>',
        '',
      ].join('\n'),
    );
  });

  it('a rejected one names its guardrail; a notify shows its message; no approval yet', () => {
    const d = decision('pilot-5-1', 1, 'Rejected', { guardrail: 'ProtectedProject', message: 'webapp is protected' });
    d.spec = { ...d.spec!, action: 'notify', message: 'webapp has failed 3 times' };
    const text = describeDecision(kind, d, [], NOW);
    expect(text).toContain('Message:      webapp has failed 3 times\n');
    expect(text).not.toContain('Prompt:');
    expect(text).toContain('Snapshot Objects:  <none>\nApproval:     <none>\n');
    expect(text).toContain(
      '  Phase:         Rejected\n  Guardrail:     ProtectedProject\n  Message:       webapp is protected\n',
    );
  });
});

describe('get decisions', () => {
  const kind = registry().resolve('decisions');

  it('has ACTION, PROJECT, SESSION, PHASE, WHY and AGE; LEVEL and PLANNER with -o wide', () => {
    expect(header(kind, {})).toEqual(['NAME', 'ACTION', 'PROJECT', 'SESSION', 'PHASE', 'WHY', 'AGE']);
    expect(header(kind, { wide: true })).toEqual([
      'NAME',
      'ACTION',
      'PROJECT',
      'SESSION',
      'PHASE',
      'WHY',
      'LEVEL',
      'PLANNER',
      'AGE',
    ]);
  });

  it('WHY is the guardrail when one refused it, else the message, cut to 80 columns unless -o wide', () => {
    const long = `the session ended before the write: ${'x'.repeat(100)}`;
    const table = rows(
      kind,
      [
        decision('a', 1, 'Rejected', { guardrail: 'YoungSession', message: 'webapp-2 has run for 12m' }),
        decision('b', 1, 'Superseded', { message: long }),
        decision('c', 1, 'Executed', { session: 'webapp-2' }),
      ],
      { now: NOW },
    );
    expect(table.map((r) => r[5])).toEqual(['YoungSession', `${long.slice(0, 79)}…`, '<none>']);
    expect(table[2].slice(1, 5)).toEqual(['start', 'webapp', 'webapp-2', 'Executed']);
    expect(rows(kind, [decision('b', 1, 'Superseded', { message: long })], { now: NOW, wide: true })[0][5]).toBe(long);
  });
});

describe('get autopilots and projects', () => {
  it('autopilots: LEVEL, PLANNER, PROJECTS, STALE, PENDING, LAST-THINK, AGE; NEXT-THINK with -o wide', () => {
    const kind = registry().resolve('autopilots');
    expect(header(kind, { wide: true })).toEqual([
      'NAME',
      'LEVEL',
      'PLANNER',
      'PROJECTS',
      'STALE',
      'PENDING',
      'LAST-THINK',
      'NEXT-THINK',
      'AGE',
    ]);
    const ap = autopilot(
      { autonomyLevel: 'full', planner: { backend: 'heuristic' } },
      {
        selectedProjects: 4,
        staleProjects: 1,
        counts: { PendingApproval: 2 },
        lastThink: { time: at(4), trigger: 'interval', planner: 'heuristic', durationMs: 3, decisions: 0 },
      },
    );
    expect(rows(kind, [ap], { now: NOW })[0]).toEqual(['pilot', 'full', 'heuristic', '4', '1', '2', '4m', '10h']);
  });

  it('projects: RETRIES with -o wide, from status.errorRetries', () => {
    const kind = registry().resolve('projects');
    const h = header(kind, { wide: true });
    expect(header(kind, {})).not.toContain('RETRIES');
    const p = {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Project',
      metadata: { name: 'webapp', namespace: 'default', creationTimestamp: at(60) },
      spec: { path: '/w' },
      status: { errorRetries: { count: 2, windowStart: at(30) } },
    };
    expect(rows(kind, [p], { now: NOW, wide: true })[0][h.indexOf('RETRIES')]).toBe('2');
  });
});

describe('selectorText', () => {
  it('writes a label selector as -l would', () => {
    expect(selectorText(undefined)).toBe('<none>');
    expect(selectorText({})).toBe('<all>');
    expect(
      selectorText({
        matchLabels: { team: 'web' },
        matchExpressions: [
          { key: 'tier', operator: 'NotIn', values: ['a', 'b'] },
          { key: 'x', operator: 'Exists' },
          { key: 'y', operator: 'DoesNotExist' },
        ],
      }),
    ).toBe('team=web,tier notin (a,b),x,!y');
  });
});
