/**
 * Delivering `orchctl pipeline resume` to a blocked phase, through the store — wherever its run is:
 *  - a live run gets the message posted on its session (api/message.ts, client/message.ts); the
 *    node that runs it types it with verified delivery at an idle point, never while the run is
 *    paused, once, and writes the outcome to the session's status.messageDelivery, which the
 *    pipeline's plan reads on a later pass (plan.ts, foldResume);
 *  - a run that already ended (the agent reported blocked and exited) gets a new run through the
 *    restart annotation, with the message as its restart note, so it arrives in the new run's prompt.
 *
 * At most once: the reconciler records the resume as Delivering in the Pipeline's status before
 * calling this, and a Delivering found at the next start with nothing posted is reported
 * Unconfirmed, never resent; what was posted is answered by its node, once per message id.
 */
import { RESTART_NOTE_ANNOTATION, RESTART_REASON_ANNOTATION, RESTARTED_AT_ANNOTATION } from '../../api/autopilot.js';
import type { ResumeOutcome } from '../../api/pipeline.js';
import { postMessage } from '../../client/message.js';
import type { Store } from '../../store/store.js';
import type { ResumeTarget } from './plan.js';

export type { ResumeOutcome } from '../../api/pipeline.js';

/** A message posted to a live phase's session: its node answers it. */
export type ResumePosted = { phase: string; session: string; id: string };

/** The note of the new run a resume starts (the session reconciler puts it in the prompt). */
export const resumeNote = (message: string) => `A person answered your blocker and asks you to go on:\n\n${message}`;

/** The message id of a resume (unique per request; one session per phase). */
export const resumeMessageId = (requested: string) => `pipeline-resume/${requested}`.slice(0, 128);

export async function deliverResume(
  store: Store,
  namespace: string,
  pipeline: string,
  t: ResumeTarget,
  message: string,
  requested: string,
  now: string,
): Promise<ResumeOutcome | ResumePosted> {
  const failed = (how: string): ResumeOutcome => ({ phase: t.phase, delivered: false, how });
  try {
    if (t.live) {
      const id = resumeMessageId(requested);
      const r = await postMessage(store, namespace, t.session, { id, text: message, from: `pipeline/${pipeline}` });
      if (r.outcome === 'missing') return failed(`agentsession ${t.session} is gone`);
      if (r.outcome === 'busy')
        return failed(
          `another message (${r.pending}) is still waiting for delivery to ${t.session}; resume again later`,
        );
      return { phase: t.phase, session: t.session, id };
    }
    const s = await store.get({ kind: 'AgentSession', namespace, name: t.session });
    if (!s) return failed(`agentsession ${t.session} is gone`);
    const annotations = {
      ...(s.metadata.annotations ?? {}),
      [RESTARTED_AT_ANNOTATION]: now,
      [RESTART_REASON_ANNOTATION]: 'Resume',
      [RESTART_NOTE_ANNOTATION]: resumeNote(message),
    };
    await store.update({ ...s, metadata: { ...s.metadata, annotations } });
    return {
      phase: t.phase,
      delivered: true,
      how: `its run had ended: a new run with the message in its prompt`,
      at: now,
    };
  } catch (e) {
    return failed((e as Error).message);
  }
}
