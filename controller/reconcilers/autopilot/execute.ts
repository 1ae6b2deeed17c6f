/**
 * Execution is a change of desired state, checked just in time (seed 002 §2.2). Pure parts:
 *  - `recheck()`: a Decision against a fresh read of the store. What it was decided on must still
 *    hold — the project unchanged in spec, no session of the project started or created since (for
 *    a start), the target session on the same run and in the same state (for a stop or restart).
 *    If not, the Decision is Superseded and the next think re-plans;
 *  - `effects()`: the writes that carry it out, each conditioned on the resourceVersion it was
 *    read at: create an AgentSession (start), set `desiredState: Stopped` (stop), stamp the restart
 *    annotation and its note (restart), record an AutopilotNotice Event (notify).
 * The reconciler puts these writes in one transaction with the Decision's status, the Project's
 * error-retry count and, for a start, a guard that no AgentSession of the namespace changed since
 * the fresh read — so a session a person applies at the same moment makes the transaction fail and
 * the check run again; two sessions for one project cannot both be written.
 */
import { createHash } from 'node:crypto';
import {
  AUTOPILOT_LABEL,
  type Autopilot,
  type AutopilotSessionTemplate,
  DECISION_ANNOTATION,
  DECISION_LABEL,
  PROJECT_LABEL,
  RESTART_NOTE_ANNOTATION,
  RESTART_REASON_ANNOTATION,
  RESTARTED_AT_ANNOTATION,
} from '../../api/autopilot.js';
import type { EventObject } from '../../api/event.js';
import { AutopilotReason } from '../../api/event-reasons.js';
import { newEvent } from '../../client/events.js';
import type { Project } from '../../api/project.js';
import type { AgentSession } from '../../api/session.js';
import { API_VERSION, type Resource } from '../../api/types.js';
import type { WriteOp } from '../../store/store.js';
import { type Dec, isActive } from './plan.js';

export interface Fresh {
  projects: Map<string, Project>;
  sessions: AgentSession[];
  /** The store revision of the session list (the guard's `since`). */
  revision: number;
}

export type Recheck = { ok: true } | { ok: false; message: string };

const ok: Recheck = { ok: true };
const no = (message: string): Recheck => ({ ok: false, message });

export function recheck(d: Dec, fresh: Fresh): Recheck {
  const spec = d.spec;
  if (spec.action === 'notify' || spec.action === 'skip') return ok;
  const projectName = spec.target.project ?? '';
  const project = fresh.projects.get(projectName);
  const snap = spec.snapshot.objects;
  const pref = snap.find((o) => o.kind === 'Project' && o.name === projectName);
  if (!project) return no(`project ${projectName} no longer exists`);
  if (pref?.generation !== undefined && project.metadata.generation !== pref.generation)
    return no(`project ${projectName} was changed (generation ${pref.generation} → ${project.metadata.generation})`);
  const sessions = fresh.sessions.filter((s) => s.spec?.projectRef === projectName);
  if (spec.action === 'start') {
    const running = sessions.find(isActive);
    if (running)
      return no(`session ${running.metadata.name} of project ${projectName} is ${running.status?.phase ?? 'Pending'}`);
    const known = new Set(snap.filter((o) => o.kind === 'AgentSession').map((o) => o.name));
    const added = sessions.find((s) => !known.has(s.metadata.name));
    if (added) return no(`session ${added.metadata.name} of project ${projectName} was created after the decision`);
    return ok;
  }
  const name = spec.target.session ?? '';
  const target = sessions.find((s) => s.metadata.name === name);
  const sref = snap.find((o) => o.kind === 'AgentSession' && o.name === name);
  if (!target) return no(`session ${name} no longer exists`);
  if (sref?.generation !== undefined && target.metadata.generation !== sref.generation)
    return no(`session ${name} was changed (generation ${sref.generation} → ${target.metadata.generation})`);
  // A person's later restart (orchctl restart session: an annotation, so no new generation) is an
  // answer of its own: an older stop or restart must not undo it.
  const restartedAt = Date.parse(target.metadata.annotations?.[RESTARTED_AT_ANNOTATION] ?? '');
  const decidedAt = Date.parse(d.status?.decidedAt ?? d.metadata.creationTimestamp ?? '');
  if (restartedAt > decidedAt)
    return no(
      `session ${name} was restarted at ${new Date(restartedAt).toISOString()}, after the decision: ` +
        'that later action supersedes it',
    );
  if (sref?.run !== undefined && (target.status?.run ?? 0) !== sref.run)
    return no(`session ${name} is on run ${target.status?.run ?? 0} now (decided on run ${sref.run})`);
  if (spec.action === 'stop' && !isActive(target)) return no(`session ${name} already ended`);
  if (spec.action === 'restart' && spec.recovery && isActive(target)) return no(`session ${name} runs again`);
  return ok;
}

