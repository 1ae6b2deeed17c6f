/**
 * Pure decisions of the session reconciler: which policy applies, whether a session may start
 * (admission), which lifecycle events the observed world implies, and when to look again.
 * Desired + observed in, events/decisions out — no tmux, git or files here.
 */
import { parseDuration } from '../../api/duration.js';
import { RunEndReason } from '../../api/event-reasons.js';
import type { AgentSession, AgentSessionSpec, SessionPolicy } from '../../api/kinds.js';
import { isTrue } from '../../api/conditions.js';
import { restartRequested, wantsRunning } from '../../api/session-intent.js';
import { BUDGET_DEFAULTS, budgetExceeded } from '../../api/pause.js';
import type { Condition } from '../../api/types.js';
import type { HostSnapshot } from '../../observers/host.js';
import type { LifecycleEvent, Phase, RestartPolicy } from './machine.js';

/** status.reason of a run its node's fuse hung up (app/watchdog.ts). */
export const FENCED_REASON = RunEndReason.NodeFenced;
export const DEFAULT_MAX_RESTARTS = 3; // seed 002's retry cap
export const DEFAULT_INITIAL_BACKOFF = '10s';
export const DEFAULT_MAX_BACKOFF = '5m';
export const DEFAULT_GRACE = '10s';

export { resolvePolicy } from '../../api/policy.js';

/** Effective limits: the session's own fields win over its policy's, then built-in defaults. */
export interface Effective {
  restartPolicy: RestartPolicy;
  maxRestarts: number;
  maxDurationMs?: number;
  timeoutAction: 'Stop' | 'Warn';
  initialBackoffMs: number;
  maxBackoffMs: number;
  cooldownMs: number;
  graceMs: number;
}

export function effective(spec: AgentSessionSpec, policy: SessionPolicy | undefined, agentGrace?: string): Effective {
  const p = policy?.spec ?? {};
  const maxDuration = spec.maxDuration ?? p.maxSessionDuration;
  return {
    restartPolicy: spec.restartPolicy ?? 'Never',
    maxRestarts: spec.maxRestarts ?? p.maxRestarts ?? DEFAULT_MAX_RESTARTS,
    maxDurationMs: maxDuration ? parseDuration(maxDuration) : undefined,
    timeoutAction: spec.timeoutAction ?? p.timeoutAction ?? 'Stop',
    initialBackoffMs: parseDuration(spec.restartBackoff?.initialDelay ?? DEFAULT_INITIAL_BACKOFF),
    maxBackoffMs: parseDuration(spec.restartBackoff?.maxDelay ?? DEFAULT_MAX_BACKOFF),
    cooldownMs: p.cooldown ? parseDuration(p.cooldown) : 0,
    graceMs: parseDuration(agentGrace ?? DEFAULT_GRACE),
  };
}

/** Exponential restart backoff: initial · 2^(restarts so far), capped; never below the policy cooldown. */
export function backoffMs(e: Effective, restartsSoFar: number): number {
  return Math.max(Math.min(e.initialBackoffMs * 2 ** restartsSoFar, e.maxBackoffMs), e.cooldownMs);
}

export interface Admission {
  admitted: boolean;
  reason: string;
  message: string;
}

