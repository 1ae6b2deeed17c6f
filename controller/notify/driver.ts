/**
 * A ChannelDriver: everything orchctl knows about one type of notification channel, so that the
 * rest (the Channel around it, apply's admission, `orchctl notify test`) never asks which type it
 * is. Adding a channel type is one driver file listed in drivers.ts, its spec type in
 * api/notification-channel.ts and its enum value and fields in crds/notificationchannels.yaml.
 */
import type {
  NotificationChannelSpec,
  NotificationMessage,
  NotificationSendResult,
} from '../api/notification-channel.js';
import type { SendContext } from './context.js';

export interface ChannelDriver<S extends NotificationChannelSpec = NotificationChannelSpec, Wire = unknown> {
  /** The spec's `type` (the CRD's enum value). */
  readonly type: S['type'];
  /** The spec fields this type reads besides the common ones (type, timeout, rateLimit, dailyBudget);
   *  admission refuses the others. */
  readonly fields: readonly string[];
  /** What is wrong with the type's own fields as written, before any secret is read, or undefined.
   *  Cheap and free of I/O: apply's admission calls it, so a driver loads its sending library lazily. */
  validate(spec: S): string | undefined;
  /** The message as this channel puts it on the wire (a JSON or Slack body, ntfy headers, a mail, argv). */
  format(spec: S, channel: string, message: NotificationMessage): Wire;
  /** Sends one message; may throw ChannelConfigError (a missing secret…), which the Channel reports. */
  send(spec: S, ctx: SendContext): Promise<NotificationSendResult>;
}
