// Generated from crds/silences.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface SilenceSchema {
  /**
   * What is silenced and for how long.
   */
  spec?: {
    /**
     * Alertmanager matchers that must all match - name op value, op one of = != =~ !~ (regular
     * expressions are anchored at both ends), e.g. involvedObject.name="fix-login" or
     * reason=~"Stalled|BackOff". Names as in a NotificationPolicy's routes.
     *
     * @minItems 1
     * @maxItems 32
     */
    matchers: string[];
    /**
     * When the silence starts, RFC 3339 such as 2025-01-31T18:00:00Z.
     */
    startsAt: string;
    /**
     * When the silence ends, RFC 3339; after startsAt and at most 366 days after it.
     */
    endsAt: string;
    /**
     * Who created the silence.
     */
    createdBy?: string;
    /**
     * Why the silence was created.
     */
    comment?: string;
  };
  /**
   * Written by the notifier.
   */
  status?: {
    /**
     * pending before startsAt, active until endsAt, then expired.
     */
    state?: 'pending' | 'active' | 'expired';
  };
}
export type SilenceSchemaSpec = NonNullable<SilenceSchema['spec']>;
export type SilenceSchemaStatus = NonNullable<SilenceSchema['status']>;
