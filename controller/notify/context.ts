/** What every channel's sender gets for one send (the spec comes beside it, typed per channel). */
import type { NotificationMessage } from '../api/notification-channel.js';
import type { SecretScope } from './secrets.js';

export interface SendContext {
  /** The channel's name, for the message and the receiver. */
  name: string;
  /** `webhook channel "ops"`: how results name the channel. */
  label: string;
  message: NotificationMessage;
  timeoutMs: number;
  /** The caller's cancellation (controller shutdown). */
  signal?: AbortSignal;
  secrets: SecretScope;
  /** The environment secrets and command variables are read from. */
  env: NodeJS.ProcessEnv;
}
