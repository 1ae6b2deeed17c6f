/** Pure decisions of the session reconciler (controller/reconcilers/session/decide.ts). */
import { describe, expect, it } from 'vitest';
import type {
  AgentSession,
  AgentSessionSpec,
  AgentSessionStatus,
  SessionPolicy,
  SessionPolicySpec,
} from '../../../../controller/api/kinds.js';
import type { Condition } from '../../../../controller/api/types.js';
import type { HostSnapshot } from '../../../../controller/observers/host.js';
import {
  admit,
  backoffMs,
  DEFAULT_GRACE,
  DEFAULT_INITIAL_BACKOFF,
  DEFAULT_MAX_BACKOFF,
  DEFAULT_MAX_RESTARTS,
  effective,
  nextLookMs,
  observedEvent,
  resolvePolicy,
  wantsRunning,
  type Effective,
  type PaneState,
} from '../../../../controller/reconcilers/session/decide.js';
import type { Phase } from '../../../../controller/reconcilers/session/machine.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const iso = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const MB = 1048576;

function session(
  opts: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    generation?: number;
    spec?: AgentSessionSpec;
    status?: AgentSessionStatus;
  } = {},
): AgentSession {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: {
      name: opts.name ?? 's1',
      namespace: opts.namespace ?? 'default',
      labels: opts.labels,
      generation: opts.generation ?? 1,
    },
    spec: opts.spec ?? {},
    status: opts.status,
  };
}

function policy(
  name: string,
  spec: SessionPolicySpec = {},
  meta: { namespace?: string; deletionTimestamp?: string } = {},
): SessionPolicy {
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'SessionPolicy',
    metadata: {
      name,
      namespace: meta.namespace ?? 'default',
      ...(meta.deletionTimestamp ? { deletionTimestamp: meta.deletionTimestamp } : {}),
    },
    spec,
  };
}

function host(over: Partial<HostSnapshot> = {}): HostSnapshot {
  return {
    cpu: 4,
    loadAverage: [1, 1, 1],
    memoryTotalBytes: 16384 * MB,
    memoryAvailableBytes: 8192 * MB,
    diskTotalBytes: 100_000 * MB,
    diskFreeBytes: 50_000 * MB,
    uptimeSeconds: 1000,
    ...over,
  };
}

const cond = (type: string, status: Condition['status']): Condition => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: iso(-1000),
});

const EFF: Effective = effective({}, undefined);
const eff = (over: Partial<Effective> = {}): Effective => ({ ...EFF, ...over });

