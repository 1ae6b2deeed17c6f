/**
 * Notification channels (issue 14): how one message reaches one destination. The spec is what a
 * NotificationChannel object will hold, the message is what the notifier routes to it, and the
 * result is what a send reports back to the outbox. They live in api/ because the CRD, the outbox
 * records `orchctl get notifications` prints and the routing engine all share them; the sending
 * itself is in controller/notify/.
 *
 * Secrets (webhook URLs, tokens, SMTP credentials) are only ever references to the controller's
 * environment or a file, resolved at send time, so no object holds one.
 */
import type { EnvVar } from './agent.js';
import type { EventType } from './event.js';

/** Seed 002's tiers: 1 urgent, 2 action, 3 summary, 4 debug. */
export type NotificationTier = 1 | 2 | 3 | 4;

export const TIER_NAMES: Record<NotificationTier, string> = { 1: 'urgent', 2: 'action', 3: 'summary', 4: 'debug' };

/** Where a secret is read at send time: a variable of the controller's environment, or a file. */
export type SecretSource = NonNullable<EnvVar['valueFrom']>;

type ChannelCommon = {
  /** Go duration for one send, connection to answer; default 10s. */
  timeout?: string;
  /** At most `count` send attempts per `per` (Go duration); over it a send is retryable after the window. */
  rateLimit?: { count: number; per: string };
  /** Messages per day before tier 2/3 are deferred to the digest: enforced by the notifier, not here. */
  dailyBudget?: number;
};

export type WebhookChannelSpec = ChannelCommon & {
  type: 'webhook';
  urlFrom: SecretSource;
  /** `json` (default): orchctl's message as JSON; `slack`: a Slack incoming-webhook body. */
  format?: 'json' | 'slack';
};

export type NtfyChannelSpec = ChannelCommon & {
  type: 'ntfy';
  /** The whole topic URL as a secret (a topic name is a password on a public server)… */
  urlFrom?: SecretSource;
  /** …or a server and a topic written in the object. */
  server?: string;
  topic?: string;
  /** An access token, sent as `Authorization: Bearer`. */
  tokenFrom?: SecretSource;
  /** Extra ntfy tags (emoji short codes or words) on every message. */
  tags?: string[];
};

export type EmailChannelSpec = ChannelCommon & {
  type: 'email';
  host: string;
  /** Default 465 with `secure`, else 587. */
  port?: number;
  /** TLS from the first byte (SMTPS, usually port 465). */
  secure?: boolean;
  /** Refuse to send unless the server upgrades the connection with STARTTLS. */
  requireTLS?: boolean;
  /** A PEM file with the CA that signed the server's certificate (a private CA). */
  tls?: { caFile?: string };
  from: string;
  to: string[];
  usernameFrom?: SecretSource;
  passwordFrom?: SecretSource;
};

export type CommandChannelSpec = ChannelCommon & {
  type: 'command';
  /** Program and arguments, run without a shell. `{{title}}`, `{{body}}`, `{{tier}}`, `{{tierName}}`,
   *  `{{link}}` and `{{idempotencyKey}}` inside an argument become the message's values. */
  command: string[];
  env?: EnvVar[];
};

export type NotificationChannelSpec = WebhookChannelSpec | NtfyChannelSpec | EmailChannelSpec | CommandChannelSpec;

/** A channel type: what a driver in notify/drivers.ts sends with. */
export type ChannelType = NotificationChannelSpec['type'];

/** One Event behind a message, as much of it as a receiver needs. */
export type NotificationEventRef = {
  type: EventType;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; namespace?: string };
  count?: number;
  lastTimestamp?: string;
};

export type NotificationMessage = {
  /** Stable across re-sends of the same message (printable ASCII, no spaces, at most 200 characters). */
  idempotencyKey: string;
  tier: NotificationTier;
  title: string;
  body: string;
  events?: NotificationEventRef[];
  /** An http(s) URL to open (a dashboard, the session); other schemes are left out. */
  link?: string;
  /** Signed action links (a pending Decision's approve and reject), each opening a confirmation page. */
  actions?: NotificationLink[];
};

export type NotificationLink = { action: 'approve' | 'reject'; label: string; url: string };

/**
 * What a send came to. `code` is the class of outcome (and the metrics' `result` label);
 * `status` the destination's own figure when it gave one: HTTP status, SMTP reply or exit code.
 */
export type NotificationSendCode =
  | 'sent'
  | 'rejected' // the destination refused this message for good (4xx, SMTP 5xx, a failing exit code)
  | 'server_error' // the destination failed, or asked to try again (5xx, SMTP 4xx, exit 75)
  | 'rate_limited' // HTTP 429, or over the channel's own rateLimit
  | 'timeout'
  | 'cancelled'
  | 'network' // connection refused or reset, name not resolved
  | 'config'; // the channel or message cannot work as written: a missing secret, a bad URL, no such program

export type NotificationSendResult = {
  delivered: boolean;
  code: NotificationSendCode;
  status?: number;
  /** Names the channel, never a URL or secret; safe for a status, an Event or a log. */
  message: string;
  retryable: boolean;
  /** When the destination (Retry-After) or the rate limit says when to try again. */
  retryAfterMs?: number;
};
