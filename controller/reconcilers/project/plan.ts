/**
 * The project reconciler's pure plan: the Project, its sessions and Evaluations and what the git
 * observer saw in, the Project's status out. What a planner reads (seed 002 §2.5): lastActivity,
 * activeSessions, the Stale condition and the recent Evaluation outcomes. No clock, no I/O: `now`
 * is an input, so the same inputs always give the same status (and the write is skipped).
 */
import { setCondition } from '../../api/conditions.js';
import { formatDuration, parseDuration } from '../../api/duration.js';
import type { Evaluation } from '../../api/evaluation.js';
import { type Phase, TERMINAL_PHASES } from '../../api/phases.js';
import {
  DEFAULT_STALE_AFTER,
  PROJECT_OUTCOMES,
  type Project,
  type ProjectOutcome,
  type ProjectStatus,
} from '../../api/project.js';
import type { AgentSession } from '../../api/session.js';
import type { GitTip } from '../../observers/git.js';

export interface ProjectObserved {
  project: Project;
  /** The sessions whose spec.projectRef names this project. */
  sessions: AgentSession[];
  /** The Evaluations of those sessions. */
  evaluations: Evaluation[];
  /** Whether spec.path is a directory. */
  exists: boolean;
  git: GitTip;
  now: number;
  /** The Autopilot's stalenessDays will override the project's own staleAfter when that kind lands. */
  staleAfterMs?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The later of two RFC 3339 times (either may be absent). */
function later(a: string | undefined, b: string | undefined): string | undefined {
  if (!a || !b) return a ?? b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** Non-terminal: a session without a phase yet is Pending, so it counts. */
export const isActive = (s: AgentSession) => !TERMINAL_PHASES.has((s.status?.phase ?? 'Pending') as Phase);

/** The last PROJECT_OUTCOMES judged Evaluations, newest first (ties by name, for a stable order). */
export function recentOutcomes(evaluations: Evaluation[]): ProjectOutcome[] {
  const judged: ProjectOutcome[] = [];
  for (const e of evaluations) {
    const st = e.status;
    if (typeof st?.score !== 'number' || !st.recommendation || !st.evaluatedAt) continue;
    judged.push({
      evaluation: e.metadata.name,
      session: e.spec?.sessionRef ?? '',
      score: st.score,
      recommendation: st.recommendation,
      time: st.evaluatedAt,
    });
  }
  judged.sort((a, b) => Date.parse(b.time) - Date.parse(a.time) || a.evaluation.localeCompare(b.evaluation));
  return judged.slice(0, PROJECT_OUTCOMES);
}

export function planProject(o: ProjectObserved): ProjectStatus {
  const { project, now } = o;
  const spec = project.spec ?? { path: '' };
  const generation = project.metadata.generation;
  const status: ProjectStatus = structuredClone(project.status ?? {});
  status.conditions ??= [];
  const at = iso(now);
  setCondition(
    status.conditions,
    {
      type: 'Ready',
      status: o.exists ? 'True' : 'False',
      reason: o.exists ? 'PathExists' : 'PathNotFound',
      message: o.exists ? '' : `${spec.path ?? '(no path)'} does not exist or is not a directory; its sessions wait`,
      observedGeneration: generation,
    },
    at,
  );

  status.exists = o.exists;
  status.isGitRepo = o.git.isGitRepo;
  const last = o.git.lastCommit;
  if (last) {
    status.git = { branch: o.git.branch, head: last.sha, lastCommitTime: last.time, lastCommitSubject: last.subject };
    if (!status.git.branch) delete status.git.branch;
  } else delete status.git;

  let lastActivity = last?.time;
  for (const s of o.sessions) lastActivity = later(lastActivity, s.status?.completionTime);
  if (lastActivity) status.lastActivity = lastActivity;
  else delete status.lastActivity;
  const active = o.sessions.filter(isActive).length;
  status.activeSessions = active;
  const outcomes = recentOutcomes(o.evaluations);
  if (outcomes.length) status.recentOutcomes = outcomes;
  else delete status.recentOutcomes;

  setCondition(status.conditions, { ...stale(o, active, lastActivity), observedGeneration: generation }, at);
  status.observedGeneration = generation;
  return status;
}

/** Stale: not blocked, nothing running, and idle longer than staleAfter (seed 002 §2.5). */
function stale(o: ProjectObserved, active: number, lastActivity: string | undefined) {
  const { metadata } = o.project;
  const spec = o.project.spec ?? { path: '' };
  const base = { type: 'Stale' } as const;
  if (spec.blocked) return { ...base, status: 'False' as const, reason: 'Blocked', message: spec.blocked.reason };
  if (active > 0)
    return { ...base, status: 'False' as const, reason: 'Active', message: `${active} session(s) not finished` };
  const limitMs = o.staleAfterMs ?? parseDuration(spec.staleAfter ?? DEFAULT_STALE_AFTER);
  const limit = formatDuration(limitMs);
  // Never active at all: idle since it was created.
  const since = lastActivity ?? metadata.creationTimestamp;
  const what = lastActivity ? `last activity ${lastActivity}` : `no activity since it was created (${since})`;
  const idleMs = since ? o.now - Date.parse(since) : 0;
  // The message names fixed times only, so it does not change (and cause a write) every reconcile.
  if (idleMs > limitMs)
    return { ...base, status: 'True' as const, reason: 'Idle', message: `${what}; stale after ${limit}` };
  return { ...base, status: 'False' as const, reason: 'Recent', message: `${what}; stale after ${limit}` };
}
