/**
 * The scheduler's pure part (kube-scheduler's filter and score, for one session at a time): which
 * sessions need a binding, which Nodes fit one, which fits best, and why none does, in kubectl's
 * words ("0/3 nodes are available: 2 Insufficient memory, 1 node(s) didn't match node selector.").
 * Everything it reads is passed in (the session, its Project and SessionPolicy, the Nodes, how
 * many sessions each Node has bound), so the tables in its tests need no store.
 */
import { getCondition } from '../../api/conditions.js';
import type { Node } from '../../api/node.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import type { Project } from '../../api/project.js';
import type { AgentSession, BindingStatus } from '../../api/session.js';
import { restartRequested, wantsRunning } from '../../api/session-intent.js';
import type { SessionPolicy } from '../../api/session-policy.js';

/** Why a Node does not fit, in the order the filters run (a Node is counted under the first that fails). */
export const FIT_REASONS = {
  NotReady: 'node(s) were not ready',
  Unschedulable: 'node(s) were unschedulable',
  NodeName: "node(s) didn't match the requested node name",
  NodeSelector: "node(s) didn't match node selector",
  ProjectSelector: "node(s) didn't match the project's node selector",
  ProjectPath: "node(s) didn't have the project's repository",
  TooManySessions: 'Too many sessions',
  InsufficientMemory: 'Insufficient memory',
  InsufficientDisk: 'Insufficient disk',
  TooMuchLoad: 'node(s) had too much load',
} as const;
export type FitReason = keyof typeof FIT_REASONS;

const MB = 1048576;

/** Whether a phase has a run to place: unset (never reconciled), waiting, running or between runs. */
const unfinished = (phase: Phase | undefined) => !phase || !TERMINAL_PHASES.has(phase);

/** The spec changed since the last run started (a new prompt, desiredState back to Running...). */
const generationChanged = (s: AgentSession) => {
  const runGeneration = s.status?.lifecycle?.runGeneration;
  return runGeneration !== undefined && (s.metadata.generation ?? 0) !== runGeneration;
};

/**
 * A session without a binding that a node must act on: one with a run to place (not finished, or
 * finished and asked for a new run), or one being deleted whose finalizer a node must remove. A
 * finished session nobody asks to run again stays unbound: it needs no node.
 */
export function needsBinding(s: AgentSession): boolean {
  if (s.status?.binding) return false;
  if (s.metadata.deletionTimestamp) return (s.metadata.finalizers ?? []).length > 0;
  if (unfinished(s.status?.phase)) return true;
  return wantsRunning(s) && (restartRequested(s) !== undefined || generationChanged(s));
}

/** Whether a session bound to a Node counts against that Node's capacity (maxSessions, spreading). */
export const occupiesNode = (s: AgentSession): boolean => unfinished(s.status?.phase);

/** The Project key Nodes report in status.projects. */
export const projectKey = (namespace: string | undefined, name: string) => `${namespace || 'default'}/${name}`;

export interface ScheduleInput {
  session: AgentSession;
  /** The session's Project (spec.projectRef), if it has one and it exists. */
  project?: Project;
  /** The SessionPolicy that governs the session (api/policy.ts), for its resource floors. */
  policy?: SessionPolicy;
  nodes: Node[];
  /** Sessions bound to a Node that occupy it (binding made, run not finished), this one excluded. */
  bound: (node: string) => number;
}

export type ScheduleResult =
  | { fits: true; node: string; feasible: number }
  | { fits: false; message: string; reasons: Partial<Record<FitReason, number>> };

