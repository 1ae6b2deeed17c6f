import { describe, expect, it } from 'vitest';
import {
  decide,
  recoveryProposals,
  retryBudget,
  settings,
  view,
} from '../../../../controller/reconcilers/autopilot/plan.js';
import { recoveryPrompt } from '../../../../controller/reconcilers/autopilot/prompts.js';
import { autopilot, project, session, T0, world } from '../../../support/autopilot-world.js';

const TIMEOUT = 'Error: connect ETIMEDOUT 203.0.113.7:443 (request to the model API timed out)';
const AUTH = 'Error: 401 Unauthorized - invalid x-api-key';

function recover(opts: {
  output: string;
  count?: number;
  timeBoxes?: number;
  timedOut?: boolean;
  escalatedBySession?: boolean;
  level?: 'full' | 'observe';
}) {
  const ap = autopilot({
    autonomyLevel: opts.level ?? 'full',
    guardrails: { cooldowns: { sameProject: '0s', sameAction: '0s' } },
  });
  const p = project('api', {}, { idleDays: 0 });
  if (opts.count !== undefined || opts.timeBoxes !== undefined)
    p.status = {
      ...p.status,
      errorRetries: {
        count: opts.count ?? 0,
        ...(opts.timeBoxes !== undefined ? { timeBoxes: opts.timeBoxes } : {}),
        windowStart: new Date(T0 - 60_000).toISOString(),
      },
    };
  const failed = session('api-1', 'api', opts.timedOut ? 'TimedOut' : 'Failed', {
    run: 2,
    ...(opts.timedOut
      ? { reason: 'TimedOut', message: 'time box of 45m reached; stopping, 3 commits' }
      : { exitCode: 1 }),
    lastOutput: `Reading the repository\n${opts.output}\n`,
    ...(opts.escalatedBySession
      ? {
          conditions: [
            { type: 'Escalated', status: 'True', reason: 'RetryLimitReached', message: '', lastTransitionTime: '' },
          ],
        }
      : {}),
  });
  const w = world(ap, { projects: [p], sessions: [failed] });
  const s = settings(ap.spec);
  const v = view(w, s);
  const proposals = recoveryProposals(v.input, (pv) => {
    if (!pv.failure) return '';
    const { used, max } = retryBudget(pv, pv.failure.class);
    return recoveryPrompt(pv.failure.class, used + 1, max, pv.failure.run, pv.failure.evidence);
  });
  return { w, s, v, proposals };
}

describe('error recovery (seed 002 §2.4)', () => {
  it('a transient failure is restarted with a note naming the error and the attempt', () => {
    const { proposals } = recover({ output: TIMEOUT, count: 1 });
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({
      action: 'restart',
      session: 'api-1',
      recovery: { class: 'Transient', attempt: 2 },
    });
    expect(proposals[0].prompt).toContain('Recovery attempt 2 of 3');
    expect(proposals[0].prompt).toContain('ETIMEDOUT');
  });

  it('retries used up → escalated with a notice, not a fourth restart', () => {
    const { proposals } = recover({ output: TIMEOUT, count: 3 });
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({ action: 'notify', recovery: { class: 'Transient' } });
    expect(proposals[0].reason).toContain('maxErrorRetries is 3');
  });

  it('a run stopped at its time box continues from where it stopped, counted apart from the error retries', () => {
    // Error retries used up: a TimeBox run still continues (its own limit), with the time-ran-out note.
    const { proposals } = recover({ output: 'Tests  1 failed', count: 3, timeBoxes: 1, timedOut: true });
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({ action: 'restart', recovery: { class: 'TimeBox', attempt: 2 } });
    expect(proposals[0].reason).toContain('reached its time box');
    expect(proposals[0].reason).toContain('continuation 2 of 3');
    expect(proposals[0].prompt).toContain('Continuation 2 of 3: the previous run (run 2) was stopped at its time box.');
    expect(proposals[0].prompt).toContain('handoff');
    expect(proposals[0].prompt).not.toContain('find and fix the failure');
  });

  it('TimeBox continuations used up → escalated with a notice naming maxTimeBoxContinuations', () => {
    const { proposals } = recover({ output: '● Editing', count: 0, timeBoxes: 3, timedOut: true });
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({ action: 'notify', recovery: { class: 'TimeBox', attempt: 3 } });
    expect(proposals[0].reason).toContain('maxTimeBoxContinuations is 3');
  });

  it('an Auth failure is escalated at once', () => {
    const { proposals } = recover({ output: AUTH });
    expect(proposals.map((p) => p.action)).toEqual(['notify']);
    expect(proposals[0].reason).toContain('Auth');
  });

  it('a session that escalated itself after its own restarts is not restarted again', () => {
    const { proposals } = recover({ output: TIMEOUT, escalatedBySession: true });
    expect(proposals.map((p) => p.action)).toEqual(['notify']);
    expect(proposals[0].reason).toContain('escalated itself');
  });

  it('a failed run is dealt with once: a standing decision about it stops the next think proposing again', () => {
    const { w, s, v, proposals } = recover({ output: TIMEOUT, count: 0 });
    const [first] = decide({ world: w, settings: s, view: v, think: 1, planner: 'heuristic', proposals });
    expect(first.execute).toBe(true);
    const again = decide({
      world: { ...w, decisions: [{ ...first.decision, status: { ...first.decision.status, phase: 'Executed' } }] },
      settings: s,
      view: v,
      think: 2,
      planner: 'heuristic',
      proposals,
    });
    expect(again).toEqual([]);
  });

  it('at observe level the recovery is only logged', () => {
    const { w, s, v, proposals } = recover({ output: TIMEOUT, count: 0, level: 'observe' });
    const [d] = decide({ world: w, settings: s, view: v, think: 1, planner: 'heuristic', proposals });
    expect(d.execute).toBe(false);
    expect(d.decision.status?.phase).toBe('Logged');
  });
});
