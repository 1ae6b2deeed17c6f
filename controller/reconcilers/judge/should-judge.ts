/**
 * Which ended runs are judged automatically: those of a session whose SessionPolicy has a `judge`
 * section that is not `enabled: false`, and of those the runs the sampling strategy picks
 * (api/sampling.ts, seed 001 §7 — every run unless the policy has a `sampling` section).
 * Sessions without a judge section are judged only on demand (`orchctl judge`), so adding the
 * judge changes nothing for sessions that did not ask for it — the judge's escalation
 * stops restarts, see docs/judge.md.
 */
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import { sampleRun } from '../../api/sampling.js';
import { judgeConfigOf } from '../../llm/config.js';

export { judgeConfigOf };

/**
 * True when the session's ended runs get an Evaluation (trigger SessionEnded). With `run`, also
 * whether that run is sampled (api/sampling.ts: every run unless the policy has a
 * `sampling` section; `evaluationsSoFar` in the namespace counts towards its burn-in).
 */
export function shouldJudge(
  session: AgentSession,
  policy: SessionPolicy | undefined,
  run?: number,
  evaluationsSoFar = 0,
): boolean {
  if (session.metadata.deletionTimestamp) return false;
  const j = judgeConfigOf(policy);
  if (!j || j.enabled === false) return false;
  return run === undefined || sampleRun(session, run, policy, evaluationsSoFar).judge;
}
