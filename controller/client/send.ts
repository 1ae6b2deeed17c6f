/**
 * Sending into a live session as a person does it (`orchctl send`, the console's Send, Approve and
 * Deny): text for a run on another host goes through the store to its node (send-remote.ts); text
 * or answer keys for a run on this host's tmux socket take the verified delivery path
 * (agents/send.ts); either way the outcome is recorded as an Event on the session.
 */
import { parseDuration } from '../api/duration.js';
import { SessionReason } from '../api/event-reasons.js';
import { type SendRequest, SendError, sendToSession } from '../agents/send.js';
import type { Tmux } from '../observers/tmux.js';
import type { Store } from '../store/store.js';
import { EventRecorder } from './events.js';
import { runElsewhere, sendThroughStore } from './send-remote.js';

export interface PersonSend extends Pick<SendRequest, 'text' | 'approve' | 'deny' | 'keys' | 'force'> {
  /** How long to wait for a run on another host to take the text (default 60s). */
  timeout?: string;
}

export interface SendOutcome {
  delivered: boolean;
  message: string;
  [k: string]: unknown;
}

/** What was sent, for the Event: "approval", "keys Down Enter", "text (12 characters)". */
function described(req: PersonSend): string {
  if (req.approve) return 'approval';
  if (req.deny) return 'denial';
  if (req.keys?.length) return `keys ${req.keys.join(' ')}`;
  return `text (${req.text?.length ?? 0} characters)`;
}

/** Sends into session `name` for `component` (orchctl-cli, orchctl-console), which names its Events and messages. */
export async function sendAsPerson(
  store: Store,
  tmux: Tmux,
  key: { namespace: string; name: string },
  req: PersonSend,
  component: string,
  label = component === 'orchctl-cli' ? 'orchctl send' : component,
): Promise<SendOutcome> {
  const { namespace: ns, name: n } = key;
  const elsewhere = await runElsewhere(store, tmux, ns, n);
  if (elsewhere) {
    if (req.text === undefined)
      throw new SendError(
        `agentsession "${n}" runs ${elsewhere}, not on this host's tmux socket; --approve, --deny and --keys ` +
          'reach only a pane here — run orchctl send on that host, or send text',
      );
    const timeoutMs = parseDuration(req.timeout ?? '60s');
    return sendThroughStore(store, ns, n, req.text, { force: req.force, timeoutMs, from: component });
  }
  const r = await sendToSession(store, tmux, ns, n, {
    text: req.text,
    approve: req.approve,
    deny: req.deny,
    keys: req.keys,
    force: req.force,
  });
  const session = await store.get({ kind: 'AgentSession', namespace: ns, name: n });
  if (session)
    await new EventRecorder(store, component).record(
      session,
      r.delivered ? 'Normal' : 'Warning',
      r.delivered ? SessionReason.MessageSent : SessionReason.MessageNotConfirmed,
      `${label}: ${described(req)}: ${r.message}`,
    );
  return r;
}
