/** The state each Silence shows, and when the router must look again, on a fake clock. */
import { describe, expect, it } from 'vitest';
import type { Silence } from '../../../../controller/api/notification.js';
import { silenceUpdates } from '../../../../controller/reconcilers/notifier/silences.js';
import { at } from './fixtures.js';

const silence = (name: string, startsAt: string, endsAt: string, state?: string): Silence =>
  ({
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'Silence',
    metadata: { name, namespace: 'default' },
    spec: { matchers: ['reason="BackOff"'], startsAt, endsAt },
    ...(state ? { status: { state } } : {}),
  }) as Silence;

describe('silence states', () => {
  it('pending before startsAt, active until endsAt, then expired; wakes at the next edge', () => {
    const s = [
      silence('later', '2026-06-01T12:00:00Z', '2026-06-01T14:00:00Z'),
      silence('now', '2026-06-01T09:00:00Z', '2026-06-01T11:00:00Z', 'active'),
      silence('past', '2026-06-01T07:00:00Z', '2026-06-01T08:00:00Z', 'active'),
    ];
    const r = silenceUpdates(s, at('2026-06-01T10:00:00Z'));
    expect(r.changed.map(([x, state]) => [x.metadata.name, state])).toEqual([
      ['later', 'pending'],
      ['past', 'expired'],
    ]);
    expect(r.next).toBe(at('2026-06-01T11:00:00Z'));
    const after = silenceUpdates(s, at('2026-06-01T11:00:00Z'));
    expect(after.changed.map(([x, state]) => [x.metadata.name, state])).toContainEqual(['now', 'expired']);
    expect(after.next).toBe(at('2026-06-01T12:00:00Z'));
  });

  it('nothing to change and nothing ahead: no wake-up', () => {
    const r = silenceUpdates(
      [silence('old', '2026-06-01T07:00:00Z', '2026-06-01T08:00:00Z', 'expired')],
      at('2026-06-02T00:00:00Z'),
    );
    expect(r).toEqual({ changed: [] });
  });
});
