/**
 * Approve/reject links on a pending Decision's notification (docs/console.md "Action links"), minted
 * when the message is sent, not when it is recorded: a link is a credential and the Notification
 * object must not hold one. A re-send after a crash mints fresh links; each is single-use and a
 * Decision is answered once, so two sets of links can still act only once.
 */
import { AutopilotReason } from '../../api/event-reasons.js';
import type { NotificationMessage } from '../../api/notification-channel.js';
import type { Notification } from '../../api/outbox.js';
import { decisionLinks } from '../../notify/action-links.js';
import type { Store } from '../../store/store.js';

export interface LinkConfig {
  key: Buffer;
  /** The console's external URL (`--console-url`): links are made to it and nothing else. */
  base: URL;
  ttlMs: number;
}

/** The Decision a DecisionPending notification is about: its Event is `<decision>.pending` (autopilot/writes.ts). */
export function pendingDecisionOf(n: Notification): { namespace: string; name: string } | undefined {
  if (n.spec?.source !== 'event' || n.spec.event?.reason !== AutopilotReason.DecisionPending) return undefined;
  const m = /^([^/]*)\/(.+)\.pending$/.exec(n.spec.eventKey ?? '');
  return m ? { namespace: m[1] || 'default', name: m[2] } : undefined;
}

/** The message with the Decision's links when it is still open; as it is otherwise (no links: the CLI way stands). */
export async function withActionLinks(
  store: Store,
  n: Notification,
  message: NotificationMessage,
  links: LinkConfig | undefined,
  now: number,
): Promise<NotificationMessage> {
  const ref = links && pendingDecisionOf(n);
  if (!links || !ref) return message;
  const d = await store.get({ kind: 'Decision' as const, ...ref });
  const rv = d?.metadata.resourceVersion;
  if (!d || !rv || d.status?.phase !== 'PendingApproval' || d.spec?.approval) return message;
  const target = { ...ref, resourceVersion: rv };
  return { ...message, actions: decisionLinks(links.key, links.base, target, links.ttlMs, now, n.spec?.channel) };
}