/** Admission in Pending: SessionPolicy limits against what runs now and what the host has free. */
export function admit(
  policy: SessionPolicy | undefined,
  activeUnderPolicy: number,
  host: HostSnapshot,
  nodeUnschedulable = false,
): Admission {
  if (nodeUnschedulable)
    return { admitted: false, reason: 'NodeUnschedulable', message: 'the node is marked unschedulable' };
  const p = policy?.spec ?? {};
  const name = policy ? `SessionPolicy "${policy.metadata.name}"` : 'policy';
  if (budgetExceeded(policy)) {
    const b = policy!.status!.budget!;
    const window = p.budget?.window ?? BUDGET_DEFAULTS.window;
    return {
      admitted: false,
      reason: 'BudgetExceeded',
      message: `${name} budget exceeded (${b.display} in ${window})`,
    };
  }
  if (p.maxConcurrentSessions !== undefined && activeUnderPolicy >= p.maxConcurrentSessions)
    return {
      admitted: false,
      reason: 'MaxConcurrentSessions',
      message:
        `${activeUnderPolicy} sessions already run under ${name} ` +
        `(maxConcurrentSessions ${p.maxConcurrentSessions})`,
    };
  const freeMB = Math.floor(host.memoryAvailableBytes / 1048576);
  if (p.minFreeMemoryMB !== undefined && freeMB < p.minFreeMemoryMB)
    return {
      admitted: false,
      reason: 'InsufficientMemory',
      message: `${freeMB} MB memory available, ${name} requires ${p.minFreeMemoryMB} MB`,
    };
  const diskMB = Math.floor(host.diskFreeBytes / 1048576);
  if (p.minFreeDiskMB !== undefined && diskMB < p.minFreeDiskMB)
    return {
      admitted: false,
      reason: 'InsufficientDisk',
      message: `${diskMB} MB disk free, ${name} requires ${p.minFreeDiskMB} MB`,
    };
  const loadPerCpu = host.loadAverage[0] / Math.max(1, host.cpu);
  if (p.maxLoadPerCPU !== undefined && loadPerCpu > p.maxLoadPerCPU)
    return {
      admitted: false,
      reason: 'HighLoad',
      message:
        `load ${host.loadAverage[0].toFixed(2)} on ${host.cpu} CPUs ` +
        `exceeds ${name} maxLoadPerCPU ${p.maxLoadPerCPU}`,
    };
  return {
    admitted: true,
    reason: 'Admitted',
    message: policy ? `admitted under ${name}` : 'admitted (no SessionPolicy applies)',
  };
}

/**
 * What tmux shows for the current run. A dead one says when it ended (`at`, ms) when that is known
 * (the exit-code file's mtime, tmux's pane_dead_time): the run may have ended long before it is noticed.
 */
export type PaneState =
  | { kind: 'alive' }
  | { kind: 'dead'; exitCode: number; at?: number; fenced?: boolean }
  | { kind: 'missing' };

/** EXITED for a dead pane, with when it ended when that is known. */
const exited = (pane: Extract<PaneState, { kind: 'dead' }>): LifecycleEvent => ({
  type: 'EXITED',
  exitCode: pane.exitCode,
  ...(pane.at !== undefined ? { at: pane.at } : {}),
  ...(pane.fenced ? { fenced: true } : {}),
});

export interface ObservedInput {
  phase: Phase;
  session: AgentSession;
  pane: PaneState;
  now: number;
  effective: Effective;
}

export { restartRequested, wantsRunning };

/**
 * Whether an Escalated condition stops restarts. It does — except the judge's (reason
 * JudgeEscalated): a low score on a failed run is what a retry is for, and the restart policy the
 * user wrote bounds the retries (maxRestarts), each told how the last one went. The judge's
 * escalation is for people (a Warning event, the alert), not a brake on the restart policy.
 */
export function restartsHeld(conditions: Condition[] | undefined): boolean {
  return !!conditions?.some((c) => c.type === 'Escalated' && c.status === 'True' && c.reason !== 'JudgeEscalated');
}

/**
 * The lifecycle event the observed world implies right now (level-triggered: the same inputs
 * give the same answer, however often it is asked). Admission is decided separately.
 */
