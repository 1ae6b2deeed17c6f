/**
 * `orchctl send` (and the console's Send) text for a run that is not on this host's tmux socket:
 * posted on the session as a message (api/message.ts) that the node running it types at its next
 * idle point (never while it is paused), then waited for — the outcome its node wrote, within
 * --timeout. A message still waiting at the timeout is taken back, so exit 1 means it was not typed;
 * one its node had started typing is waited for a little longer.
 */
import { randomUUID } from 'node:crypto';
import { ACTIVE_PHASES } from '../api/phases.js';
import type { AgentSession, DeliveryResult } from '../api/session.js';
import { messageOutcome, postMessage, withdrawMessage } from './message.js';
import { SendError } from '../agents/send.js';
import type { Tmux } from '../observers/tmux.js';
import type { Store } from '../store/store.js';

/** How long a message its node started typing is waited for past the timeout (verified delivery's own bound). */
const TYPING_GRACE_MS = 60_000;
const POLL_MS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Where the session's live run is when it is not on this tmux socket ("on node b"), else undefined
 * (here, or no live run: the local path says why, as before).
 */
export async function runElsewhere(store: Store, tmux: Tmux, namespace: string, name: string) {
  const s = await store.get({ kind: 'AgentSession', namespace, name });
  const st = s?.status;
  if (!st?.tmuxSession || !ACTIVE_PHASES.has(st.phase ?? 'Pending') || st.phase === 'Stopping') return undefined;
  if (await tmux.hasSession(st.tmuxSession)) return undefined;
  const node = st.binding?.nodeName ?? st.lifecycle?.nodeName;
  return node ? `on node ${node}` : 'on another tmux socket';
}

export type RemoteResult = DeliveryResult & { id: string; node?: string };

export async function sendThroughStore(
  store: Store,
  namespace: string,
  name: string,
  text: string,
  o: { force?: boolean; timeoutMs: number; from?: string },
): Promise<RemoteResult> {
  const id = `send/${randomUUID()}`;
  const deadline = Date.now() + o.timeoutMs;
  const secs = `${Math.round(o.timeoutMs / 1000)}s`;
  const req = { id, text, from: o.from ?? 'orchctl-cli', ...(o.force ? { force: true } : {}) };
  let s: AgentSession;
  for (;;) {
    const r = await postMessage(store, namespace, name, req);
    if (r.outcome === 'missing') throw new SendError(`agentsession "${name}" not found in namespace "${namespace}"`);
    s = r.session;
    if (r.outcome === 'posted') break;
    if (Date.now() > deadline)
      return {
        id,
        delivered: false,
        reason: 'Busy',
        message: `another message (${r.pending}) still waited for "${name}" after ${secs}; nothing was sent`,
      };
    await sleep(POLL_MS);
  }
  const node = s.status?.binding?.nodeName;
  const by = node ? ` (by node ${node})` : '';
  let withdrawn = false;
  for (;;) {
    s = (await store.get({ kind: 'AgentSession', namespace, name })) ?? s;
    const d = messageOutcome(s, id);
    if (d)
      return {
        id,
        ...(node ? { node } : {}),
        delivered: d.state === 'Delivered',
        reason: d.reason,
        message: `${d.message}${by}`,
        ...(d.retries !== undefined ? { retries: d.retries } : {}),
        ...(d.confirmedBy ? { confirmedBy: d.confirmedBy } : {}),
      };
    if (Date.now() > deadline && !withdrawn) {
      const cur = s.status?.messageDelivery;
      const why = cur?.id === id && cur.state === 'Waiting' ? ` (${cur.message})` : '';
      if (await withdrawMessage(store, namespace, name, id))
        return {
          id,
          delivered: false,
          reason: 'TimedOut',
          message: `not taken up within ${secs}${why}; withdrawn, nothing was typed`,
        };
      withdrawn = true; // its node is typing it: wait for the outcome a little longer
    }
    if (Date.now() > deadline + TYPING_GRACE_MS)
      return {
        id,
        delivered: false,
        reason: 'Unconfirmed',
        message: `its node was still delivering it after ${secs} and ${TYPING_GRACE_MS / 1000}s more${by}`,
      };
    await sleep(POLL_MS);
  }
}
