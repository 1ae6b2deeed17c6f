/**
 * What a pane dying wakes: the sessions whose observed facts changed (the observe tick's filter,
 * changes.ts, on a snapshot taken after the death), not every live session. Waking every live
 * session on each death was O(sessions × deaths): the soak's 200 sessions, ending every 20–60 s,
 * kept all of them queued — ~350 reconciles a second and most of a core, for the 5 that died.
 *
 * Deaths that arrive while a look is in flight are coalesced into one more look after it: a burst
 * of exits costs a snapshot or two, not one each.
 */
import type { EventSource } from '../../runtime/manager.js';

export function deathChanges(deaths: EventSource<void>, changed: () => Promise<string[]>): EventSource<string[]> {
  const handlers: ((keys: string[]) => void)[] = [];
  let looking = false;
  let again = false;
  const look = async () => {
    looking = true;
    try {
      do {
        again = false;
        const keys = await changed(); // never rejects: on a failed snapshot, every live session
        for (const h of handlers) h(keys);
      } while (again);
    } finally {
      looking = false;
    }
  };
  deaths.subscribe(() => {
    if (looking) again = true;
    else void look();
  });
  return { subscribe: (h) => void handlers.push(h) };
}