export function observedEvent(i: ObservedInput): LifecycleEvent | undefined {
  const st = i.session.status ?? {};
  // The spec changed since the last run started (a new prompt, desiredState back to Running...).
  const runGeneration = st.lifecycle?.runGeneration;
  const generationChanged = runGeneration !== undefined && (i.session.metadata.generation ?? 0) !== runGeneration;
  // Asked explicitly (a person or the autopilot): it overrides the restart policy, a stop's reason
  // and an escalation's hold. With desiredState Stopped it waits until the session runs again.
  const restart = wantsRunning(i.session) && restartRequested(i.session) !== undefined;
  switch (i.phase) {
    case 'Starting':
    case 'Running':
      if (i.pane.kind === 'dead') return exited(i.pane);
      // Starting with no pane is a launch in flight (the snapshot predates it) — or, once the grace
      // is over, a launch that never happened (the controller died between recording the run and
      // starting it): the run is over.
      if (i.pane.kind === 'missing') {
        const since = Date.parse(st.startTime ?? '');
        const launchLost = i.phase === 'Starting' && Number.isFinite(since) && i.now - since > LAUNCH_GRACE_MS;
        return i.phase === 'Running' || launchLost ? { type: 'GONE' } : undefined;
      }
      if (!wantsRunning(i.session)) return { type: 'STOP' };
      // The current run stops first (its agent gets its stop keys and grace); the new run follows.
      if (restart) return { type: 'STOP' };
      if (
        i.phase === 'Running' &&
        st.deadlineTime &&
        i.now >= Date.parse(st.deadlineTime) &&
        i.effective.timeoutAction === 'Stop'
      )
        return { type: 'TIMEOUT' };
      return i.phase === 'Starting' ? { type: 'STARTED' } : undefined;
    case 'Stopping':
      if (i.pane.kind === 'dead') return exited(i.pane);
      if (i.pane.kind === 'missing') return { type: 'GONE' };
      if (st.stopRequestTime && i.now >= Date.parse(st.stopRequestTime) + i.effective.graceMs)
        return { type: 'GRACE_EXPIRED' };
      return undefined;
    case 'Backoff':
      if (!wantsRunning(i.session)) return { type: 'STOP' };
      if (generationChanged || restart) return { type: 'NEW_RUN' };
      // Escalated (by hand, or by a rule that stops restarts) after the restart was scheduled:
      // hold it for a person; a spec change or desiredState Stopped still moves it.
      if (restartsHeld(st.conditions)) return undefined;
      if (!st.nextRestartTime || i.now >= Date.parse(st.nextRestartTime)) return { type: 'RESTART_DUE' };
      return undefined;
    case 'Succeeded':
    case 'Failed':
    case 'Killed':
    case 'TimedOut':
      // A changed spec (a new prompt, or desiredState back to Running) or a restart asked for starts
      // a new run (one, when both came in the same write).
      if ((generationChanged || restart) && wantsRunning(i.session)) return { type: 'NEW_RUN' };
      // A command that is not installed is not retried: the session waits for it in Pending instead.
      // A run its budget stopped is not either: a person (or a spec change) starts the next one.
      if (
        !wantsRunning(i.session) ||
        restartsHeld(st.conditions) ||
        st.reason === 'Stopped' ||
        st.reason === 'BudgetExceeded' ||
        st.reason === 'CommandNotFound'
      )
        return undefined;
      if (i.effective.restartPolicy === 'Never') return undefined;
      if (i.phase === 'Succeeded' && i.effective.restartPolicy !== 'Always') return undefined;
      return {
        type: 'RESTART',
        restartPolicy: i.effective.restartPolicy,
        maxRestarts: i.effective.maxRestarts,
        // Hung up by the node's fuse (issue 26): not the agent's failure, so not a counted restart.
        ...(st.reason === FENCED_REASON ? { fenced: true } : {}),
      };
    case 'Pending':
      return undefined;
  }
}

/**
 * When the reconciler must look at this session again because something falls due (the time
 * box, the end of a grace period, a restart). Routine observation of live sessions is not here:
 * the controller observes all of them together on one tick, so they share one tmux snapshot.
 */
/** How long a Starting run may have no tmux pane before its launch counts as lost. */
export const LAUNCH_GRACE_MS = 30_000;

export function nextLookMs(phase: Phase, session: AgentSession, now: number, e: Effective): number | undefined {
  const st = session.status ?? {};
  const due = (t?: string) => (t ? Math.max(0, Date.parse(t) - now) : undefined);
  const candidates: (number | undefined)[] = [];
  if (phase === 'Starting' && st.startTime)
    candidates.push(due(new Date(Date.parse(st.startTime) + LAUNCH_GRACE_MS + 100).toISOString()));
  if ((phase === 'Running' || phase === 'Starting') && e.timeoutAction === 'Stop')
    candidates.push(due(st.deadlineTime));
  if (phase === 'Running' && e.timeoutAction === 'Warn' && !isTrue(st.conditions, 'TimeBoxExceeded'))
    candidates.push(due(st.deadlineTime));
  if (phase === 'Stopping')
    candidates.push(st.stopRequestTime ? due(new Date(Date.parse(st.stopRequestTime) + e.graceMs).toISOString()) : 500);
  if (phase === 'Backoff' && !restartsHeld(st.conditions)) candidates.push(due(st.nextRestartTime) ?? 0);
  const defined = candidates.filter((x): x is number => x !== undefined);
  return defined.length ? Math.min(...defined) : undefined;
}
