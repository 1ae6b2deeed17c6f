/** The PHASE cell of a paused session in `get sessions` (docs/long-running.md). */
import { currentPause, pauseSummary } from '../../api/pause.js';
import type { AgentSession } from '../../api/session.js';

/**
 * "RateLimited (until 15:04)", "BudgetExceeded": the reason in place of Running, as kubectl shows a
 * pod's; and BudgetExceeded in place of Pending for a session its policy's budget keeps from starting.
 */
export function pausedCell(s: AgentSession): string | undefined {
  const st = s.status;
  const pause = currentPause(st);
  if (st?.phase === 'Running' && pause) return pauseSummary(pause);
  const admitted = st?.conditions?.find((c) => c.type === 'Admitted');
  if ((st?.phase ?? 'Pending') === 'Pending' && admitted?.status === 'False' && admitted.reason === 'BudgetExceeded')
    return 'BudgetExceeded';
  return undefined;
}
