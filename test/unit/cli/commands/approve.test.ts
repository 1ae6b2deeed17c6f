/**
 * What `orchctl approve|reject decision` and `orchctl restart session` make of the object they
 * read (the pure half; the store half is in test/integration/cli-autopilot.test.ts): only a
 * pending, unanswered decision is answered; an answer is never changed; a session being deleted is
 * not restarted.
 */
import { describe, expect, it } from 'vitest';
import {
  type Decision,
  type DecisionPhase,
  RESTART_NOTE_ANNOTATION,
  RESTART_REASON_ANNOTATION,
  RESTARTED_AT_ANNOTATION,
} from '../../../../controller/api/autopilot.js';
import type { AgentSession } from '../../../../controller/api/session.js';
import { answer } from '../../../../controller/cli/commands/approve.js';
import { stamp } from '../../../../controller/cli/commands/restart.js';

const AT = '2026-03-01T12:00:00.000Z';

const decision = (phase?: DecisionPhase, approval?: NonNullable<Decision['spec']>['approval']): Decision => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'Decision',
  metadata: { name: 'pilot-1-1', namespace: 'default', resourceVersion: '7' },
  spec: {
    autopilot: 'pilot',
    think: 1,
    action: 'stop',
    target: { project: 'webapp', session: 'webapp-1' },
    reason: 'idle',
    priority: 3,
    planner: 'heuristic',
    level: 'cautious',
    snapshot: { revision: 6, objects: [] },
    ...(approval ? { approval } : {}),
  },
  ...(phase ? { status: { phase } } : {}),
});

describe('answer', () => {
  it('sets spec.approval on a pending decision, with who and why when given, and nothing else', () => {
    const c = answer(decision('PendingApproval'), 'Rejected', AT, 'ada', 'not during the release');
    expect(c).toEqual({
      write: {
        ...decision('PendingApproval'),
        spec: {
          ...decision().spec,
          approval: { verdict: 'Rejected', at: AT, by: 'ada', message: 'not during the release' },
        },
      },
    });
    const plain = answer(decision('PendingApproval'), 'Approved', AT);
    expect('write' in plain && plain.write.spec!.approval).toEqual({ verdict: 'Approved', at: AT });
  });

  it.each(['Executed', 'Logged', 'Rejected', 'Superseded', 'Failed', undefined] as const)(
    'refuses a decision in phase %s',
    (phase) => {
      expect(answer(decision(phase), 'Approved', AT)).toEqual({
        refuse:
          `decision "pilot-1-1" is ${phase ?? 'not decided yet'}, not PendingApproval: ` +
          'only a pending decision can be approved',
      });
    },
  );

  it('leaves an answered decision as it is: the same answer is unchanged, the other one refused', () => {
    const given = decision('PendingApproval', { verdict: 'Approved', at: AT, by: 'ada' });
    expect(answer(given, 'Approved', AT, 'bob')).toEqual({ unchanged: `already approved by ada at ${AT}` });
    expect(answer(given, 'Rejected', AT, 'bob')).toEqual({
      refuse: `decision "pilot-1-1" was already approved by ada at ${AT}`,
    });
    // Still answered once the controller has acted on it.
    expect(answer({ ...given, status: { phase: 'Executed' } }, 'Rejected', AT)).toEqual({
      refuse: `decision "pilot-1-1" was already approved by ada at ${AT}`,
    });
  });
});

describe('stamp', () => {
  const session = (meta: Partial<AgentSession['metadata']> = {}): AgentSession => ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 'webapp-1', namespace: 'default', annotations: { note: 'kept' }, ...meta },
    spec: { prompt: 'x' },
  });

  it('sets the restart annotation to the time given and its reason Manual, keeping the rest', () => {
    const annotations = { note: 'kept', [RESTARTED_AT_ANNOTATION]: AT, [RESTART_REASON_ANNOTATION]: 'Manual' };
    expect(stamp(session(), AT)).toEqual({ write: { ...session(), metadata: { ...session().metadata, annotations } } });
  });

  it("drops an autopilot's restart note, which would explain this manual restart with its words", () => {
    const s = session({ annotations: { note: 'kept', [RESTART_NOTE_ANNOTATION]: 'tests kept failing' } });
    const annotations = { note: 'kept', [RESTARTED_AT_ANNOTATION]: AT, [RESTART_REASON_ANNOTATION]: 'Manual' };
    expect(stamp(s, AT)).toEqual({ write: { ...s, metadata: { ...s.metadata, annotations } } });
  });

  it('refuses a session being deleted', () => {
    expect(stamp(session({ deletionTimestamp: AT }), AT)).toEqual({
      refuse: 'agentsession "webapp-1" is being deleted: it is not restarted',
    });
  });
});
