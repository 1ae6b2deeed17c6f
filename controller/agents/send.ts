/**
 * Sending into a live session (`orchctl send`, the circuit breaker's interventions): resolve the
 * session's pane, agent and confirmation sources from the store, then take the verified delivery
 * path (agents/delivery.ts) under the pane's lock — the same path as the task prompt. Usable from
 * the controller and from the CLI process alike: everything it needs is in the store and the
 * run's workspace.
 */
import { isTrue } from '../api/conditions.js';
import { parseDuration } from '../api/duration.js';
import type { AgentSessionStatus, AgentSpec } from '../api/kinds.js';
import { driverFor } from './drivers.js';
import { deliverKeys, deliverText, type DeliveryResult, type PaneTarget, type TextDelivery } from './delivery.js';
import { classifyScreen, profileFor, type DetectionProfile } from './detection.js';
import type { Tmux } from '../observers/tmux.js';
import type { Store } from '../store/store.js';

export interface SendRequest {
  text?: string;
  /** Answer the prompt on screen with the Agent's approve keys / deny keys, or explicit keys. */
  approve?: boolean;
  deny?: boolean;
  keys?: string[];
  /** Paste text even while the agent waits at a permission prompt or dialog. */
  force?: boolean;
  /**
   * The continue message after a rate-limit pause: when the limit is still a dialog on screen whose
   * Agent declares answer keys (Gemini CLI's "Usage limit reached … 1. Keep trying"), those keys are
   * the continue — the agent retries its request itself; text could not go in there.
   */
  resume?: boolean;
}

export class SendError extends Error {}

/** Where deliveries into a run's pane go, and how they are confirmed (hooks and transcript, else the screen). */
export function paneTargetFor(
  tmux: Tmux,
  target: string,
  status: AgentSessionStatus,
  agent: AgentSpec | undefined,
): PaneTarget {
  const { transcript, records, sessionId } = (status.agent ?? {}) as {
    transcript?: string;
    records?: string;
    sessionId?: string;
  };
  const driver = driverFor(agent);
  return {
    tmux,
    target,
    workspace: status.workspace!,
    transcript,
    hooks: driver.hooks(agent),
    ...(records && driver.promptRecords ? { records: driver.promptRecords(records, sessionId) } : {}),
  };
}

/** A text delivery the way the Agent asks for it: its submit keys, its input-ready pattern, its ready timeout. */
export function textDeliveryFor(agent: AgentSpec, text: string, bufferName: string): TextDelivery {
  const profile = profileFor(agent);
  return {
    text,
    bufferName,
    submitKeys: agent.submitKeys ?? ['Enter'],
    ready: profile ? (screen) => classifyScreen(screen, profile).inputReady === true : undefined,
    readyTimeoutMs: parseDuration(agent.readyTimeout ?? '30s'),
  };
}

/** The screen shows one of `states` (a prompt still up); without detection data, never. */
export function showing(profile: DetectionProfile | undefined, states: string[]): (screen: string) => boolean {
  return (screen) => !!profile && states.includes(classifyScreen(screen, profile).state);
}

let counter = 0;