describe('resolvePolicy', () => {
  it('returns spec.policyRef when set, even over a higher-priority selecting policy', () => {
    const ps = [
      policy('greedy', { selector: { matchLabels: { team: 'a' } }, priority: 100 }),
      policy('chosen'),
      policy('default'),
    ];
    expect(resolvePolicy(session({ labels: { team: 'a' }, spec: { policyRef: 'chosen' } }), ps)?.metadata.name).toBe(
      'chosen',
    );
  });

  it('a policyRef that does not resolve gives no policy (no fallback to selectors or "default")', () => {
    const ps = [policy('default'), policy('sel', { selector: { matchLabels: { team: 'a' } } })];
    expect(resolvePolicy(session({ labels: { team: 'a' }, spec: { policyRef: 'missing' } }), ps)).toBeUndefined();
  });

  it('a policyRef to a policy in another namespace or being deleted does not resolve', () => {
    expect(
      resolvePolicy(session({ spec: { policyRef: 'p' } }), [policy('p', {}, { namespace: 'other' })]),
    ).toBeUndefined();
    expect(
      resolvePolicy(session({ spec: { policyRef: 'p' } }), [policy('p', {}, { deletionTimestamp: iso(0) })]),
    ).toBeUndefined();
  });

  it('selects by matchLabels (all labels must match)', () => {
    const ps = [policy('web', { selector: { matchLabels: { team: 'web', tier: 'fe' } } })];
    expect(resolvePolicy(session({ labels: { team: 'web', tier: 'fe', x: 'y' } }), ps)?.metadata.name).toBe('web');
    expect(resolvePolicy(session({ labels: { team: 'web' } }), ps)).toBeUndefined();
    expect(resolvePolicy(session({ labels: { team: 'web', tier: 'be' } }), ps)).toBeUndefined();
    expect(resolvePolicy(session({}), ps)).toBeUndefined();
  });

  it('selects by matchExpressions In, NotIn, Exists and DoesNotExist', () => {
    const p = (
      name: string,
      expr: NonNullable<NonNullable<SessionPolicySpec['selector']>['matchExpressions']>[number],
    ) => policy(name, { selector: { matchExpressions: [expr] } });
    const inP = [p('in', { key: 'env', operator: 'In', values: ['prod', 'staging'] })];
    expect(resolvePolicy(session({ labels: { env: 'prod' } }), inP)?.metadata.name).toBe('in');
    expect(resolvePolicy(session({ labels: { env: 'dev' } }), inP)).toBeUndefined();
    expect(resolvePolicy(session({}), inP)).toBeUndefined();

    const notIn = [p('notin', { key: 'env', operator: 'NotIn', values: ['dev'] })];
    expect(resolvePolicy(session({ labels: { env: 'prod' } }), notIn)?.metadata.name).toBe('notin');
    expect(resolvePolicy(session({}), notIn)?.metadata.name).toBe('notin');
    expect(resolvePolicy(session({ labels: { env: 'dev' } }), notIn)).toBeUndefined();

    const exists = [p('exists', { key: 'gpu', operator: 'Exists' })];
    expect(resolvePolicy(session({ labels: { gpu: '' } }), exists)?.metadata.name).toBe('exists');
    expect(resolvePolicy(session({ labels: { cpu: 'x' } }), exists)).toBeUndefined();

    const absent = [p('absent', { key: 'gpu', operator: 'DoesNotExist' })];
    expect(resolvePolicy(session({ labels: { cpu: 'x' } }), absent)?.metadata.name).toBe('absent');
    expect(resolvePolicy(session({ labels: { gpu: 'a100' } }), absent)).toBeUndefined();
  });

  it('combines matchLabels and matchExpressions with AND', () => {
    const ps = [
      policy('both', {
        selector: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      }),
    ];
    expect(resolvePolicy(session({ labels: { team: 'a', env: 'prod' } }), ps)?.metadata.name).toBe('both');
    expect(resolvePolicy(session({ labels: { team: 'a', env: 'dev' } }), ps)).toBeUndefined();
    expect(resolvePolicy(session({ labels: { team: 'b', env: 'prod' } }), ps)).toBeUndefined();
  });

  it('a policy without a selector selects nothing; an empty selector selects everything', () => {
    expect(resolvePolicy(session({ labels: { a: 'b' } }), [policy('nosel')])).toBeUndefined();
    expect(resolvePolicy(session({ labels: { a: 'b' } }), [policy('all', { selector: {} })])?.metadata.name).toBe(
      'all',
    );
  });

  it('the highest priority wins among matching policies, whatever their order', () => {
    const ps = [
      policy('low', { selector: { matchLabels: { team: 'a' } }, priority: 1 }),
      policy('high', { selector: { matchLabels: { team: 'a' } }, priority: 10 }),
      policy('higher-but-unmatched', { selector: { matchLabels: { team: 'b' } }, priority: 99 }),
      policy('unset', { selector: { matchLabels: { team: 'a' } } }),
    ];
    const s = session({ labels: { team: 'a' } });
    expect(resolvePolicy(s, ps)?.metadata.name).toBe('high');
    expect(resolvePolicy(s, [...ps].reverse())?.metadata.name).toBe('high');
  });

  it('priority defaults to 0, so a negative priority loses to an unset one', () => {
    const ps = [policy('neg', { selector: {}, priority: -5 }), policy('zero', { selector: {} })];
    expect(resolvePolicy(session(), ps)?.metadata.name).toBe('zero');
  });

  it('equal priority is broken by name, ascending', () => {
    const ps = [
      policy('charlie', { selector: {}, priority: 5 }),
      policy('alpha', { selector: {}, priority: 5 }),
      policy('bravo', { selector: {}, priority: 5 }),
    ];
    expect(resolvePolicy(session(), ps)?.metadata.name).toBe('alpha');
    expect(resolvePolicy(session(), [...ps].reverse())?.metadata.name).toBe('alpha');
  });

  it('falls back to the policy named "default" when no selector matches', () => {
    const ps = [policy('other', { selector: { matchLabels: { team: 'x' } } }), policy('default')];
    expect(resolvePolicy(session({ labels: { team: 'y' } }), ps)?.metadata.name).toBe('default');
    // A matching policy wins over "default", whatever the priorities.
    const ps2 = [
      policy('default', { priority: 100 }),
      policy('m', { selector: { matchLabels: { team: 'y' } }, priority: -1 }),
    ];
    expect(resolvePolicy(session({ labels: { team: 'y' } }), ps2)?.metadata.name).toBe('m');
  });

  it('no matching policy and no "default" gives undefined', () => {
    expect(resolvePolicy(session(), [])).toBeUndefined();
    expect(
      resolvePolicy(session({ labels: { team: 'y' } }), [
        policy('other', { selector: { matchLabels: { team: 'x' } } }),
      ]),
    ).toBeUndefined();
  });

  it('ignores policies in other namespaces, including their "default"', () => {
    const ps = [
      policy('sel', { selector: {}, priority: 50 }, { namespace: 'team-b' }),
      policy('default', {}, { namespace: 'team-b' }),
      policy('mine', { selector: {}, priority: 1 }, { namespace: 'team-a' }),
    ];
    expect(resolvePolicy(session({ namespace: 'team-a' }), ps)?.metadata.name).toBe('mine');
    expect(resolvePolicy(session({ namespace: 'team-c' }), ps)).toBeUndefined();
  });

  it('ignores policies being deleted (selecting and "default")', () => {
    const ps = [
      policy('going', { selector: {}, priority: 50 }, { deletionTimestamp: iso(0) }),
      policy('staying', { selector: {} }),
    ];
    expect(resolvePolicy(session(), ps)?.metadata.name).toBe('staying');
    expect(resolvePolicy(session(), [policy('default', {}, { deletionTimestamp: iso(0) })])).toBeUndefined();
  });
});

