/**
 * Event recorder: Kubernetes-shaped Event objects with client-side aggregation. An identical
 * event (same object, type, reason and message) bumps `count` and `lastTimestamp` of the
 * existing one instead of creating another; the deterministic name makes that work across
 * processes and controller restarts.
 *
 * An Event that tells of a status transition is written in the same store transaction as the
 * transition ({@link EventRecorder.ops}, used by client/status.ts): it exists exactly when the
 * transition is in the store — a controller killed before the write finds the transition still to
 * make and tells it then, once; killed after, finds it made and tells nothing. `record` is for the
 * rest (one-off warnings, outcomes of work done beside a reconcile): it never throws, since those
 * are best-effort and everything actionable is also written to status.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import { isApiError } from '../api/errors.js';
import type { EventObject, EventType } from '../api/event.js';
import { API_VERSION, DEFAULT_NAMESPACE, type Resource } from '../api/types.js';
import { retryOnConflict } from '../store/retry.js';
import { isFenced, type Store, type WriteOp } from '../store/store.js';

// The Event kind's shape is in api/event.ts.
export type { EventObject, EventType };

/** An Event as a plan says it: what is recorded about the object a write is for. */
export interface EventNote {
  type: EventType;
  reason: string;
  message: string;
}

const MAX_MESSAGE = 1024;

const clipMessage = (m: string) => (m.length > MAX_MESSAGE ? `${m.slice(0, MAX_MESSAGE - 1)}…` : m);

export class EventRecorder {
  constructor(
    private readonly store: Store,
    private readonly component = 'orchctl-controller',
    private readonly host = os.hostname(),
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async record(obj: Resource, type: EventType, reason: string, message: string): Promise<void> {
    try {
      await this.recordOrThrow(obj, { type, reason, message });
    } catch (e) {
      this.log(`could not record event ${reason} for ${obj.kind}/${obj.metadata.name}: ${(e as Error).message}`);
    }
  }

  private async recordOrThrow(obj: Resource, note: EventNote): Promise<void> {
    // Another writer recorded the same Event meanwhile: count again; after three races, leave it.
    await retryOnConflict(async () => void (await this.store.txn(await this.ops(obj, [note]))), {
      attempts: 3,
      retryOn: isEventRace,
    }).catch((e: unknown) => {
      if (!isEventRace(e)) throw e;
    });
  }

  /**
   * The writes that record `notes` about `obj`, for the caller to put in the transaction of the
   * change they tell of: a create for an Event not recorded yet, else an update of the stored one
   * (count + 1, compare-and-swap on its resourceVersion, so two writers never lose a count). The
   * transaction fails with Conflict or AlreadyExists when another writer recorded the same Event
   * meanwhile ({@link isEventRace}); the caller reads again and retries.
   */
  async ops(obj: Resource, notes: readonly EventNote[]): Promise<WriteOp[]> {
    const namespace = obj.metadata.namespace || DEFAULT_NAMESPACE;
    const start = Date.now();
    const out = new Map<string, { op: 'create' | 'update'; object: EventObject }>();
    for (const [i, n] of notes.entries()) {
      // A millisecond apart: one transaction's Events keep the order they were told in when sorted
      // by time (describe, get events), e.g. a phase's end before the start of the next.
      const now = new Date(start + i).toISOString();
      const message = clipMessage(n.message);
      const name = this.nameOf(obj, n.type, n.reason, message);
      const seen = out.get(name) ?? (await this.stored(namespace, name));
      if (seen) {
        const ev = seen.object;
        out.set(name, { op: seen.op, object: { ...ev, count: (ev.count ?? 1) + 1, lastTimestamp: now } });
      } else {
        const ev = newEvent(obj, { name, type: n.type, reason: n.reason, message, now }, this.component, this.host);
        out.set(name, { op: 'create', object: ev });
      }
    }
    return [...out.values()];
  }

  private async stored(namespace: string, name: string): Promise<{ op: 'update'; object: EventObject } | undefined> {
    const ev = await this.store.get({ kind: 'Event', namespace, name });
    return ev && { op: 'update', object: ev };
  }

  private nameOf(obj: Resource, type: EventType, reason: string, message: string): string {
    const hash = createHash('sha1')
      .update([obj.kind, obj.metadata.uid ?? obj.metadata.name, type, reason, message, this.component].join('\0'))
      .digest('hex')
      .slice(0, 12);
    return `${obj.metadata.name}.${hash}`;
  }
}

/** A write of Events that lost a race with another writer of the same Event: read again and retry. */
export const isEventRace = (e: unknown): boolean =>
  (isApiError(e, 'Conflict') && !isFenced(e)) || isApiError(e, 'AlreadyExists') || isApiError(e, 'NotFound');

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
    message: clipMessage(e.message),
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
  return items
    .filter(
      (e) =>
        e.involvedObject?.kind === obj.kind &&
        e.involvedObject?.name === obj.metadata.name &&
        (!obj.metadata.uid || !e.involvedObject.uid || e.involvedObject.uid === obj.metadata.uid),
    )
    .sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
}
