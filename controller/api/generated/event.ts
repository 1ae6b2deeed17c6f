// Generated from crds/events.yaml by `npm run generate:types`
// (scripts/generate-types.mjs, json-schema-to-typescript). Do not edit: change the CRD and regenerate.

export interface EventSchema {
  /**
   * The object this event is about.
   */
  involvedObject: {
    /**
     * API version of the object, e.g. orchctl.io/v1alpha1.
     */
    apiVersion?: string;
    /**
     * Kind of the object, e.g. AgentSession.
     */
    kind: string;
    /**
     * Name of the object.
     */
    name: string;
    /**
     * Namespace of the object; empty for cluster-scoped objects such as Nodes.
     */
    namespace?: string;
    /**
     * UID of the object, distinguishing it from earlier objects with the same name.
     */
    uid?: string;
    /**
     * Part of the object the event is about, e.g. spec.prompt; usually empty.
     */
    fieldPath?: string;
  };
  /**
   * Short machine-readable reason for the event, one CamelCase word such as Started or BackOff.
   */
  reason?: string;
  /**
   * Human-readable description of what happened.
   */
  message?: string;
  /**
   * Normal for ordinary progress, Warning for something that may need attention.
   */
  type?: 'Normal' | 'Warning';
  /**
   * How many times this event has occurred; repeats update one Event instead of creating new ones.
   */
  count?: number;
  /**
   * When the event first occurred.
   */
  firstTimestamp?: string;
  /**
   * When the event most recently occurred.
   */
  lastTimestamp?: string;
  /**
   * The component that reported the event.
   */
  source?: {
    /**
     * Name of the reporting component, e.g. session-controller.
     */
    component?: string;
    /**
     * Host name the reporting component runs on.
     */
    host?: string;
  };
  /**
   * Name of the controller that emitted the event, e.g. orchctl.io/session-controller.
   */
  reportingController?: string;
  /**
   * What action was taken or failed, e.g. Start, Stop or Restart.
   */
  action?: string;
}