describe('effective', () => {
  it('defaults: Never, 3 restarts, Stop, 10s/5m backoff, no cooldown, 10s grace, no max duration', () => {
    expect(DEFAULT_MAX_RESTARTS).toBe(3);
    expect([DEFAULT_INITIAL_BACKOFF, DEFAULT_MAX_BACKOFF, DEFAULT_GRACE]).toEqual(['10s', '5m', '10s']);
    expect(effective({}, undefined)).toEqual({
      restartPolicy: 'Never',
      maxRestarts: 3,
      maxDurationMs: undefined,
      timeoutAction: 'Stop',
      initialBackoffMs: 10_000,
      maxBackoffMs: 300_000,
      cooldownMs: 0,
      graceMs: 10_000,
    });
  });

  it('takes maxRestarts, maxSessionDuration, timeoutAction and cooldown from the policy', () => {
    const p = policy('p', { maxRestarts: 7, maxSessionDuration: '1h30m', timeoutAction: 'Warn', cooldown: '2m' });
    expect(effective({}, p)).toMatchObject({
      maxRestarts: 7,
      maxDurationMs: 5_400_000,
      timeoutAction: 'Warn',
      cooldownMs: 120_000,
      restartPolicy: 'Never',
    });
  });

  it("the session's own fields win over the policy's", () => {
    const p = policy('p', { maxRestarts: 7, maxSessionDuration: '1h', timeoutAction: 'Warn' });
    const e = effective({ restartPolicy: 'OnFailure', maxRestarts: 1, maxDuration: '45m', timeoutAction: 'Stop' }, p);
    expect(e).toMatchObject({
      restartPolicy: 'OnFailure',
      maxRestarts: 1,
      maxDurationMs: 2_700_000,
      timeoutAction: 'Stop',
    });
  });

  it('maxRestarts 0 on the session is kept (not replaced by the policy or the default)', () => {
    expect(effective({ maxRestarts: 0 }, policy('p', { maxRestarts: 5 })).maxRestarts).toBe(0);
    expect(effective({ maxRestarts: 0 }, undefined).maxRestarts).toBe(0);
    expect(effective({}, policy('p', { maxRestarts: 0 })).maxRestarts).toBe(0);
  });

  it('restartBackoff fields override each default independently', () => {
    expect(effective({ restartBackoff: { initialDelay: '500ms' } }, undefined)).toMatchObject({
      initialBackoffMs: 500,
      maxBackoffMs: 300_000,
    });
    expect(effective({ restartBackoff: { maxDelay: '1m' } }, undefined)).toMatchObject({
      initialBackoffMs: 10_000,
      maxBackoffMs: 60_000,
    });
    expect(effective({ restartBackoff: { initialDelay: '1s', maxDelay: '2h' } }, undefined)).toMatchObject({
      initialBackoffMs: 1000,
      maxBackoffMs: 7_200_000,
    });
  });

  it("graceMs is the agent's stop grace period when given", () => {
    expect(effective({}, undefined, '30s').graceMs).toBe(30_000);
    expect(effective({}, undefined, '250ms').graceMs).toBe(250);
  });

  it('restartPolicy comes only from the session', () => {
    // A policy has no restartPolicy (an old manifest may still carry one): it is ignored.
    expect(effective({}, policy('p', { restartPolicy: 'Always' } as never)).restartPolicy).toBe('Never');
    expect(effective({ restartPolicy: 'Always' }, undefined).restartPolicy).toBe('Always');
  });

  it('rejects invalid durations', () => {
    expect(() => effective({ maxDuration: 'soon' }, undefined)).toThrow(/invalid duration/);
  });
});

