/**
 * Sampling (seed 001 §7): which ended runs the judge gets — burn-in, breaker-triggered, explicit
 * feedback, long sessions, base rate — deterministic per session uid and run.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSession, SessionPolicy } from '../../../../controller/api/kinds.js';
import { assessmentConfig } from '../../../../controller/reconcilers/assessment/config.js';
import {
  sample,
  sampleRun,
  sampleValue,
  type SamplingInput,
} from '../../../../controller/reconcilers/assessment/sampling.js';
import { shouldJudge } from '../../../../controller/reconcilers/judge/should-judge.js';

const cfg = { burnIn: 3, baseRate: 0.25, longSessionMessages: 100, onBreaker: true, onFeedback: true };
const quiet = (uid: string, run = 1): SamplingInput => ({
  uid,
  run,
  evaluationsSoFar: 50,
  breakerTriggered: false,
  explicitFeedback: false,
  messages: 10,
});

const policy = (spec: Record<string, unknown>): SessionPolicy =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: { name: 'p', uid: `p-${JSON.stringify(spec)}`, generation: 1 },
    spec,
  }) as SessionPolicy;
const session = (status: Record<string, unknown>, uid = '0b3a9a7e-5b1c-4a39-9d53-0e7e6f1a2b3c'): AgentSession =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's', namespace: 'default', uid },
    spec: {},
    status,
  }) as AgentSession;

describe('sample', () => {
  it('burn-in judges everything until the namespace has burnIn evaluations', () => {
    expect(sample({ ...quiet('a'), evaluationsSoFar: 2 }, cfg)).toEqual({ judge: true, reason: 'BurnIn' });
    expect(sample({ ...quiet('a'), evaluationsSoFar: 3 }, cfg).reason).not.toBe('BurnIn');
  });

  it('breaker, feedback and long runs are always judged (each can be turned off)', () => {
    expect(sample({ ...quiet('a'), breakerTriggered: true }, cfg)).toEqual({ judge: true, reason: 'BreakerTriggered' });
    expect(sample({ ...quiet('a'), explicitFeedback: true }, cfg)).toEqual({ judge: true, reason: 'ExplicitFeedback' });
    expect(sample({ ...quiet('a'), messages: 101 }, cfg)).toEqual({ judge: true, reason: 'LongSession' });
    expect(sample({ ...quiet('a'), messages: 100 }, cfg).reason).not.toBe('LongSession');
    const off = { ...cfg, onBreaker: false, onFeedback: false, baseRate: 0 };
    expect(sample({ ...quiet('a'), breakerTriggered: true, explicitFeedback: true }, off)).toEqual({
      judge: false,
      reason: 'NotSampled',
    });
  });

  it('the base rate picks about baseRate of runs, the same ones every time', () => {
    const uids = Array.from({ length: 4000 }, (_, i) => `uid-${i}`);
    const picked = uids.filter((u) => sample(quiet(u), cfg).judge);
    expect(picked.length / uids.length).toBeGreaterThan(0.22);
    expect(picked.length / uids.length).toBeLessThan(0.28);
    expect(uids.filter((u) => sample(quiet(u), cfg).judge)).toEqual(picked); // deterministic
    expect(sampleValue('uid-1', 1)).not.toBe(sampleValue('uid-1', 2)); // each run decided on its own
    expect(uids.filter((u) => sample(quiet(u), { ...cfg, baseRate: 0 }).judge)).toEqual([]);
    expect(uids.filter((u) => sample(quiet(u), { ...cfg, baseRate: 1 }).judge)).toHaveLength(uids.length);
  });
});

describe('sampleRun from a session status', () => {
  const withSampling = policy({ judge: { backend: 'heuristic' }, sampling: { burnIn: 0, baseRate: 0 } });

  it('uses the detector and the breaker history of the run asked about', () => {
    const s = session({
      run: 3,
      detector: { run: 3, messages: 40, counts: { Satisfaction: 1 } },
      breaker: { trips: 0, history: [{ id: '2-57', type: 'ApproachPivot' }] },
      assessment: { previousRun: { run: 2, messages: 150, counts: {}, frustrationEma: 0, trips: 1 } },
    });
    expect(sampleRun(s, 3, withSampling, 10)).toEqual({ judge: true, reason: 'ExplicitFeedback' });
    expect(sampleRun(s, 2, withSampling, 10)).toEqual({ judge: true, reason: 'BreakerTriggered' });
    expect(sampleRun(s, 1, withSampling, 10)).toEqual({ judge: false, reason: 'NotSampled' });
  });

  it('a policy without a sampling section judges every ended run', () => {
    expect(sampleRun(session({}), 1, policy({ judge: {} }), 100)).toEqual({ judge: true, reason: 'NoSamplingPolicy' });
    expect(assessmentConfig(withSampling).sampling).toMatchObject({ burnIn: 0, baseRate: 0, longSessionMessages: 100 });
  });
});

describe("the judge's shouldJudge consults sampling", () => {
  it('per run, after its own gate (a judge section that is enabled)', () => {
    const s = session({ run: 1, phase: 'Succeeded', detector: { run: 1, messages: 5, counts: {} } });
    expect(shouldJudge(s, policy({ sampling: {} }), 1, 0)).toBe(false); // no judge section: on demand only
    expect(shouldJudge(s, policy({ judge: {}, sampling: { burnIn: 0, baseRate: 0 } }), 1, 0)).toBe(false);
    expect(shouldJudge(s, policy({ judge: {}, sampling: { burnIn: 5, baseRate: 0 } }), 1, 4)).toBe(true);
    expect(shouldJudge(s, policy({ judge: {} }), 1, 1000)).toBe(true);
  });
});
