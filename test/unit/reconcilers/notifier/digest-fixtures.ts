/**
 * Objects the digest reads, shaped as the notifier and the other writers leave them in the store:
 * Notifications (one per routed Event and channel), sessions with their WaitingForInput condition,
 * Evaluations, channels with the status the notifier writes.
 */
import type { Evaluation } from '../../../../controller/api/evaluation.js';
import type { AgentSession } from '../../../../controller/api/kinds.js';
import type { NotificationPolicy } from '../../../../controller/api/notification.js';
import type { NotificationTier } from '../../../../controller/api/notification-channel.js';
import type {
  Notification,
  NotificationChannelStatus,
  NotificationPhase,
  NotificationSource,
} from '../../../../controller/api/outbox.js';
import { API_VERSION } from '../../../../controller/api/types.js';
import type { DigestChannel } from '../../../../controller/notify/digest/index.js';
import { defaultPolicy } from './fixtures.js';

export const NOW = Date.parse('2026-06-02T07:00:00Z');
export const SINCE = Date.parse('2026-06-01T07:00:00Z');

let serial = 0;

export type NotifOpts = {
  reason: string;
  session?: string;
  kind?: string;
  channel?: string;
  phase?: NotificationPhase;
  created: string;
  count?: number;
  tier?: NotificationTier;
  source?: NotificationSource;
  title?: string;
  message?: string;
  policy?: string;
  until?: string;
  why?: string;
};

/** One routed Event on one channel; the same Event on another channel shares eventKey and count. */
export function notif(o: NotifOpts): Notification {
  const session = o.session ?? 's1';
  const kind = o.kind ?? 'AgentSession';
  const channel = o.channel ?? 'default';
  const source = o.source ?? 'event';
  const eventName = `${session}.${o.reason.toLowerCase()}`;
  const message = o.message ?? `${o.reason} on ${session}`;
  return {
    apiVersion: API_VERSION,
    kind: 'Notification',
    metadata: {
      name: `default.${channel}.${++serial}`,
      namespace: 'default',
      uid: `uid-${serial}`,
      creationTimestamp: o.created,
    },
    spec: {
      policy: o.policy ?? 'default',
      channel,
      tier: o.tier ?? 3,
      source,
      ...(source === 'event'
        ? {
            eventKey: `default/${eventName}`,
            event: {
              type: 'Normal',
              reason: o.reason,
              message,
              involvedObject: { kind, name: session, namespace: 'default' },
              count: o.count ?? 1,
              lastTimestamp: o.created,
            },
          }
        : {}),
      title: o.title ?? `${o.reason}: ${kind} default/${session}`,
      body: message,
    },
    status: {
      phase: o.phase ?? 'Sent',
      ...(o.why ? { reason: o.why } : {}),
      ...(o.until ? { until: o.until } : {}),
    },
  };
}

export function session(name: string, waiting?: { since: string; message: string }): AgentSession {
  return {
    apiVersion: API_VERSION,
    kind: 'AgentSession',
    metadata: { name, namespace: 'default' },
    spec: {},
    status: {
      phase: 'Running',
      conditions: [
        waiting
          ? {
              type: 'WaitingForInput',
              status: 'True',
              reason: 'Question',
              message: waiting.message,
              lastTransitionTime: waiting.since,
            }
          : { type: 'WaitingForInput', status: 'False', reason: 'NotWaiting', message: '', lastTransitionTime: '' },
      ],
    },
  } as AgentSession;
}

export function evaluation(
  name: string,
  o: { created: string; evaluatedAt?: string; score?: number; session?: string; run?: number },
): Evaluation {
  return {
    apiVersion: API_VERSION,
    kind: 'Evaluation',
    metadata: { name, namespace: 'default', creationTimestamp: o.created },
    spec: { sessionRef: o.session ?? 's1', run: o.run ?? 1 },
    status:
      o.score === undefined
        ? { phase: 'Pending' }
        : {
            phase: 'Judged',
            score: o.score,
            outcome: o.score >= 4 ? 'success' : 'partial',
            recommendation: o.score >= 4 ? 'complete' : 'continue',
            evaluatedAt: o.evaluatedAt ?? o.created,
          },
  };
}

export function channel(
  name: string,
  type: 'webhook' | 'ntfy' | 'email' | 'command',
  status?: NotificationChannelStatus,
) {
  return { metadata: { name }, spec: { type }, ...(status ? { status } : {}) } satisfies DigestChannel;
}

/** The shipped default policy with `slack` besides `default` on the root route. */
export function policy(): NotificationPolicy {
  const p = defaultPolicy();
  p.metadata.namespace = 'default';
  p.spec!.route.channels = ['default', 'slack'];
  return p;
}
