/**
 * A message to an AgentSession through the store (docs/multi-host.md, "Messages"): the sender —
 * `orchctl send` for a run on another host, the pipeline's resume — puts one request on the
 * session as the annotation `orchctl.io/message` (JSON: id, text, from, force), and the node the
 * session is bound to types it into the run's pane with verified delivery at an idle point, never
 * while the run is paused, once per id, and writes the outcome to `status.messageDelivery`.
 *
 * An annotation, not a spec field: a message is a request, like the restart and resume
 * annotations — changing it must not bump the generation (a spec change can start a new run) —
 * and it reaches the node through the session's own watch, with no new kind or endpoint.
 * One message at a time: a sender waits until the last one was answered before it posts the next
 * (compare-and-swap on the session), so none is overwritten unread.
 */
import type { AgentSessionStatus, MessageDeliveryStatus } from './session.js';

export const MESSAGE_ANNOTATION = 'orchctl.io/message';

/** Bounds of a message request (the annotation is stored with the session and sent on every watch). */
export const MESSAGE_LIMITS = { text: 32 * 1024, id: 128, from: 253 } as const;

export type MessageRequest = {
  /** Unique per message: the node delivers each id once. */
  id: string;
  text: string;
  /** Who sent it (for Events): `orchctl-cli`, `pipeline/<name>`. */
  from?: string;
  /** Paste even while the agent waits at a prompt (`orchctl send --force`). */
  force?: boolean;
};

/** The states after which a message is answered for good. */
export const MESSAGE_FINAL_STATES: ReadonlySet<MessageDeliveryStatus['state']> = new Set([
  'Delivered',
  'Failed',
  'Unconfirmed',
]);

export type ParsedMessage = { ok: true; request: MessageRequest } | { ok: false; id: string; problem: string };

/** FNV-1a of a string, as hex: an id for a request too broken to carry its own. */
function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** The annotation's request, checked against its bounds; undefined when there is none. */
export function parseMessage(raw: string | undefined): ParsedMessage | undefined {
  if (raw === undefined || raw === '') return undefined;
  const bad = (problem: string, id = `invalid-${hash(raw)}`): ParsedMessage => ({ ok: false, id, problem });
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return bad(`${MESSAGE_ANNOTATION} is not JSON`);
  }
  const o = (v ?? {}) as Record<string, unknown>;
  if (typeof o.id !== 'string' || !o.id || o.id.length > MESSAGE_LIMITS.id)
    return bad(`${MESSAGE_ANNOTATION}: id must be a string of 1 to ${MESSAGE_LIMITS.id} characters`);
  if (typeof o.text !== 'string' || !o.text.trim()) return bad(`${MESSAGE_ANNOTATION}: text is empty`, o.id);
  if (o.text.length > MESSAGE_LIMITS.text)
    return bad(`${MESSAGE_ANNOTATION}: text is ${o.text.length} characters, over ${MESSAGE_LIMITS.text}`, o.id);
  const from = typeof o.from === 'string' ? o.from.slice(0, MESSAGE_LIMITS.from) : undefined;
  return {
    ok: true,
    request: { id: o.id, text: o.text, ...(from ? { from } : {}), ...(o.force === true ? { force: true } : {}) },
  };
}

/** The id of a message posted on the session and not answered yet (the slot is taken), if any. */
export function pendingMessage(
  annotations: Record<string, string> | undefined,
  status: AgentSessionStatus | undefined,
) {
  const m = parseMessage(annotations?.[MESSAGE_ANNOTATION]);
  if (!m) return undefined;
  const id = m.ok ? m.request.id : m.id;
  const d = status?.messageDelivery;
  return d?.id === id && MESSAGE_FINAL_STATES.has(d.state) ? undefined : id;
}
