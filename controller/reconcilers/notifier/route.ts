/**
 * Routing an Event through a NotificationPolicy's route tree, as Alertmanager does: from the root,
 * the children are tried in order and the first that matches takes the Event, unless it says
 * `continue`, when the next siblings are tried too; a route none of whose children match takes
 * the Event itself. A child inherits every field it leaves unset. Pure: no clock, no I/O.
 */
import { parseDuration } from '../../api/duration.js';
import type { EventObject } from '../../api/event.js';
import {
  DEFAULT_DURATIONS,
  DEFAULT_GROUP_BY,
  DEFAULT_TIER,
  type NotificationFields,
  type NotificationPolicySpec,
  type NotificationRoute,
  type NotificationTier,
  type RoutedNotification,
} from '../../api/notification.js';
import { compileAll, matchesAll, notificationFields } from './matchers.js';

type Inherited = {
  tier: NotificationTier;
  channels: string[];
  groupBy: string[];
  groupWait: string;
  groupInterval: string;
  repeatInterval: string;
};

const ROOT: Inherited = {
  tier: DEFAULT_TIER,
  channels: [],
  groupBy: DEFAULT_GROUP_BY,
  groupWait: DEFAULT_DURATIONS.groupWait,
  groupInterval: DEFAULT_DURATIONS.groupInterval,
  repeatInterval: DEFAULT_DURATIONS.repeatInterval,
};

function inherit(parent: Inherited, r: NotificationRoute): Inherited {
  return {
    tier: r.tier ?? parent.tier,
    channels: r.channels ?? parent.channels,
    groupBy: r.groupBy ?? parent.groupBy,
    groupWait: r.groupWait ?? parent.groupWait,
    groupInterval: r.groupInterval ?? parent.groupInterval,
    repeatInterval: r.repeatInterval ?? parent.repeatInterval,
  };
}

/** `route:{involvedObject.kind="AgentSession",…}`: the route and its groupBy values. */
export const groupKey = (route: string, groupBy: string[], fields: NotificationFields): string =>
  `${route}:{${groupBy.map((f) => `${f}=${JSON.stringify(fields[f] ?? '')}`).join(',')}}`;

function resolved(path: string, s: Inherited, fields: NotificationFields): RoutedNotification {
  return {
    route: path,
    tier: s.tier,
    channels: s.channels,
    groupKey: groupKey(path, s.groupBy, fields),
    groupWaitMs: parseDuration(s.groupWait),
    groupIntervalMs: parseDuration(s.groupInterval),
    repeatIntervalMs: parseDuration(s.repeatInterval),
  };
}

function walk(r: NotificationRoute, path: string, parent: Inherited, fields: NotificationFields): RoutedNotification[] {
  if (!matchesAll(compileAll(r.matchers), fields)) return [];
  const here = inherit(parent, r);
  const out: RoutedNotification[] = [];
  for (const [i, child] of (r.routes ?? []).entries()) {
    const matched = walk(child, `${path}.routes[${i}]`, here, fields);
    out.push(...matched);
    if (matched.length && !child.continue) break;
  }
  return out.length ? out : [resolved(path, here, fields)];
}

/** The routes that take the Event, in tree order, each with its tier, channels and group. */
export function route(
  policy: NotificationPolicySpec,
  event: EventObject,
  labels?: Record<string, string>,
): RoutedNotification[] {
  return routeFields(policy, notificationFields(event, labels));
}

/** route() on fields already built (the decision builds them once for inhibition and silences too). */
export function routeFields(policy: NotificationPolicySpec, fields: NotificationFields): RoutedNotification[] {
  // The root takes every Event: its matchers, which validation refuses, are not consulted.
  return walk({ ...policy.route, matchers: undefined }, 'route', ROOT, fields);
}