/** The generated name of the session a start creates: the project, and a hash of the Decision. */
export function sessionName(project: string, decision: string): string {
  const h = createHash('sha256').update(decision).digest('hex').slice(0, 6);
  return `${project.slice(0, 50).replace(/-+$/, '')}-${h}`;
}

export function newSession(
  ap: Autopilot,
  d: Dec,
  template: AutopilotSessionTemplate | undefined,
  prompt: string,
): AgentSession {
  const t = template ?? {};
  const project = d.spec.target.project ?? '';
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: {
      name: sessionName(project, d.metadata.name),
      namespace: ap.metadata.namespace ?? 'default',
      labels: {
        ...(t.labels ?? {}),
        [PROJECT_LABEL]: project,
        [AUTOPILOT_LABEL]: ap.metadata.name,
        [DECISION_LABEL]: d.metadata.name,
      },
      annotations: { [DECISION_ANNOTATION]: d.metadata.name },
    },
    spec: {
      projectRef: project,
      ...(t.agentRef ? { agentRef: t.agentRef } : {}),
      ...(t.policyRef ? { policyRef: t.policyRef } : {}),
      ...(t.maxDuration ? { maxDuration: t.maxDuration } : {}),
      prompt,
      // The autopilot owns retries (recovery, with a note naming the error), not the restart policy.
      restartPolicy: 'Never',
      desiredState: 'Running',
    },
  };
}

export const AUTOPILOT_COMPONENT = 'orchctl-autopilot';

/** An AutopilotNotice Event, recorded in the same transaction as the Decision's execution. */
export function noticeEvent(
  d: Dec,
  about: Resource,
  type: 'Normal' | 'Warning',
  message: string,
  suffix: string,
  now: string,
): EventObject {
  const name = `${d.metadata.name}.${suffix}`;
  return newEvent(about, { name, type, reason: AutopilotReason.AutopilotNotice, message, now }, AUTOPILOT_COMPONENT);
}

/** The "notify after" of the gate: what an executed start, stop or restart did, as a notice. */
export function afterNotice(d: Dec, about: Resource, session: string, now: string): EventObject {
  const what = d.spec.action === 'start' ? `started session ${session}` : `${d.spec.action} ${session}`;
  return noticeEvent(d, about, 'Normal', `${what}: ${d.spec.reason}`, 'after', now);
}

/**
 * A TimeBoxContinued Event on the project: a run stopped at its time box goes on in a new run
 * (recorded with the restart, so it is told exactly when the continuation is).
 */
export function timeBoxNotice(d: Dec, about: Resource, now: string): EventObject {
  const name = `${d.metadata.name}.timebox`;
  const message = `${d.spec.target.session ?? 'the session'} continues in a new run: ${d.spec.reason}`;
  return newEvent(
    about,
    { name, type: 'Normal', reason: AutopilotReason.TimeBoxContinued, message, now },
    AUTOPILOT_COMPONENT,
  );
}

/** The writes that carry out a Decision that passed its recheck (the session for a start is given). */
export function effects(d: Dec, fresh: Fresh, now: string, created?: AgentSession): WriteOp[] {
  const spec = d.spec;
  const target = fresh.sessions.find((s) => s.metadata.name === spec.target.session);
  switch (spec.action) {
    case 'start':
      return created ? [{ op: 'create', object: created }] : [];
    case 'stop': {
      if (!target) return [];
      const next = structuredClone(target);
      next.spec = { ...next.spec, desiredState: 'Stopped' };
      next.metadata.annotations = { ...next.metadata.annotations, [DECISION_ANNOTATION]: d.metadata.name };
      return [{ op: 'update', object: next }];
    }
    case 'restart': {
      if (!target) return [];
      const next = structuredClone(target);
      const annotations: Record<string, string> = {
        ...next.metadata.annotations,
        [RESTARTED_AT_ANNOTATION]: now,
        [RESTART_REASON_ANNOTATION]: 'Autopilot',
        [DECISION_ANNOTATION]: d.metadata.name,
      };
      if (spec.prompt) annotations[RESTART_NOTE_ANNOTATION] = spec.prompt;
      else delete annotations[RESTART_NOTE_ANNOTATION];
      next.metadata.annotations = annotations;
      return [{ op: 'update', object: next }];
    }
    case 'notify':
    case 'skip':
      return [];
  }
}
