/**
 * The state each Silence should show (pending, active, expired) at `now`, and when the next one
 * changes: the router writes the states and wakes at that time, so `get silences` is right
 * without anyone touching the objects. Pure.
 */
import { type Silence, type SilenceState, silenceState } from '../../api/notification.js';

export function silenceUpdates(
  silences: Silence[],
  now: number,
): { changed: [Silence, SilenceState][]; next?: number } {
  const changed: [Silence, SilenceState][] = [];
  let next: number | undefined;
  for (const s of silences) {
    if (!s.spec) continue;
    const state = silenceState(s.spec, now);
    if (s.status?.state !== state) changed.push([s, state]);
    for (const t of [Date.parse(s.spec.startsAt), Date.parse(s.spec.endsAt)])
      if (t > now) next = Math.min(next ?? t, t);
  }
  return { changed, ...(next !== undefined ? { next } : {}) };
}
