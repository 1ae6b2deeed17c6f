/**
 * The freeze pass, pure (`orchctl freeze` / `thaw`, api/freeze.ts). While a session or its project
 * carries the freeze mark, its reconciler does nothing but hold it: a live run's process group is
 * stopped (SIGSTOP, sent again on every pass, so a stray SIGCONT does not let it go), nothing is
 * launched, sent, restarted, timed out or judged stalled, and status.frozen says so. When the mark
 * is gone the run is continued (SIGCONT), its time box moves on by the time it was frozen, its
 * progress clock starts again from the thaw (so the stall watchdog does not count the frozen time),
 * and the normal pass takes over. The state is the mark and status.frozen, both in the store: a
 * controller restarted meanwhile finds both, and SIGSTOP outlives it anyway.
 */
import { setCondition } from '../../api/conditions.js';
import { formatDuration } from '../../api/duration.js';
import type { FreezeStatus } from '../../api/freeze.js';
import type { AgentSessionStatus } from '../../api/kinds.js';
import { FreezeReason } from '../../api/event-reasons.js';
import type { EventType } from '../../client/events.js';

export interface FreezeInput {
  status: AgentSessionStatus;
  /** The freeze mark in force (the session's, else its project's), undefined when there is none. */
  mark?: string;
  /** The current run's pane process, when it is alive. */
  pane?: { pid: number };
  now: number;
}

export interface FreezeOutput {
  status: AgentSessionStatus;
  events: { type: EventType; reason: string; message: string }[];
  /** Signal the pane's process group. */
  signal?: 'SIGSTOP' | 'SIGCONT';
  /** True: the pass ends here (frozen); false: thawed (or never frozen), the normal pass goes on. */
  hold: boolean;
}

const iso = (t: number) => new Date(t).toISOString();

export function planFreeze(i: FreezeInput): FreezeOutput {
  const cur = i.status.frozen;
  const s: AgentSessionStatus = structuredClone(i.status);
  const events: FreezeOutput['events'] = [];
  const run = s.run ?? 0;
  const live = s.phase === 'Running' && !!i.pane;
  if (i.mark) {
    if (!cur) {
      const frozen: FreezeStatus = { since: iso(i.now), run, stopped: live, message: i.mark.slice(0, 1024) };
      s.frozen = frozen;
      s.conditions ??= [];
      setCondition(
        s.conditions,
        { type: 'Frozen', status: 'True', reason: 'Frozen', message: frozen.message },
        iso(i.now),
      );
      events.push({
        type: 'Warning',
        reason: FreezeReason.Frozen,
        message: live
          ? `run ${run} frozen (its processes stopped): ${frozen.message}`
          : `frozen before a run could start: ${frozen.message}`,
      });
    } else if (live && !cur.stopped) s.frozen = { ...cur, stopped: true };
    return { status: s, events, hold: true, ...(live ? { signal: 'SIGSTOP' as const } : {}) };
  }
  if (!cur) return { status: s, events, hold: false };
  const held = Math.max(0, i.now - Date.parse(cur.since));
  delete s.frozen;
  s.conditions ??= [];
  setCondition(s.conditions, { type: 'Frozen', status: 'False', reason: 'Thawed', message: '' }, iso(i.now));
  // The frozen time is not the run's: its time box and its progress clock go on from the thaw.
  if (s.deadlineTime && cur.run === run) s.deadlineTime = iso(Date.parse(s.deadlineTime) + held);
  if (s.agent && s.agent.run === run) s.agent = { ...s.agent, lastEventAt: iso(i.now) };
  events.push({
    type: 'Normal',
    reason: FreezeReason.Thawed,
    message: `thawed after ${formatDuration(held)}${cur.stopped && live ? `: run ${run} continues` : ''}`,
  });
  return { status: s, events, hold: false, ...(cur.stopped && live ? { signal: 'SIGCONT' as const } : {}) };
}
