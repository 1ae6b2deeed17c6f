/**
 * status.messageDelivery, pure: a message posted on the session (api/message.ts, the
 * orchctl.io/message annotation) is typed into the run's pane by the node that runs it — at an
 * idle point, never while the run is paused, once per id.
 *
 *   Waiting     the run cannot take it now (its prompt is still going in, the agent is busy, a
 *               context step or a pause holds it, no live pane); looked at again on every pass;
 *   Delivering  recorded in status by the actuator BEFORE anything is typed (message-delivery.ts),
 *               against a read that still carries the message;
 *   Delivered / Failed  the verified delivery's outcome, with a MessageSent / MessageNotConfirmed Event;
 *   Unconfirmed Delivering found with no delivery in flight: the node stopped mid-delivery. It is
 *               never typed again (a person or the pipeline may send a new message).
 * A message for a session with no live run fails at once (NotRunning); a message withdrawn while it
 * waited (its sender timed out) is Failed with Withdrawn.
 */
import { SessionReason } from '../../api/event-reasons.js';
import { currentPause } from '../../api/pause.js';
import { MESSAGE_ANNOTATION, MESSAGE_FINAL_STATES, parseMessage } from '../../api/message.js';
import type { AgentSessionStatus, DeliveryResult, MessageDeliveryStatus } from '../../api/session.js';
import type { Effect } from './effects.js';

export interface MessageInput {
  annotations: Record<string, string> | undefined;
  /** The status planned so far in this pass (the agent's state and the pause applied). */
  status: AgentSessionStatus;
  /** The run's pane is alive. */
  live: boolean;
  /** What the actuator knows of the message being delivered. */
  inFlight?: { id: string; result: DeliveryResult | 'pending' | undefined };
  now: number;
}

export interface MessageOutput {
  /** The new status.messageDelivery. */
  delivery: MessageDeliveryStatus | undefined;
  effects: Effect[];
  /** Look again after this long (a waiting message). */
  dueMs?: number;
}

/** A waiting message is looked at again at least this often (most changes wake the session anyway). */
export const MESSAGE_WAIT_POLL_MS = 5000;

const iso = (t: number) => new Date(t).toISOString();
const clip = (s: string, n = 1024) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Why the run cannot take a message now, or undefined when it can. */
export function waitReason(s: AgentSessionStatus, live: boolean): { reason: string; message: string } | undefined {
  const run = s.run ?? 0;
  if (s.phase === 'Starting') return { reason: 'Starting', message: `run ${run} is starting` };
  const pause = currentPause(s);
  if (pause) {
    const until = pause.until ? ` until ${pause.until}` : '';
    return { reason: 'Paused', message: `the run is paused (${pause.reason}${until}); sent when it resumes` };
  }
  if (s.conditions?.some((c) => c.type === 'PromptDelivered' && c.reason === 'Delivering'))
    return { reason: 'PromptPending', message: `run ${run}'s task prompt is still being delivered` };
  if (s.context?.run === run && s.context.step)
    return { reason: 'ContextAction', message: `a context step (${s.context.step.name}) is in progress` };
  if (!live) return { reason: 'NoPane', message: `run ${run} has no live pane` };
  const state = s.agent?.run === run ? s.agent.state : undefined;
  // Only a turn in progress waits: a prompt on screen is sendToSession's to refuse (or --force), and an
  // agent nothing tells about ('starting' with no source) is left to verified delivery's own wait.
  if (state === 'busy') return { reason: 'AgentBusy', message: 'the agent is busy; sent at its next idle point' };
  return undefined;
}