export async function sendToSession(
  store: Store,
  tmux: Tmux,
  namespace: string,
  name: string,
  req: SendRequest,
): Promise<DeliveryResult> {
  const s = await store.get({ kind: 'AgentSession', namespace, name });
  if (!s) throw new SendError(`agentsession "${name}" not found in namespace "${namespace}"`);
  const st = s.status ?? {};
  if ((st.phase !== 'Running' && st.phase !== 'Starting') || !st.tmuxSession || !st.workspace)
    throw new SendError(`agentsession "${name}" is not running (phase ${st.phase ?? 'Pending'}); nothing to send to`);
  let agent: AgentSpec | undefined = s.spec?.agent;
  if (!agent && s.spec?.agentRef) agent = (await store.get({ kind: 'Agent', namespace, name: s.spec.agentRef }))?.spec;
  if (!agent) throw new SendError(`agentsession "${name}": its Agent "${s.spec?.agentRef}" is gone`);
  const profile = profileFor(agent);
  const target = paneTargetFor(tmux, `=${st.tmuxSession}:`, st, agent);
  const waiting = st.conditions?.find((c) => c.type === 'WaitingForInput');

  if (req.approve || req.deny || req.keys?.length) {
    let keys = req.keys?.length ? req.keys : req.approve ? profile?.approveKeys : profile?.denyKeys;
    if (!req.keys?.length && profile) {
      // A startup dialog is not a permission prompt: the approve keys would pick its default,
      // which for some dialogs stops the task (auto-mode-unavailable: Enter ends the turn). Answer
      // with the dialog's own keys where the Agent declares them, else say what is on screen.
      const screen = classifyScreen(await tmux.capture(target.target, 60), profile);
      // A screen no pattern knows has no known answer: approve keys would press whatever is preselected.
      if (screen.state === 'unknown' && waiting?.status === 'True' && waiting.reason === 'UnrecognisedScreen')
        throw new SendError(
          `agentsession "${name}" shows a screen its Agent's detection patterns do not know, which ` +
            `--${req.approve ? 'approve' : 'deny'} does not answer; read it with orchctl describe (or attach) ` +
            'and answer it with --keys',
        );
      if (screen.state === 'dialog') {
        const dialog = profile.dialogs.find((d) => d.name === screen.dialog);
        if (req.approve && dialog?.answerKeys?.length) keys = dialog.answerKeys;
        else
          throw new SendError(
            `agentsession "${name}" shows the ${screen.dialog ?? 'startup'} dialog, ` +
              `which --${req.approve ? 'approve' : 'deny'} does not answer` +
              `${dialog?.answerKeys?.length ? '' : ' (the Agent declares no answer keys for it)'}` +
              '; answer it with --keys' +
              (screen.dialog === 'auto-mode-unavailable'
                ? ", or avoid it with the Agent's --permission-mode manual (docs/agents.md)"
                : ''),
          );
      }
    }
    if (!keys?.length)
      throw new SendError(
        `the Agent of "${name}" declares no ${req.approve ? 'approve' : 'deny'} keys (spec.detection); use --keys`,
      );
    const since = waiting && waiting.status === 'True' ? Date.parse(waiting.lastTransitionTime) : 0;
    return deliverKeys(target, {
      keys,
      // Without detection data there is nothing to tell the prompt by: one press, unconfirmed retries avoided.
      // A screen raised as UnrecognisedScreen is the prompt being answered: its going away confirms.
      stillWaiting: showing(
        profile,
        waiting?.status === 'True' && waiting.reason === 'UnrecognisedScreen'
          ? ['waiting', 'dialog', 'unknown']
          : ['waiting', 'dialog'],
      ),
      notBefore: since ? since + 300 : undefined,
    });
  }
  if (!req.text?.trim()) throw new SendError('nothing to send: give TEXT, -f FILE, --approve, --deny or --keys');
  if (req.resume && profile) {
    const screen = classifyScreen(await tmux.capture(target.target, 60), profile);
    const keys = profile.dialogs.find((d) => d.name === screen.dialog)?.answerKeys;
    if (screen.state === 'dialog' && screen.quotaExhausted && keys?.length)
      return deliverKeys(target, { keys, stillWaiting: showing(profile, ['dialog']) });
  }
  if (isTrue(st.conditions, 'WaitingForInput') && !req.force)
    throw new SendError(
      `agentsession "${name}" is waiting for an answer (${waiting?.reason}: ${waiting?.message}); ` +
        'answer it with --approve or --deny, or pass --force to paste anyway',
    );
  return deliverText(target, textDeliveryFor(agent, req.text, `orchctl-send-${process.pid}-${++counter}`));
}