describe('backoffMs', () => {
  it('doubles from the initial delay', () => {
    const e = eff({ initialBackoffMs: 10_000, maxBackoffMs: 300_000, cooldownMs: 0 });
    expect([0, 1, 2, 3, 4].map((n) => backoffMs(e, n))).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
  });

  it('is capped by maxDelay', () => {
    const e = eff({ initialBackoffMs: 10_000, maxBackoffMs: 300_000, cooldownMs: 0 });
    expect(backoffMs(e, 5)).toBe(300_000); // 320s capped
    expect(backoffMs(e, 50)).toBe(300_000);
    expect(backoffMs(e, 5000)).toBe(300_000); // 2^5000 is Infinity: still capped
  });

  it('never goes below the policy cooldown', () => {
    const e = eff({ initialBackoffMs: 1000, maxBackoffMs: 300_000, cooldownMs: 60_000 });
    expect(backoffMs(e, 0)).toBe(60_000);
    expect(backoffMs(e, 5)).toBe(60_000); // 32s < cooldown
    expect(backoffMs(e, 6)).toBe(64_000);
    // The cooldown wins even over a maxDelay below it.
    expect(backoffMs(eff({ initialBackoffMs: 1000, maxBackoffMs: 5000, cooldownMs: 20_000 }), 10)).toBe(20_000);
  });

  it('is monotonic in the number of restarts', () => {
    const e = eff({ initialBackoffMs: 300, maxBackoffMs: 90_000, cooldownMs: 1000 });
    let prev = 0;
    for (let n = 0; n < 40; n++) {
      const d = backoffMs(e, n);
      expect(d).toBeGreaterThanOrEqual(prev);
      expect(d).toBeLessThanOrEqual(90_000);
      expect(d).toBeGreaterThanOrEqual(1000);
      prev = d;
    }
  });
});

describe('admit', () => {
  it('admits with no policy and says so', () => {
    expect(
      admit(undefined, 100, host({ memoryAvailableBytes: 0, diskFreeBytes: 0, loadAverage: [100, 0, 0] })),
    ).toEqual({
      admitted: true,
      reason: 'Admitted',
      message: 'admitted (no SessionPolicy applies)',
    });
  });

  it('admits under a policy whose limits hold, naming it', () => {
    const p = policy('p', { maxConcurrentSessions: 2, minFreeMemoryMB: 1024, minFreeDiskMB: 1024, maxLoadPerCPU: 1 });
    expect(admit(p, 1, host())).toEqual({
      admitted: true,
      reason: 'Admitted',
      message: 'admitted under SessionPolicy "p"',
    });
  });

  it('refuses on an unschedulable node before anything else, policy or not', () => {
    const expected = { admitted: false, reason: 'NodeUnschedulable', message: 'the node is marked unschedulable' };
    expect(admit(undefined, 0, host(), true)).toEqual(expected);
    expect(admit(policy('p', { maxConcurrentSessions: 0 }), 5, host({ memoryAvailableBytes: 0 }), true)).toEqual(
      expected,
    );
  });

  it('maxConcurrentSessions: refuses when active sessions reach the limit', () => {
    const p = policy('p', { maxConcurrentSessions: 2 });
    expect(admit(p, 1, host()).admitted).toBe(true);
    expect(admit(p, 2, host())).toEqual({
      admitted: false,
      reason: 'MaxConcurrentSessions',
      message: '2 sessions already run under SessionPolicy "p" (maxConcurrentSessions 2)',
    });
    expect(admit(p, 3, host()).reason).toBe('MaxConcurrentSessions');
    expect(admit(policy('zero', { maxConcurrentSessions: 0 }), 0, host()).reason).toBe('MaxConcurrentSessions');
  });

  it('minFreeMemoryMB: compares whole MB of available memory', () => {
    const p = policy('p', { minFreeMemoryMB: 512 });
    expect(admit(p, 0, host({ memoryAvailableBytes: 512 * MB })).admitted).toBe(true);
    expect(admit(p, 0, host({ memoryAvailableBytes: 512 * MB - 1 }))).toEqual({
      admitted: false,
      reason: 'InsufficientMemory',
      message: '511 MB memory available, SessionPolicy "p" requires 512 MB',
    });
    // Only memoryAvailableBytes counts, not the total.
    expect(admit(p, 0, host({ memoryAvailableBytes: 100 * MB, memoryTotalBytes: 64_000 * MB })).reason).toBe(
      'InsufficientMemory',
    );
  });

  it('minFreeDiskMB: compares whole MB of free disk', () => {
    const p = policy('p', { minFreeDiskMB: 2048 });
    expect(admit(p, 0, host({ diskFreeBytes: 2048 * MB })).admitted).toBe(true);
    expect(admit(p, 0, host({ diskFreeBytes: 1000 * MB + 5 }))).toEqual({
      admitted: false,
      reason: 'InsufficientDisk',
      message: '1000 MB disk free, SessionPolicy "p" requires 2048 MB',
    });
  });

  it('maxLoadPerCPU: the 1-minute load average divided by the CPU count', () => {
    const p = policy('p', { maxLoadPerCPU: 1.5 });
    // 1.5, equal is fine; the 5- and 15-minute averages are ignored
    expect(admit(p, 0, host({ cpu: 4, loadAverage: [6, 100, 100] })).admitted).toBe(true);
    expect(admit(p, 0, host({ cpu: 4, loadAverage: [6.2, 0, 0] }))).toEqual({
      admitted: false,
      reason: 'HighLoad',
      message: 'load 6.20 on 4 CPUs exceeds SessionPolicy "p" maxLoadPerCPU 1.5',
    });
    // A CPU count of 0 is treated as 1.
    expect(admit(policy('q', { maxLoadPerCPU: 1 }), 0, host({ cpu: 0, loadAverage: [0.5, 0, 0] })).admitted).toBe(true);
    expect(admit(policy('q', { maxLoadPerCPU: 1 }), 0, host({ cpu: 0, loadAverage: [1.5, 0, 0] })).reason).toBe(
      'HighLoad',
    );
  });

  it('checks concurrency, then memory, then disk, then load', () => {
    const p = policy('p', { maxConcurrentSessions: 1, minFreeMemoryMB: 1000, minFreeDiskMB: 1000, maxLoadPerCPU: 0.5 });
    const bad = host({ memoryAvailableBytes: 0, diskFreeBytes: 0, loadAverage: [10, 0, 0] });
    expect(admit(p, 1, bad).reason).toBe('MaxConcurrentSessions');
    expect(admit(p, 0, bad).reason).toBe('InsufficientMemory');
    expect(admit(p, 0, { ...bad, memoryAvailableBytes: 2000 * MB }).reason).toBe('InsufficientDisk');
    expect(admit(p, 0, { ...bad, memoryAvailableBytes: 2000 * MB, diskFreeBytes: 2000 * MB }).reason).toBe('HighLoad');
  });

  it('limits a policy does not set are not checked', () => {
    expect(
      admit(policy('p', {}), 1000, host({ memoryAvailableBytes: 0, diskFreeBytes: 0, loadAverage: [99, 0, 0] }))
        .admitted,
    ).toBe(true);
  });
});

