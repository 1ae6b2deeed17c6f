/**
 * Small builders for the autopilot's pure plan: Projects, sessions and an Autopilot as the caches
 * would hold them, at a fixed clock (no sleeps: `now` is an input everywhere).
 */
import type { Autopilot, AutopilotSpec } from '../../controller/api/autopilot.js';
import type { Phase } from '../../controller/api/phases.js';
import type { Project, ProjectSpec, ProjectStatus } from '../../controller/api/project.js';
import type { AgentSession, AgentSessionStatus } from '../../controller/api/session.js';
import { API_VERSION } from '../../controller/api/types.js';
import type { World } from '../../controller/reconcilers/autopilot/plan.js';

export const T0 = Date.parse('2026-11-24T12:00:00Z');
export const DAY = 86_400_000;
export const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

let rv = 100;
const next = () => String(++rv);

/** An Autopilot over every project (`projectSelector: {}`) unless `spec` says otherwise. */
export function autopilot(spec: AutopilotSpec = {}, name = 'ap'): Autopilot {
  return {
    apiVersion: API_VERSION,
    kind: 'Autopilot',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: next() },
    spec: { projectSelector: {}, ...spec },
  };
}

export function project(
  name: string,
  spec: Partial<ProjectSpec> = {},
  opts: { idleDays?: number; status?: ProjectStatus; labels?: Record<string, string> } = {},
): Project {
  const idle = opts.idleDays ?? 5;
  return {
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: next(),
      creationTimestamp: iso(T0 - 30 * DAY),
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    spec: { path: `/work/${name}`, ...spec },
    status: { lastActivity: iso(T0 - idle * DAY), ...(opts.status ?? {}) },
  };
}

export function session(
  name: string,
  projectRef: string,
  phase: Phase,
  status: Partial<AgentSessionStatus> = {},
  labels: Record<string, string> = {},
): AgentSession {
  const ended = ['Succeeded', 'Failed', 'Killed', 'TimedOut'].includes(phase);
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: next(), labels },
    spec: { projectRef, prompt: 'work' },
    status: {
      phase,
      run: 1,
      startTime: iso(T0 - 60 * MIN),
      ...(ended ? { completionTime: iso(T0 - 5 * MIN) } : {}),
      ...status,
    },
  };
}

export function world(ap: Autopilot, parts: Partial<World> = {}): World {
  return {
    autopilot: ap,
    projects: [],
    sessions: [],
    evaluations: [],
    decisions: [],
    freeMemoryMB: 16_000,
    now: T0,
    ...parts,
  };
}
