/**
 * The pipeline reconciler (key: a Pipeline, `namespace/name`): read the Pipeline and its phases'
 * sessions from the caches, plan (plan.ts, pure), perform the effects, write the status once
 * (compare-and-swap: the reconciler is its only writer) with the Events of what changed in the same
 * transaction: a controller killed before the write plans the same changes again and tells them
 * then; killed after, finds them made and tells nothing (never lost, never twice).
 *
 * Effects, each safe to repeat after a crash at any point:
 *  - Create: the phase's session with the handoff of its dependencies in its prompt; its name is
 *    fixed, so a create after a crash meets AlreadyExists and the phase is not started twice;
 *    rendered first and checked as the validating client (client/validating-store.ts) checks every
 *    write: a session it would refuse is not written, its phase fails (SessionInvalid) saying why;
 *  - Stop: a phase that reported complete while its agent still runs gets desiredState Stopped;
 *  - Recover: the restart annotation, its note and RECOVERED_RUN_ANNOTATION in one CAS update of
 *    the session (a second controller, or a second pass, finds the recovery already asked for);
 *  - Resume: recorded as Delivering first, then posted to the blocked phases' sessions or a new run
 *    asked for (resume.ts), then what is known written: the posted messages' outcomes come from
 *    their nodes, through the sessions' status, on later passes.
 */
import fs from 'node:fs';
import { RESTART_NOTE_ANNOTATION, RESTART_REASON_ANNOTATION, RESTARTED_AT_ANNOTATION } from '../../api/autopilot.js';
import { isApiError } from '../../api/errors.js';
import { PipelineReason } from '../../api/event-reasons.js';
import {
  HANDOFF_LIMITS,
  type Pipeline,
  type PipelinePhaseSpec,
  type PipelineStatus,
  phaseSession,
  phaseSessionName,
  RECOVERED_RUN_ANNOTATION,
} from '../../api/pipeline.js';
import type { AgentSession } from '../../api/session.js';
import type { EventNote, EventRecorder } from '../../client/events.js';
import { invalidError, specWriteErrors } from '../../client/spec-checks.js';
import type { Reconciler, Result } from '../../runtime/controller.js';
import { failpoint } from '../../runtime/failpoints.js';
import type { Informer } from '../../runtime/informer.js';
import type { Store, WriteOp } from '../../store/store.js';
import { composePhasePrompt, readHandoff } from './handoff.js';
import { type PipelineEffect, planPipeline, settleResume } from './plan.js';
import { deliverResume, type ResumeOutcome, type ResumePosted } from './resume.js';

export interface PipelineDeps {
  store: Store;
  sessions: Pick<Informer<'AgentSession'>, 'get'>;
  recorder: Pick<EventRecorder, 'ops'>;
  now?: () => number;
}

const CONFLICT_RETRY_MS = 200;

/** A phase's session as rendered for its Create (with the Events of rendering it), or why it is refused. */
type Rendered = { session: AgentSession; warnings: PipelineEffect[] } | { refused: string };

/** Largest prompt file inlined into a phase's prompt (the AgentSession CRD's prompt bound). */
const MAX_PROMPT_FILE = 1024 * 1024;

export class PipelineReconciler implements Reconciler {
  private readonly now: () => number;

  constructor(private readonly d: PipelineDeps) {
    this.now = d.now ?? Date.now;
  }

  async reconcile(key: string): Promise<Result | undefined> {
    try {
      await this.pass(key);
    } catch (e) {
      // Someone wrote the pipeline, a session or one of its Events since it was read: look again soon,
      // from the new state.
      if (isApiError(e, 'Conflict') || isApiError(e, 'AlreadyExists')) return { requeueAfterMs: CONFLICT_RETRY_MS };
      throw e;
    }
    return undefined;
  }

  private async pass(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    // From the store, not the cache: its status is this reconciler's own last write (a cached copy
    // a write behind would only meet a Conflict).
    const p = await this.d.store.get({ kind: 'Pipeline', namespace, name });
    // Deleted: its sessions go with it (ownerReferences; their finalizers stop their runs).
    if (!p || p.metadata.deletionTimestamp) return;
    const sessions = this.sessionsOf(p);
    const now = this.now();
    const first = planPipeline({ pipeline: p, sessions, now });
    // Each new phase session rendered and checked as the validating client checks it before any write:
    // one it would refuse fails its phase (planned again with it), with the reason in status and Event.
    const rendered = this.render(p, first.effects, sessions);
    const refused = new Map([...rendered].flatMap(([phase, r]) => ('refused' in r ? [[phase, r.refused]] : [])));
    const plan = refused.size ? planPipeline({ pipeline: p, sessions, now, refused }) : first;
    const events: PipelineEffect[] = [];
    const resume = plan.effects.find((e) => e.type === 'Resume');
    for (const fx of plan.effects) {
      if (fx.type === 'Event') events.push(fx);
      else if (fx.type !== 'Resume') await this.perform(fx, sessions, events, rendered);
    }
    let written = await this.writeStatus(p, plan.status, events);
    failpoint('pipeline-after-status');
    if (resume?.type === 'Resume' && written) {
      const outcomes: ResumeOutcome[] = [];
      const waiting: ResumePosted[] = [];
      const at = new Date(this.now()).toISOString();
      for (const t of resume.targets) {
        const r = await deliverResume(this.d.store, namespace, name, t, resume.message, resume.requested, at);
        if ('id' in r) waiting.push(r);
        else outcomes.push(r);
      }
      // Posted messages are answered by their nodes: a later pass folds their outcomes in (plan.ts).
      const status = structuredClone(plan.status);
      const list = status.phases ?? [];
      const settled: PipelineEffect[] = [];
      if (outcomes.length || !waiting.length) settled.push(...settleResume(status, list, outcomes, waiting, at));
      else status.resume = { ...status.resume!, waiting, outcomes: [] };
      written = await this.writeStatus(written, status, settled);
    }
  }