export function planMessage(i: MessageInput): MessageOutput {
  const s = i.status;
  const cur = s.messageDelivery;
  const now = iso(i.now);
  const effects: Effect[] = [];
  const event = (ok: boolean, reason: string, message: string) =>
    effects.push({ type: 'RecordEvent', eventType: ok ? 'Normal' : 'Warning', reason, message: clip(message) });
  const from = (d: { from?: string }) => (d.from ? ` from ${d.from}` : '');

  // A delivery under way: its outcome, or its loss.
  if (cur?.state === 'Delivering') {
    const f = i.inFlight?.id === cur.id ? i.inFlight : undefined;
    if (f?.result === 'pending') return { delivery: cur, effects };
    if (!f?.result) {
      const delivery: MessageDeliveryStatus = {
        ...cur,
        state: 'Unconfirmed',
        delivered: false,
        reason: 'Unconfirmed',
        message: 'the node stopped while delivering it; it is not sent again',
        at: now,
      };
      event(false, SessionReason.MessageNotConfirmed, `message ${cur.id}${from(cur)}: ${delivery.message}`);
      return { delivery, effects };
    }
    const r = f.result;
    const delivery: MessageDeliveryStatus = {
      ...cur,
      state: r.delivered ? 'Delivered' : 'Failed',
      delivered: r.delivered,
      reason: clip(r.reason, 64),
      message: clip(r.message),
      ...(r.retries !== undefined ? { retries: r.retries } : {}),
      ...(r.confirmedBy ? { confirmedBy: r.confirmedBy } : {}),
      at: now,
    };
    event(
      r.delivered,
      r.delivered ? SessionReason.MessageSent : SessionReason.MessageNotConfirmed,
      `message ${cur.id}${from(cur)}: ${r.message}`,
    );
    effects.push({ type: 'MessageRecorded', id: cur.id });
    return { delivery, effects };
  }

  const m = parseMessage(i.annotations?.[MESSAGE_ANNOTATION]);
  const id = m ? (m.ok ? m.request.id : m.id) : undefined;
  if (cur?.state === 'Waiting' && cur.id !== id) {
    // Taken back by its sender (or replaced) before it could go in.
    const delivery = { ...cur, state: 'Failed' as const, delivered: false, reason: 'Withdrawn', at: now };
    return { delivery: { ...delivery, message: 'withdrawn by its sender before it could be delivered' }, effects };
  }
  if (!m || (cur && cur.id === id && MESSAGE_FINAL_STATES.has(cur.state))) return { delivery: cur, effects };
  const run = s.run ?? 0;
  if (!m.ok) {
    event(false, SessionReason.MessageNotConfirmed, `message ${m.id}: ${m.problem}`);
    return {
      delivery: { id: m.id, state: 'Failed', delivered: false, reason: 'Invalid', message: m.problem, at: now },
      effects,
    };
  }
  const req = m.request;
  const base = { id: req.id, ...(req.from ? { from: req.from } : {}), run };
  if (s.phase !== 'Running' && s.phase !== 'Starting') {
    const message = `the session is not running (phase ${s.phase ?? 'Pending'}); nothing to deliver to`;
    event(false, SessionReason.MessageNotConfirmed, `message ${req.id}${from(req)}: ${message}`);
    return {
      delivery: { ...base, state: 'Failed', delivered: false, reason: 'NotRunning', message, at: now },
      effects,
    };
  }
  const wait = waitReason(s, i.live);
  if (wait) {
    if (cur?.id === req.id && cur.state === 'Waiting' && cur.reason === wait.reason)
      return { delivery: cur, effects, dueMs: MESSAGE_WAIT_POLL_MS };
    // Told once per reason (the pause is worth a line; a busy agent is the usual wait).
    if (wait.reason !== 'AgentBusy')
      event(true, SessionReason.MessageWaiting, `message ${req.id}${from(req)}: ${wait.message}`);
    return { delivery: { ...base, state: 'Waiting', ...wait, at: now }, effects, dueMs: MESSAGE_WAIT_POLL_MS };
  }
  const record: MessageDeliveryStatus = {
    ...base,
    state: 'Delivering',
    reason: 'Delivering',
    message: `typing ${req.text.length} characters into run ${run}'s pane`,
    at: now,
  };
  effects.push(
    { type: 'DeliverMessage', run, request: req, record },
    { type: 'WorkspaceLog', run, level: 'INFO', message: `message ${req.id}${from(req)}: delivering` },
  );
  // The actuator stores `record` before typing; this pass's own write leaves it as it finds it.
  return { delivery: cur, effects };
}
