/**
 * The Notification kind: the notifier's outbox (issue 14). Every Event a NotificationPolicy routes
 * becomes one Notification per channel, recorded in the store before anything is sent, so that a
 * controller killed at any instant finds, on restart, what it still owes: a `Pending` message is
 * sent (again, with the same idempotency key), a `Deferred` one is decided again when due, and a
 * batch or the digest picks up what waits for it. `orchctl get notifications` lists the outbox.
 *
 * The controller writes these objects; `apply` refuses them (a person's message goes through
 * `orchctl notify test`). The spec is fixed when the message is recorded, so a re-send is the same
 * message; the status is where it is on its way.
 */
import type { NotificationPolicySchemaStatus } from './generated/notificationpolicy.js';
import type { EventType } from './event.js';
import type {
  NotificationChannelSpec,
  NotificationEventRef,
  NotificationSendCode,
  NotificationTier,
} from './notification-channel.js';
import type { Resource } from './types.js';

/**
 * - `Pending`: recorded, to be sent (again after `status.nextAttemptAt` when an attempt failed);
 * - `Sent`: the channel took it; `Failed`: it never will (refused, or retries used up);
 * - `Deferred`: held until `status.until` (quiet hours, groupWait, groupInterval), then decided again;
 * - `Batched`: in the channel's tier-3 batch; `Flushed`: went out with a batch message (`status.sentWith`);
 * - `Digest`: past the daily budget, waits for the digest; `Digested`: went out in one (`status.sentWith`);
 * - `Suppressed`: never sent (tier 4, inhibited, silenced); `status.reason` says which.
 */
export const NOTIFICATION_PHASES = [
  'Pending',
  'Sent',
  'Failed',
  'Deferred',
  'Batched',
  'Flushed',
  'Digest',
  'Digested',
  'Suppressed',
] as const;
export type NotificationPhase = (typeof NOTIFICATION_PHASES)[number];

/** What a message is: one Event's, a channel's tier-3 batch, the digest, or a test. */
export type NotificationSource = 'event' | 'batch' | 'digest';

export type NotificationSpec = {
  /** The NotificationPolicy that routed it (same namespace). */
  policy: string;
  /** The NotificationChannel it goes to (same namespace). */
  channel: string;
  tier: NotificationTier;
  source: NotificationSource;
  /** The route's path in the policy (`route.routes[0]`); empty for a batch or digest. */
  route?: string;
  /** The group it is paced with (routing's groupKey). */
  groupKey?: string;
  /** For `event`: the Event (namespace/name, as matchers.eventKey) and its count when routed. */
  eventKey?: string;
  event?: NotificationEventRef & { type: EventType; count: number };
  title: string;
  body: string;
  /** For a batch, a digest, or a message that took a batch along: the Notifications it carries. */
  items?: string[];
};

export type NotificationStatus = {
  phase: NotificationPhase;
  /** Why it is in this phase: `quietHours`, `budget`, `tier4`, `inhibited`, `silenced`, a send code… */
  reason?: string;
  message?: string;
  /** Deferred until, or the batch's flush time (RFC 3339). */
  until?: string;
  attempts?: number;
  lastAttemptAt?: string;
  nextAttemptAt?: string;
  /** The last attempt's outcome (NotificationSendResult.code) and the destination's own figure. */
  code?: NotificationSendCode;
  httpStatus?: number;
  sentAt?: string;
  /** The batch, digest or tier 1/2 message this one went out with. */
  sentWith?: string;
};

export type Notification = Resource<NotificationSpec, NotificationStatus>;

/** The metadata.labels the notifier sets on each Notification, for `get notifications -l …`. */
export const NOTIFICATION_LABELS = {
  policy: 'notifications.orchctl.io/policy',
  channel: 'notifications.orchctl.io/channel',
  tier: 'notifications.orchctl.io/tier',
  source: 'notifications.orchctl.io/source',
} as const;

/** Annotation on a NotificationPolicy asking the controller for a digest now (`orchctl digest --now`). */
export const DIGEST_REQUEST_ANNOTATION = 'notifications.orchctl.io/digest-requested';

/** What the notifier writes into a NotificationChannel's status: its day so far, for `get` and metrics. */
export type NotificationChannelStatus = {
  /** The budget's day (YYYY-MM-DD in the policy's time zone) the counts are for. */
  day?: string;
  /** Messages sent this day, and the day's budget. */
  sent?: number;
  budget?: number;
  /** Notifications waiting: Deferred (quiet hours, group timers), Batched, and in the Digest. */
  deferred?: number;
  batched?: number;
  digest?: number;
  lastSentAt?: string;
  /** The last failed attempt (a send code and a message naming no secret). */
  lastFailure?: { at: string; code: NotificationSendCode; message: string };
  /** True while the last attempt on this channel failed. */
  failing?: boolean;
};

export type NotificationChannel = Resource<NotificationChannelSpec, NotificationChannelStatus>;

/** What the notifier writes into a NotificationPolicy's status. */
export type NotificationPolicyStatus = NotificationPolicySchemaStatus;