describe('wantsRunning', () => {
  it('is true unless desiredState is Stopped', () => {
    expect(wantsRunning(session())).toBe(true);
    expect(wantsRunning(session({ spec: { desiredState: 'Running' } }))).toBe(true);
    expect(wantsRunning(session({ spec: { desiredState: 'Stopped' } }))).toBe(false);
    expect(wantsRunning({ ...session(), spec: undefined })).toBe(true);
  });
});

describe('observedEvent', () => {
  const alive: PaneState = { kind: 'alive' };
  const missing: PaneState = { kind: 'missing' };
  const dead = (exitCode: number): PaneState => ({ kind: 'dead', exitCode });
  const obs = (phase: Phase, s: AgentSession, pane: PaneState = alive, e: Effective = EFF, now = NOW) =>
    observedEvent({ phase, session: s, pane, now, effective: e });
  const stopped = (status?: AgentSessionStatus) => session({ spec: { desiredState: 'Stopped' }, status });

  describe('Starting', () => {
    it('a live pane means STARTED', () => {
      expect(obs('Starting', session(), alive)).toEqual({ type: 'STARTED' });
    });
    it('a dead pane means EXITED with its code', () => {
      expect(obs('Starting', session(), dead(0))).toEqual({ type: 'EXITED', exitCode: 0 });
      expect(obs('Starting', session(), dead(127))).toEqual({ type: 'EXITED', exitCode: 127 });
    });
    it('a missing pane is not yet a verdict', () => {
      expect(obs('Starting', session(), missing)).toBeUndefined();
      expect(obs('Starting', stopped(), missing)).toBeUndefined();
    });
    it('desiredState Stopped means STOP', () => {
      expect(obs('Starting', stopped(), alive)).toEqual({ type: 'STOP' });
    });
    it('never TIMEOUT, even past the deadline (the timer is for Running)', () => {
      expect(obs('Starting', session({ status: { deadlineTime: iso(-60_000) } }), alive)).toEqual({ type: 'STARTED' });
    });
  });

  describe('Running', () => {
    it('a live pane within its deadline: nothing to do', () => {
      expect(obs('Running', session(), alive)).toBeUndefined();
      expect(obs('Running', session({ status: { deadlineTime: iso(1) } }), alive)).toBeUndefined();
    });
    it('a dead pane means EXITED, before anything else', () => {
      expect(obs('Running', session(), dead(0))).toEqual({ type: 'EXITED', exitCode: 0 });
      expect(obs('Running', stopped({ deadlineTime: iso(-1) }), dead(2))).toEqual({ type: 'EXITED', exitCode: 2 });
    });
    it('a missing pane means GONE', () => {
      expect(obs('Running', session(), missing)).toEqual({ type: 'GONE' });
      expect(obs('Running', stopped(), missing)).toEqual({ type: 'GONE' });
    });
    it('desiredState Stopped means STOP, before TIMEOUT', () => {
      expect(obs('Running', stopped(), alive)).toEqual({ type: 'STOP' });
      expect(obs('Running', stopped({ deadlineTime: iso(-1000) }), alive)).toEqual({ type: 'STOP' });
    });
    it('TIMEOUT once status.deadlineTime has passed (inclusive) with timeoutAction Stop', () => {
      expect(obs('Running', session({ status: { deadlineTime: iso(0) } }), alive)).toEqual({ type: 'TIMEOUT' });
      expect(obs('Running', session({ status: { deadlineTime: iso(-60_000) } }), alive)).toEqual({ type: 'TIMEOUT' });
    });
    it('no TIMEOUT with timeoutAction Warn', () => {
      expect(
        obs('Running', session({ status: { deadlineTime: iso(-60_000) } }), alive, eff({ timeoutAction: 'Warn' })),
      ).toBeUndefined();
    });
    it('no TIMEOUT without a deadline', () => {
      expect(obs('Running', session({ status: {} }), alive, eff({ maxDurationMs: 1 }))).toBeUndefined();
    });
  });

  describe('Stopping', () => {
    const grace = eff({ graceMs: 10_000 });
    it('a dead pane means EXITED, a missing one GONE', () => {
      expect(obs('Stopping', session({ status: { stopRequestTime: iso(-1000) } }), dead(143), grace)).toEqual({
        type: 'EXITED',
        exitCode: 143,
      });
      expect(obs('Stopping', session({ status: { stopRequestTime: iso(-1000) } }), missing, grace)).toEqual({
        type: 'GONE',
      });
    });
    it('GRACE_EXPIRED once stopRequestTime + grace has passed (inclusive)', () => {
      expect(obs('Stopping', session({ status: { stopRequestTime: iso(-9_999) } }), alive, grace)).toBeUndefined();
      expect(obs('Stopping', session({ status: { stopRequestTime: iso(-10_000) } }), alive, grace)).toEqual({
        type: 'GRACE_EXPIRED',
      });
      expect(obs('Stopping', session({ status: { stopRequestTime: iso(-60_000) } }), alive, grace)).toEqual({
        type: 'GRACE_EXPIRED',
      });
    });
    it('uses the effective grace period', () => {
      expect(
        obs('Stopping', session({ status: { stopRequestTime: iso(-15_000) } }), alive, eff({ graceMs: 30_000 })),
      ).toBeUndefined();
      expect(
        obs('Stopping', session({ status: { stopRequestTime: iso(-15_000) } }), alive, eff({ graceMs: 5_000 })),
      ).toEqual({ type: 'GRACE_EXPIRED' });
    });
    it('without a stopRequestTime, waits', () => {
      expect(obs('Stopping', session({ status: {} }), alive, grace)).toBeUndefined();
    });
    it('desiredState and deadlines do not matter while stopping', () => {
      expect(obs('Stopping', stopped({ deadlineTime: iso(-1000) }), alive, grace)).toBeUndefined();
    });
  });

  describe('Backoff', () => {
    const lifecycle = { runGeneration: 1 };
    it('RESTART_DUE once nextRestartTime has passed (inclusive), or when none is set', () => {
      expect(obs('Backoff', session({ status: { nextRestartTime: iso(1), lifecycle } }))).toBeUndefined();
      expect(obs('Backoff', session({ status: { nextRestartTime: iso(0), lifecycle } }))).toEqual({
        type: 'RESTART_DUE',
      });
      expect(obs('Backoff', session({ status: { nextRestartTime: iso(-5000), lifecycle } }))).toEqual({
        type: 'RESTART_DUE',
      });
      expect(obs('Backoff', session({ status: { lifecycle } }))).toEqual({ type: 'RESTART_DUE' });
      expect(obs('Backoff', session())).toEqual({ type: 'RESTART_DUE' });
    });
    it('NEW_RUN when the generation differs from status.lifecycle.runGeneration, even before a restart is due', () => {
      expect(obs('Backoff', session({ generation: 2, status: { nextRestartTime: iso(60_000), lifecycle } }))).toEqual({
        type: 'NEW_RUN',
      });
      expect(obs('Backoff', session({ generation: 2, status: { nextRestartTime: iso(-1), lifecycle } }))).toEqual({
        type: 'NEW_RUN',
      });
    });
    it('no NEW_RUN when no runGeneration was recorded', () => {
      expect(obs('Backoff', session({ generation: 9, status: { nextRestartTime: iso(60_000) } }))).toBeUndefined();
    });
    it('STOP when desiredState is Stopped, before NEW_RUN and RESTART_DUE', () => {
      expect(
        obs(
          'Backoff',
          session({
            generation: 2,
            spec: { desiredState: 'Stopped' },
            status: { nextRestartTime: iso(-1), lifecycle },
          }),
        ),
      ).toEqual({ type: 'STOP' });
    });
    it('the pane does not matter', () => {
      expect(obs('Backoff', session({ status: { nextRestartTime: iso(10), lifecycle } }), dead(1))).toBeUndefined();
    });
    it('an Escalated condition (a late judge verdict) holds a scheduled restart; spec change or Stop still act', () => {
      const conditions = [cond('Escalated', 'True')];
      expect(
        obs('Backoff', session({ status: { nextRestartTime: iso(-5000), lifecycle, conditions } })),
      ).toBeUndefined();
      expect(
        nextLookMs('Backoff', session({ status: { nextRestartTime: iso(-5000), lifecycle, conditions } }), NOW, EFF),
      ).toBeUndefined();
      expect(
        obs('Backoff', session({ generation: 2, status: { nextRestartTime: iso(-1), lifecycle, conditions } })),
      ).toEqual({ type: 'NEW_RUN' });
      expect(obs('Backoff', session({ spec: { desiredState: 'Stopped' }, status: { lifecycle, conditions } }))).toEqual(
        { type: 'STOP' },
      );
    });
    it("the judge's escalation (JudgeEscalated) does not hold restarts: the restart policy bounds the retries", () => {
      const conditions = [{ ...cond('Escalated', 'True'), reason: 'JudgeEscalated' }];
      expect(obs('Backoff', session({ status: { nextRestartTime: iso(-1), lifecycle, conditions } }))).toEqual({
        type: 'RESTART_DUE',
      });
      expect(
        obs(
          'Failed',
          session({ spec: { restartPolicy: 'OnFailure' }, status: { lifecycle, conditions } }),
          dead(1),
          eff({ restartPolicy: 'OnFailure' }),
        ),
      ).toMatchObject({ type: 'RESTART' });
    });
  });

  describe.each(['Failed', 'Killed', 'TimedOut'] as Phase[])('%s (a failure)', (phase) => {
    it.each([
      ['OnFailure', 3],
      ['Always', 0],
    ] as const)('RESTART with policy %s and maxRestarts %i', (restartPolicy, maxRestarts) => {
      expect(
        obs(phase, session({ status: { reason: 'Error' } }), missing, eff({ restartPolicy, maxRestarts })),
      ).toEqual({ type: 'RESTART', restartPolicy, maxRestarts });
    });
    it('nothing with restartPolicy Never', () => {
      expect(obs(phase, session(), missing, eff({ restartPolicy: 'Never' }))).toBeUndefined();
    });
    it('nothing once Escalated is True; RESTART when it is False', () => {
      const e = eff({ restartPolicy: 'OnFailure' });
      expect(obs(phase, session({ status: { conditions: [cond('Escalated', 'True')] } }), missing, e)).toBeUndefined();
      expect(obs(phase, session({ status: { conditions: [cond('Escalated', 'False')] } }), missing, e)).toMatchObject({
        type: 'RESTART',
      });
    });
    it('nothing when the run ended because it was Stopped', () => {
      expect(
        obs(phase, session({ status: { reason: 'Stopped' } }), missing, eff({ restartPolicy: 'Always' })),
      ).toBeUndefined();
    });
    it('nothing when desiredState is Stopped', () => {
      expect(obs(phase, stopped(), missing, eff({ restartPolicy: 'Always' }))).toBeUndefined();
    });
  });

  describe('Succeeded', () => {
    it('RESTART only with restartPolicy Always', () => {
      expect(obs('Succeeded', session(), missing, eff({ restartPolicy: 'Always', maxRestarts: 2 }))).toEqual({
        type: 'RESTART',
        restartPolicy: 'Always',
        maxRestarts: 2,
      });
      expect(obs('Succeeded', session(), missing, eff({ restartPolicy: 'OnFailure' }))).toBeUndefined();
      expect(obs('Succeeded', session(), missing, eff({ restartPolicy: 'Never' }))).toBeUndefined();
    });
  });

  describe.each(['Succeeded', 'Failed', 'Killed', 'TimedOut'] as Phase[])('%s: NEW_RUN', (phase) => {
    const lifecycle = { runGeneration: 3 };
    it('when the generation changed since the run started and desiredState is Running', () => {
      expect(obs(phase, session({ generation: 4, status: { lifecycle } }), missing)).toEqual({ type: 'NEW_RUN' });
      expect(
        obs(phase, session({ generation: 4, spec: { desiredState: 'Running' }, status: { lifecycle } }), missing),
      ).toEqual({ type: 'NEW_RUN' });
    });
    it('even when escalated or stopped before (the changed spec asks to run again)', () => {
      const status = { lifecycle, reason: 'Stopped', conditions: [cond('Escalated', 'True')] };
      expect(obs(phase, session({ generation: 4, status }), missing, eff({ restartPolicy: 'Never' }))).toEqual({
        type: 'NEW_RUN',
      });
    });
    it('not when desiredState is Stopped', () => {
      expect(
        obs(
          phase,
          session({ generation: 4, spec: { desiredState: 'Stopped' }, status: { lifecycle } }),
          missing,
          eff({ restartPolicy: 'Always' }),
        ),
      ).toBeUndefined();
    });
    it('not when the generation is unchanged or no runGeneration was recorded', () => {
      expect(obs(phase, session({ generation: 3, status: { lifecycle } }), missing)).toBeUndefined();
      expect(obs(phase, session({ generation: 4, status: {} }), missing)).toBeUndefined();
    });
    it('treats a missing metadata.generation as 0', () => {
      const s = session({ status: { lifecycle: { runGeneration: 0 } } });
      delete s.metadata.generation;
      expect(obs(phase, s, missing)).toBeUndefined();
      s.status!.lifecycle = { runGeneration: 1 };
      expect(obs(phase, s, missing)).toEqual({ type: 'NEW_RUN' });
    });
  });

  it('Pending: never an event (admission is decided separately)', () => {
    for (const pane of [alive, missing, dead(1)]) {
      expect(obs('Pending', session(), pane)).toBeUndefined();
      expect(obs('Pending', stopped(), pane)).toBeUndefined();
      expect(
        obs(
          'Pending',
          session({ generation: 5, status: { lifecycle: { runGeneration: 1 }, deadlineTime: iso(-1) } }),
          pane,
        ),
      ).toBeUndefined();
    }
  });

  it('is level-triggered: the same inputs give the same answer', () => {
    const s = session({ status: { deadlineTime: iso(-1) } });
    const a = obs('Running', s);
    expect(obs('Running', s)).toEqual(a);
    expect(obs('Running', s)).toEqual({ type: 'TIMEOUT' });
  });

  it('works without a status at all', () => {
    const s = { ...session(), status: undefined };
    expect(obs('Running', s)).toBeUndefined();
    expect(obs('Stopping', s)).toBeUndefined();
    expect(obs('Backoff', s)).toEqual({ type: 'RESTART_DUE' });
    expect(obs('Failed', s, missing, eff({ restartPolicy: 'OnFailure', maxRestarts: 3 }))).toEqual({
      type: 'RESTART',
      restartPolicy: 'OnFailure',
      maxRestarts: 3,
    });
  });
});

