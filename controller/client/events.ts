/**
 * Event recorder: Kubernetes-shaped Event objects with client-side aggregation. An identical
 * event (same object, type, reason and message) bumps `count` and `lastTimestamp` of the
 * existing one instead of creating another; the deterministic name makes that work across
 * processes and controller restarts. Recording never throws: events are best-effort, and
 * everything actionable is also written to status.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import { isApiError } from '../api/errors.js';
import type { EventObject, EventType } from '../api/event.js';
import { API_VERSION, DEFAULT_NAMESPACE, type Resource } from '../api/types.js';
import type { Store } from '../store/store.js';

// The Event kind's shape is in api/event.ts.
export type { EventObject, EventType };

const MAX_MESSAGE = 1024;

export class EventRecorder {
  constructor(
    private readonly store: Store,
    private readonly component = 'orchctl-controller',
    private readonly host = os.hostname(),
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async record(obj: Resource, type: EventType, reason: string, message: string): Promise<void> {
    try {
      await this.recordOrThrow(obj, type, reason, message);
    } catch (e) {
      this.log(`could not record event ${reason} for ${obj.kind}/${obj.metadata.name}: ${(e as Error).message}`);
    }
  }

  private async recordOrThrow(obj: Resource, type: EventType, reason: string, rawMessage: string): Promise<void> {
    const message = rawMessage.length > MAX_MESSAGE ? `${rawMessage.slice(0, MAX_MESSAGE - 1)}…` : rawMessage;
    const namespace = obj.metadata.namespace || DEFAULT_NAMESPACE;
    const hash = createHash('sha1')
      .update([obj.kind, obj.metadata.uid ?? obj.metadata.name, type, reason, message, this.component].join('\0'))
      .digest('hex')
      .slice(0, 12);
    const name = `${obj.metadata.name}.${hash}`;
    const now = new Date().toISOString();
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = (await this.store.get({ kind: 'Event', namespace, name })) as EventObject | undefined;
      try {
        if (existing) {
          await this.store.update({ ...existing, count: (existing.count ?? 1) + 1, lastTimestamp: now });
        } else {
          const ev = newEvent(obj, { name, type, reason, message, now }, this.component, this.host);
          await this.store.create(ev);
        }
        return;
      } catch (e) {
        if (!isApiError(e, 'Conflict') && !isApiError(e, 'AlreadyExists') && !isApiError(e, 'NotFound')) throw e;
      }
    }
  }
}

/**
 * An Event object about `obj`, for a writer that puts it in a transaction of its own (so that it is
 * recorded exactly when the change it tells of is, never lost and never twice).
 */
export function newEvent(
  obj: Resource,
  e: { name: string; type: EventType; reason: string; message: string; now: string },
  component: string,
  host = '',
): EventObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { name: e.name, namespace: obj.metadata.namespace || DEFAULT_NAMESPACE },
    involvedObject: {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata.name,
      ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
    },
    reason: e.reason,
    message: e.message.length > MAX_MESSAGE ? `${e.message.slice(0, MAX_MESSAGE - 1)}…` : e.message,
    type: e.type,
    count: 1,
    firstTimestamp: e.now,
    lastTimestamp: e.now,
    source: { component, host },
    reportingController: component,
  };
}

/** Events about one object, oldest first (for describe). */
export async function eventsFor(store: Store, obj: Resource): Promise<EventObject[]> {
  const namespace = obj.metadata.namespace || DEFAULT_NAMESPACE;
  const { items } = await store.list('Event', { namespace });
  return (items as EventObject[])
    .filter(
      (e) =>
        e.involvedObject?.kind === obj.kind &&
        e.involvedObject?.name === obj.metadata.name &&
        (!obj.metadata.uid || !e.involvedObject.uid || e.involvedObject.uid === obj.metadata.uid),
    )
    .sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
}
