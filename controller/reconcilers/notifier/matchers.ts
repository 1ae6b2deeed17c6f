/**
 * What matchers see of an Event: its fields and the involved object's labels as one flat map
 * (api/notification.ts names them), and whether a list of matchers holds for it.
 */
import type { EventObject } from '../../api/event.js';
import {
  compileMatcher,
  LABEL_FIELD_PREFIX,
  type CompiledMatcher,
  type NotificationFields,
} from '../../api/notification.js';

/** The Event's fields and `labels.<key>` of the involved object's labels. */
export function notificationFields(event: EventObject, labels?: Record<string, string>): NotificationFields {
  const o = event.involvedObject;
  const fields: NotificationFields = {
    type: event.type,
    reason: event.reason,
    'involvedObject.kind': o.kind,
    'involvedObject.namespace': o.namespace ?? event.metadata.namespace ?? '',
    'involvedObject.name': o.name,
  };
  for (const [k, v] of Object.entries(labels ?? {})) fields[`${LABEL_FIELD_PREFIX}${k}`] = v;
  return fields;
}

/**
 * What makes two notifications "the same" for repeat suppression: the Event object. The recorder
 * names an Event after its object, type, reason and message, so a `count` bump keeps the key.
 */
export const eventKey = (event: EventObject): string => `${event.metadata.namespace ?? ''}/${event.metadata.name}`;

/** Compiles a list of matchers (throws on an invalid one: policies are validated at apply). */
export const compileAll = (texts: string[] | undefined): CompiledMatcher[] => (texts ?? []).map(compileMatcher);

/** All hold; a field the Event lacks is the empty string, as in Alertmanager. */
export const matchesAll = (matchers: CompiledMatcher[], fields: NotificationFields): boolean =>
  matchers.every((m) => m.test(fields[m.name] ?? ''));
