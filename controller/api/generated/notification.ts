// Generated from crds/notifications.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface NotificationSchema {
  /**
   * The message, fixed when it was recorded so that a re-send is the same message.
   */
  spec?: {
    /**
     * The NotificationPolicy that routed it.
     */
    policy: string;
    /**
     * The NotificationChannel it goes to.
     */
    channel: string;
    /**
     * 1 urgent, 2 action, 3 summary, 4 debug.
     */
    tier: number;
    /**
     * One Event's message, a channel's tier-3 batch, or the digest.
     */
    source: 'event' | 'batch' | 'digest';
    /**
     * The route's path in the policy, e.g. route.routes[0].
     */
    route?: string;
    /**
     * The group it is paced with.
     */
    groupKey?: string;
    /**
     * The Event, namespace/name.
     */
    eventKey?: string;
    /**
     * The Event behind it, as routed.
     */
    event?: {
      [k: string]: unknown;
    };
    title: string;
    body: string;
    /**
     * The Notifications a batch or digest carries, or that went out with this message.
     *
     * @maxItems 10000
     */
    items?: string[];
  };
  /**
   * Where the message is on its way.
   */
  status?: {
    phase?: 'Pending' | 'Sent' | 'Failed' | 'Deferred' | 'Batched' | 'Flushed' | 'Digest' | 'Digested' | 'Suppressed';
    reason?: string;
    message?: string;
    until?: string;
    attempts?: number;
    lastAttemptAt?: string;
    nextAttemptAt?: string;
    code?: string;
    httpStatus?: number;
    sentAt?: string;
    sentWith?: string;
  };
}
export type NotificationSchemaSpec = NonNullable<NotificationSchema['spec']>;
export type NotificationSchemaStatus = NonNullable<NotificationSchema['status']>;