const labelsMatch = (want: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  Object.entries(want ?? {}).every(([k, v]) => labels?.[k] === v);

/**
 * The first filter a Node fails for this session, or undefined when it fits. `strictPath` is
 * whether the repository check applies: it does when some Node reports the project's path (see
 * {@link schedule}); when none does, the session goes where the rest allows and waits there.
 */
export function unfit(i: ScheduleInput, n: Node, strictPath: boolean): FitReason | undefined {
  const st = n.status ?? {};
  if (getCondition(st.conditions, 'Ready')?.status !== 'True') return 'NotReady';
  if (n.spec?.unschedulable) return 'Unschedulable';
  const spec = i.session.spec ?? {};
  if (spec.nodeName && spec.nodeName !== n.metadata.name) return 'NodeName';
  if (!labelsMatch(spec.nodeSelector, n.metadata.labels)) return 'NodeSelector';
  if (!labelsMatch(i.project?.spec?.nodeSelector, n.metadata.labels)) return 'ProjectSelector';
  if (
    strictPath &&
    i.project &&
    !st.projects?.includes(projectKey(i.project.metadata.namespace, i.project.metadata.name))
  )
    return 'ProjectPath';
  const max = n.spec?.maxSessions;
  if (max !== undefined && i.bound(n.metadata.name) >= max) return 'TooManySessions';
  const p = i.policy?.spec ?? {};
  const freeMem = st.free?.memoryBytes;
  if (p.minFreeMemoryMB !== undefined && freeMem !== undefined && freeMem / MB < p.minFreeMemoryMB)
    return 'InsufficientMemory';
  const freeDisk = st.free?.diskBytes;
  if (p.minFreeDiskMB !== undefined && freeDisk !== undefined && freeDisk / MB < p.minFreeDiskMB)
    return 'InsufficientDisk';
  const load = st.loadAverage?.[0];
  if (
    p.maxLoadPerCPU !== undefined &&
    load !== undefined &&
    load / Math.max(1, st.capacity?.cpu ?? 1) > p.maxLoadPerCPU
  )
    return 'TooMuchLoad';
  return undefined;
}

/**
 * Filter, then score: of the Nodes that fit, the one with the fewest sessions bound (spreading),
 * then the most free memory, then by name (so the same inputs give the same answer).
 */
export function schedule(i: ScheduleInput): ScheduleResult {
  const key = i.project && projectKey(i.project.metadata.namespace, i.project.metadata.name);
  // No Node has the path (it is not there yet, or it is new and not reported yet): the path check
  // would refuse every Node, so it is left to the node, which waits for the path (ProjectPathNotFound).
  const strictPath = !!key && i.nodes.some((n) => n.status?.projects?.includes(key));
  const reasons: Partial<Record<FitReason, number>> = {};
  const feasible: Node[] = [];
  for (const n of i.nodes) {
    const why = unfit(i, n, strictPath);
    if (why) reasons[why] = (reasons[why] ?? 0) + 1;
    else feasible.push(n);
  }
  if (!feasible.length) return { fits: false, message: fitMessage(i.nodes.length, reasons), reasons };
  const free = (n: Node) => n.status?.free?.memoryBytes ?? 0;
  feasible.sort(
    (a, b) =>
      i.bound(a.metadata.name) - i.bound(b.metadata.name) ||
      free(b) - free(a) ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  return { fits: true, node: feasible[0].metadata.name, feasible: feasible.length };
}

/**
 * kubectl's FailedScheduling message. kube-scheduler sorts the parts as strings; here the most
 * common reason comes first (ties by text), which reads better and is what the issue shows.
 */
export function fitMessage(total: number, reasons: Partial<Record<FitReason, number>>): string {
  if (total === 0) return '0/0 nodes are available: no nodes registered.';
  const parts = (Object.entries(reasons) as [FitReason, number][])
    .sort(([ra, a], [rb, b]) => b - a || FIT_REASONS[ra].localeCompare(FIT_REASONS[rb]))
    .map(([r, n]) => `${n} ${FIT_REASONS[r]}`);
  return `0/${total} nodes are available: ${parts.join(', ')}.`;
}

/** The binding that places `s` on `node`: every binding has a higher epoch than the one before. */
export function bindingFor(s: AgentSession, node: string, now: string): BindingStatus {
  const last = Math.max(s.status?.binding?.epoch ?? 0, s.status?.lifecycle?.epoch ?? 0);
  return { nodeName: node, epoch: last + 1, boundAt: now };
}

/**
 * A session that never started, bound to a Node that does not have its project's path while
 * another fitting Node does: it waits there with ProjectPathNotFound (the path was reported
 * nowhere when it was bound) and is better moved. Returns the Node to move it to.
 */
export function betterPlace(i: ScheduleInput): string | undefined {
  const s = i.session;
  const b = s.status?.binding;
  if (!b || !i.project || s.metadata.deletionTimestamp) return undefined;
  if (s.status?.run || s.status?.phase !== 'Pending' || s.status.reason !== 'ProjectPathNotFound') return undefined;
  const key = projectKey(i.project.metadata.namespace, i.project.metadata.name);
  const here = i.nodes.find((n) => n.metadata.name === b.nodeName);
  if (here?.status?.projects?.includes(key)) return undefined;
  const r = schedule(i);
  if (!r.fits || r.node === b.nodeName) return undefined;
  const there = i.nodes.find((n) => n.metadata.name === r.node);
  return there?.status?.projects?.includes(key) ? r.node : undefined;
}