describe('nextLookMs', () => {
  const look = (phase: Phase, status: AgentSessionStatus | undefined, e: Effective = EFF) =>
    nextLookMs(phase, session({ status }), NOW, e);

  it('Running/Starting: only when the deadline (timeoutAction Stop) falls due; routine observation is the tick', () => {
    for (const phase of ['Running', 'Starting'] as Phase[]) {
      expect(look(phase, {})).toBeUndefined();
      expect(look(phase, { deadlineTime: iso(60_000) })).toBe(60_000);
      expect(look(phase, { deadlineTime: iso(700) })).toBe(700);
      expect(look(phase, { deadlineTime: iso(-5000) })).toBe(0); // overdue: now
    }
  });

  it('Running with timeoutAction Warn: wakes for the deadline until TimeBoxExceeded is True', () => {
    const warn = eff({ timeoutAction: 'Warn' });
    expect(look('Running', { deadlineTime: iso(700) }, warn)).toBe(700);
    expect(look('Running', { deadlineTime: iso(700), conditions: [cond('TimeBoxExceeded', 'False')] }, warn)).toBe(700);
    expect(
      look('Running', { deadlineTime: iso(-100), conditions: [cond('TimeBoxExceeded', 'True')] }, warn),
    ).toBeUndefined();
    // Starting with Warn does not wake for the deadline.
    expect(look('Starting', { deadlineTime: iso(700) }, warn)).toBeUndefined();
  });

  it('Stopping: when the grace period ends', () => {
    const g = eff({ graceMs: 10_000 });
    expect(look('Stopping', { stopRequestTime: iso(-9_000) }, g)).toBe(1000);
    expect(look('Stopping', { stopRequestTime: iso(-1_000) }, g)).toBe(9000);
    expect(look('Stopping', { stopRequestTime: iso(-20_000) }, g)).toBe(0);
    // Without a stop request time: every 500 ms.
    expect(look('Stopping', {}, g)).toBe(500);
  });

  it('Backoff: when the restart is due, at once if overdue or unset', () => {
    expect(look('Backoff', { nextRestartTime: iso(45_000) })).toBe(45_000);
    expect(look('Backoff', { nextRestartTime: iso(-1) })).toBe(0);
    expect(look('Backoff', {})).toBe(0);
  });

  it.each(['Pending', 'Succeeded', 'Failed', 'Killed', 'TimedOut'] as Phase[])('%s: no timed look', (phase) => {
    expect(look(phase, { deadlineTime: iso(10), nextRestartTime: iso(10), stopRequestTime: iso(-10) })).toBeUndefined();
    expect(look(phase, undefined)).toBeUndefined();
  });
});
