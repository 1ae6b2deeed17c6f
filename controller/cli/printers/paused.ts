/** The PHASE cell of a paused session in `get sessions` (docs/long-running.md). */
import { currentPause, pauseSummary } from '../../api/pause.js';
import type { AgentSession } from '../../api/session.js';

/** "RateLimited (until 15:04)", "BudgetExceeded": the reason in place of Running, as kubectl shows a pod's. */
export function pausedCell(s: AgentSession): string | undefined {
  const st = s.status;
  const pause = currentPause(st);
  return st?.phase === 'Running' && pause ? pauseSummary(pause) : undefined;
}