  /** The phases' sessions, by phase name, as the cache has them. */
  private sessionsOf(p: Pipeline): Map<string, AgentSession> {
    const out = new Map<string, AgentSession>();
    for (const ph of p.spec?.phases ?? []) {
      const s = this.d.sessions.get(p.metadata.namespace ?? '', phaseSessionName(p.metadata.name, ph.name));
      if (s) out.set(ph.name, s);
    }
    return out;
  }

  /** The sessions the plan's Create effects would write, or why the validating client would refuse each. */
  private render(p: Pipeline, effects: PipelineEffect[], sessions: Map<string, AgentSession>): Map<string, Rendered> {
    const out = new Map<string, Rendered>();
    for (const fx of effects) {
      if (fx.type !== 'Create') continue;
      const warnings: PipelineEffect[] = [];
      const warn = (reason: string, message: string) =>
        warnings.push({ type: 'Event', eventType: 'Warning', reason, message });
      const phase = p.spec!.phases.find((x) => x.name === fx.phase)!;
      const session = phaseSession(p, phase, this.prompt(phase, fx.dependsOn, sessions, warn));
      const errors = specWriteErrors(session);
      out.set(fx.phase, errors.length ? { refused: invalidError(session, errors).message } : { session, warnings });
    }
    return out;
  }

  private async perform(
    fx: PipelineEffect,
    sessions: Map<string, AgentSession>,
    events: PipelineEffect[],
    rendered: Map<string, Rendered>,
  ): Promise<void> {
    switch (fx.type) {
      case 'Create': {
        const r = rendered.get(fx.phase);
        if (!r || 'refused' in r) return;
        const { session, warnings } = r;
        events.push(...warnings);
        try {
          await this.d.store.create(session);
        } catch (e) {
          // Created by an earlier pass whose status write never happened (or the cache is behind).
          if (!isApiError(e, 'AlreadyExists')) throw e;
          return;
        }
        failpoint('pipeline-after-create'); // crash tests: created, the pipeline's status not yet written
        return;
      }
      case 'Stop': {
        const s = sessions.get(fx.phase);
        if (!s?.spec) return;
        await this.d.store.update({ ...s, spec: { ...s.spec, desiredState: 'Stopped' } });
        return;
      }
      case 'Recover': {
        const s = sessions.get(fx.phase);
        if (!s) return;
        const annotations = {
          ...(s.metadata.annotations ?? {}),
          [RESTARTED_AT_ANNOTATION]: new Date(this.now()).toISOString(),
          [RESTART_REASON_ANNOTATION]: 'Recovery',
          [RESTART_NOTE_ANNOTATION]: fx.note,
          [RECOVERED_RUN_ANNOTATION]: String(fx.run),
        };
        // resourceVersion as read: a conflict means someone else moved first; the next pass looks again.
        await this.d.store.update({ ...s, metadata: { ...s.metadata, annotations } });
        return;
      }
    }
  }

  /**
   * The phase's task with its dependencies' handoffs below it. Without dependencies the template
   * is used as it is; a promptFile is read here only to add the handoff to it.
   */
  private prompt(
    phase: PipelinePhaseSpec,
    deps: string[],
    sessions: Map<string, AgentSession>,
    warn: (reason: string, message: string) => void,
  ): string | undefined {
    if (!deps.length) return undefined;
    let task = phase.template.prompt ?? '';
    const file = phase.template.promptFile;
    if (file) {
      try {
        const st = fs.statSync(file);
        if (st.size > MAX_PROMPT_FILE) throw new Error(`${file} is ${st.size} bytes, over ${MAX_PROMPT_FILE}`);
        task = fs.readFileSync(file, 'utf8');
      } catch (e) {
        // The session then reads the file itself (and fails the run if it cannot); the handoff is lost.
        warn(
          PipelineReason.HandoffNotAdded,
          `phase ${phase.name}: prompt file unreadable here: ${(e as Error).message}`,
        );
        return undefined;
      }
    }
    const bytes = Math.floor(HANDOFF_LIMITS.handoffBytes / deps.length);
    return composePhasePrompt(
      task,
      deps.map((d) => readHandoff(d, sessions.get(d), bytes)),
    );
  }

  /**
   * Writes the status when it changed (CAS on the read's resourceVersion), and the Events of the
   * change in the same transaction; returns the object as stored.
   */
  private async writeStatus(p: Pipeline, status: PipelineStatus, effects: PipelineEffect[]): Promise<Pipeline> {
    const notes = effects.flatMap((e): EventNote[] =>
      e.type === 'Event' ? [{ type: e.eventType, reason: e.reason, message: e.message }] : [],
    );
    const changed = JSON.stringify(p.status ?? {}) !== JSON.stringify(status);
    const ops: WriteOp[] = changed ? [{ op: 'updateStatus', object: { ...p, status } }] : [];
    if (notes.length) ops.push(...(await this.d.recorder.ops(p, notes)));
    if (!ops.length) return p;
    const [stored] = await this.d.store.txn(ops);
    return changed ? (stored as Pipeline) : p; // the transaction's first result is its updateStatus of p
  }
}
