/**
 * The Event kind (crds/events.yaml is the schema): a Kubernetes-shaped record of something that
 * happened to an object. Events have no spec or status: their fields are top-level.
 */
import type { Resource } from './types.js';

export type EventType = 'Normal' | 'Warning';

/** The Event's own fields (api/schema-checks.ts holds them to crds/events.yaml). */
export type EventFields = {
  involvedObject: {
    apiVersion: string;
    kind: string;
    name: string;
    namespace?: string;
    uid?: string;
    fieldPath?: string;
  };
  reason: string;
  message: string;
  type: EventType;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host: string };
  reportingController: string;
  action?: string;
};

export type EventObject = Resource & EventFields;
