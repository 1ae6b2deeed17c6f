/**
 * The words of a notification: what one Event says, what a tier-3 batch says, and the message a
 * channel receives for a Notification. Built when the Notification is recorded and kept in its
 * spec, so a re-send after a crash is the same message.
 */
import type { EventObject } from '../../api/event.js';
import type { NotificationMessage } from '../../api/notification-channel.js';
import type { Notification } from '../../api/outbox.js';

const MAX_TITLE = 200;
const MAX_BODY = 4000;
/** How many items a batch message lists before "… and N more". */
const MAX_BATCH_LINES = 30;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const firstLine = (s: string) => s.split('\n', 1)[0];

/** `WaitingForInput: AgentSession default/fix-login` and the Event's message. */
export function eventMessage(e: EventObject): { title: string; body: string } {
  const o = e.involvedObject;
  const ns = o.namespace ?? e.metadata.namespace;
  const title = `${e.reason}: ${o.kind} ${ns ? `${ns}/` : ''}${o.name}`;
  const times = e.count > 1 ? ` (${e.count} times, last at ${e.lastTimestamp})` : '';
  return { title: clip(title, MAX_TITLE), body: clip(`${e.message}${times}`, MAX_BODY) };
}

/** One message for a channel's tier-3 batch: a line per item. */
export function batchMessage(items: Notification[]): { title: string; body: string } {
  const lines = items.slice(0, MAX_BATCH_LINES).map((n) => `- ${n.spec!.title}: ${clip(firstLine(n.spec!.body), 160)}`);
  if (items.length > MAX_BATCH_LINES) lines.push(`… and ${items.length - MAX_BATCH_LINES} more`);
  const title = `${items.length} update${items.length === 1 ? '' : 's'} from orchctl`;
  return { title, body: clip(lines.join('\n'), MAX_BODY) };
}

/** A message that takes the channel's pending batch along says so after its own text. */
export function withBatch(own: { title: string; body: string }, items: Notification[]): string {
  if (!items.length) return own.body;
  const batch = batchMessage(items);
  return clip(`${own.body}\n\nAlso (${batch.title}):\n${batch.body}`, MAX_BODY);
}

/** What a channel receives for a Notification; the idempotency key is the object's uid, fixed at record time. */
export function channelMessage(n: Notification): NotificationMessage {
  const e = n.spec!.event;
  return {
    idempotencyKey: `orchctl-${n.metadata.uid ?? n.metadata.name}`,
    tier: n.spec!.tier,
    title: n.spec!.title,
    body: n.spec!.body,
    ...(e ? { events: [e] } : {}),
  };
}
