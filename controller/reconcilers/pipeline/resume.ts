/**
 * Delivering `orchctl pipeline resume` to a blocked phase. A live run gets the message typed into
 * its pane through verified delivery (agents/send.ts, the path of `orchctl send` and the breaker's
 * interventions: paste, submit, confirm by hook, transcript or screen). A run that already ended
 * (the agent reported blocked and exited) gets a new run through the restart annotation, with
 * the message as its restart note, so it arrives in the new run's prompt.
 *
 * At most once: the reconciler records the resume as Delivering in the Pipeline's status before
 * calling this, and a Delivering found at the next start is reported Unconfirmed, never resent.
 */
import { RESTART_NOTE_ANNOTATION, RESTARTED_AT_ANNOTATION } from '../../api/autopilot.js';
import type { AgentSession } from '../../api/session.js';
import { sendToSession } from '../../agents/send.js';
import type { Tmux } from '../../observers/tmux.js';
import type { Store } from '../../store/store.js';
import type { ResumeTarget } from './plan.js';

export type ResumeOutcome = { phase: string; delivered: boolean; how: string };

/** The note of the new run a resume starts (the session reconciler puts it in the prompt). */
export const resumeNote = (message: string) => `A person answered your blocker and asks you to go on:\n\n${message}`;

export async function deliverResume(
  store: Store,
  tmux: Tmux,
  namespace: string,
  t: ResumeTarget,
  message: string,
  now: string,
): Promise<ResumeOutcome> {
  try {
    if (t.live) {
      const r = await sendToSession(store, tmux, namespace, t.session, { text: message });
      return { phase: t.phase, delivered: r.delivered, how: `${r.reason}: ${r.message}` };
    }
    const s = (await store.get({ kind: 'AgentSession', namespace, name: t.session })) as AgentSession | undefined;
    if (!s) return { phase: t.phase, delivered: false, how: `agentsession ${t.session} is gone` };
    const annotations = {
      ...(s.metadata.annotations ?? {}),
      [RESTARTED_AT_ANNOTATION]: now,
      [RESTART_NOTE_ANNOTATION]: resumeNote(message),
    };
    await store.update({ ...s, metadata: { ...s.metadata, annotations } });
    return { phase: t.phase, delivered: true, how: `its run had ended: a new run with the message in its prompt` };
  } catch (e) {
    return { phase: t.phase, delivered: false, how: (e as Error).message };
  }
}
