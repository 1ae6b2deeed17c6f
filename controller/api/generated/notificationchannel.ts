// Generated from crds/notificationchannels.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface NotificationChannelSchema {
  /**
   * How messages reach the destination. Which fields apply depends on type; a field of another type
   * is refused at apply.
   */
  spec?: {
    /**
     * How messages are sent. webhook POSTs JSON (or a Slack body) with an Idempotency-Key header; ntfy
     * publishes to a topic with a priority from the tier; email sends over SMTP (STARTTLS when the
     * server offers it); command runs a program without a shell with the message on stdin.
     */
    type: 'webhook' | 'ntfy' | 'email' | 'command';
    /**
     * Time limit of one send, connection to answer, as a positive Go duration (default 10s, at most
     * 5m). A send that takes longer is abandoned and retried later.
     */
    timeout?: string;
    /**
     * At most count sends per period; a send over it waits for the next free slot (it is retried, not
     * dropped).
     */
    rateLimit?: {
      /**
       * Sends allowed per period.
       */
      count: number;
      /**
       * Length of the period, as a positive Go duration such as 1m (at most 24h).
       */
      per: string;
    };
    /**
     * Messages per day on this channel before tier 2 and 3 messages are deferred to the digest (never
     * dropped; tier 1 is always sent). Overrides the NotificationPolicy's dailyBudget for this
     * channel.
     */
    dailyBudget?: number;
    /**
     * webhook (required) - the URL to POST to; ntfy - the whole topic URL, instead of server and topic
     * (a topic name on a public server is a password). A secret, so only a reference - exactly one of
     * env or file. Credentials in the URL (https://user:pass@host/...) become a Basic Authorization
     * header.
     */
    urlFrom?: {
      /**
       * Name of a variable in the controller's own environment.
       */
      env?: string;
      /**
       * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
       */
      file?: string;
    };
    /**
     * webhook only - json (default) sends orchctl's message as JSON; slack sends a Slack
     * incoming-webhook body (text and blocks).
     */
    format?: 'json' | 'slack';
    /**
     * ntfy only - the server's base URL, such as https://ntfy.sh, together with topic (or use
     * urlFrom). No credentials in it - use tokenFrom.
     */
    server?: string;
    /**
     * ntfy only - the topic, with server. Letters, digits, - and _ (at most 64).
     */
    topic?: string;
    /**
     * ntfy only - an access token, sent as Authorization Bearer. A reference - exactly one of env or
     * file.
     */
    tokenFrom?: {
      /**
       * Name of a variable in the controller's own environment.
       */
      env?: string;
      /**
       * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
       */
      file?: string;
    };
    /**
     * ntfy only - tags (emoji short codes or words) on every message.
     *
     * @maxItems 16
     */
    tags?: string[];
    /**
     * email (required) - the SMTP server's host name or address.
     */
    host?: string;
    /**
     * email only - the SMTP port (default 465 with secure, else 587).
     */
    port?: number;
    /**
     * email only - TLS from the first byte (SMTPS, usually port 465). Otherwise the connection is
     * upgraded with STARTTLS when the server offers it.
     */
    secure?: boolean;
    /**
     * email only - refuse to send unless the server upgrades the connection with STARTTLS.
     */
    requireTLS?: boolean;
    /**
     * email only - TLS settings.
     */
    tls?: {
      /**
       * Absolute path of a PEM file with the CA that signed the server's certificate (a private CA).
       */
      caFile?: string;
    };
    /**
     * email (required) - the sender, an address or "Name <address>".
     */
    from?: string;
    /**
     * email (required) - the recipients' addresses.
     *
     * @minItems 1
     * @maxItems 64
     */
    to?: string[];
    /**
     * email only - the SMTP user name, with passwordFrom. A reference - exactly one of env or file.
     */
    usernameFrom?: {
      /**
       * Name of a variable in the controller's own environment.
       */
      env?: string;
      /**
       * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
       */
      file?: string;
    };
    /**
     * email only - the SMTP password, with usernameFrom. A reference - exactly one of env or file.
     */
    passwordFrom?: {
      /**
       * Name of a variable in the controller's own environment.
       */
      env?: string;
      /**
       * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
       */
      file?: string;
    };
    /**
     * command (required) - the program and its arguments, run without a shell, with the message on
     * stdin. {{title}}, {{body}}, {{tier}}, {{tierName}}, {{link}} and {{idempotencyKey}} inside an
     * argument become the message's values. Exit 75 means try again later; another failing exit
     * refuses the message.
     *
     * @minItems 1
     * @maxItems 256
     */
    command?: string[];
    /**
     * command only - environment variables set for the program on top of the controller's environment.
     * Secrets go in valueFrom, read at send time, never in value.
     *
     * @maxItems 256
     *
     * Items: One environment variable.
     */
    env?: {
      /**
       * Name of the variable; letters, digits and underscores, not starting with a digit.
       */
      name: string;
      /**
       * Value of the variable; the empty string when omitted. At most 32 KiB. Not for secrets - use
       * valueFrom.
       */
      value?: string;
      /**
       * Where the value comes from, read at send time. Exactly one of env or file; not together with
       * value.
       */
      valueFrom?: {
        /**
         * Name of a variable in the controller's own environment.
         */
        env?: string;
        /**
         * Absolute path of a file holding the value (one trailing newline is dropped; at most 32 KiB).
         */
        file?: string;
      };
    }[];
  };
  /**
   * The channel's day so far, written by the notifier.
   */
  status?: {
    /**
     * The budget's day (YYYY-MM-DD in the policy's time zone) the counts are for.
     */
    day?: string;
    sent?: number;
    budget?: number;
    deferred?: number;
    batched?: number;
    digest?: number;
    lastSentAt?: string;
    lastFailure?: {
      at?: string;
      code?: string;
      message?: string;
    };
    failing?: boolean;
  };
}
export type NotificationChannelSchemaSpec = NonNullable<NotificationChannelSchema['spec']>;
export type NotificationChannelSchemaStatus = NonNullable<NotificationChannelSchema['status']>;
