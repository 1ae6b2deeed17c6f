/** The channel drivers, by the spec's `type`: the one place that lists every channel type. */
import type { NotificationChannelSpec } from '../api/notification-channel.js';
import { commandDriver } from './command.js';
import type { ChannelDriver } from './driver.js';
import { emailDriver } from './email.js';
import { ntfyDriver } from './ntfy.js';
import { webhookDriver } from './webhook.js';

export const CHANNEL_DRIVERS: readonly ChannelDriver[] = [webhookDriver, ntfyDriver, emailDriver, commandDriver];

/** The driver of a channel type, or undefined for a type orchctl does not know. */
export function channelDriver(type: string): ChannelDriver | undefined {
  return CHANNEL_DRIVERS.find((d) => d.type === type);
}

/** Every channel type, in the order messages list them. */
export const CHANNEL_TYPES: readonly NotificationChannelSpec['type'][] = CHANNEL_DRIVERS.map((d) => d.type);
