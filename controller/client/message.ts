/**
 * Sending a message to an AgentSession through the store (api/message.ts): post it as the
 * orchctl.io/message annotation (compare-and-swap, only while no earlier message waits), read how
 * its node delivered it (status.messageDelivery), or take it back while it still waits. What the
 * CLI (`orchctl send` to a run on another host) and the pipeline's resume share.
 */
import { MESSAGE_ANNOTATION, MESSAGE_FINAL_STATES, type MessageRequest, pendingMessage } from '../api/message.js';
import type { AgentSession, MessageDeliveryStatus } from '../api/session.js';
import type { ObjectKey } from '../api/types.js';
import { retryOnConflict } from '../store/retry.js';
import type { Store } from '../store/store.js';

export type PostOutcome =
  | { outcome: 'posted'; session: AgentSession }
  /** Another message waits for its delivery: one at a time. */
  | { outcome: 'busy'; pending: string; session: AgentSession }
  | { outcome: 'missing' };

const ATTEMPTS = 5;

const keyOf = (namespace: string, name: string): ObjectKey<'AgentSession'> => ({
  kind: 'AgentSession',
  namespace,
  name,
});

/** Posts `req` on the session unless another message is still waiting (then: busy). Idempotent per id. */
export async function postMessage(
  store: Store,
  namespace: string,
  name: string,
  req: MessageRequest,
): Promise<PostOutcome> {
  return retryOnConflict(
    async (): Promise<PostOutcome> => {
      const s = await store.get(keyOf(namespace, name));
      if (!s || s.metadata.deletionTimestamp) return { outcome: 'missing' };
      const pending = pendingMessage(s.metadata.annotations, s.status);
      if (pending === req.id) return { outcome: 'posted', session: s };
      if (pending) return { outcome: 'busy', pending, session: s };
      // Already answered (a retry after a lost reply): posting it again would be a second message.
      if (s.status?.messageDelivery?.id === req.id) return { outcome: 'posted', session: s };
      const annotations = { ...(s.metadata.annotations ?? {}), [MESSAGE_ANNOTATION]: JSON.stringify(req) };
      const written = await store.update({ ...s, metadata: { ...s.metadata, annotations } });
      return { outcome: 'posted', session: written };
    },
    { attempts: ATTEMPTS },
  );
}

/** How the message `id` went, once its node answered it for good (undefined: not yet, or not known). */
export function messageOutcome(s: AgentSession | undefined, id: string): MessageDeliveryStatus | undefined {
  const d = s?.status?.messageDelivery;
  return d?.id === id && MESSAGE_FINAL_STATES.has(d.state) ? d : undefined;
}

/**
 * Takes the message `id` back while its node has not started typing it (compare-and-swap: a node
 * that records Delivering first wins, and then it goes in). True when it was taken back.
 */
export async function withdrawMessage(store: Store, namespace: string, name: string, id: string): Promise<boolean> {
  return retryOnConflict(
    async () => {
      const s = await store.get(keyOf(namespace, name));
      if (!s || pendingMessage(s.metadata.annotations, s.status) !== id) return false;
      if (s.status?.messageDelivery?.id === id && s.status.messageDelivery.state === 'Delivering') return false;
      const annotations = { ...(s.metadata.annotations ?? {}) };
      delete annotations[MESSAGE_ANNOTATION];
      await store.update({ ...s, metadata: { ...s.metadata, annotations } });
      return true;
    },
    { attempts: ATTEMPTS },
  );
}
