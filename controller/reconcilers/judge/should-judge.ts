/**
 * Which ended runs are judged automatically. Until the assessment issue's sampling strategy
 * (seed 001 §7: burn-in, breaker-triggered, feedback, long sessions, base rate) replaces this
 * module, the rule is: every ended run of a session whose SessionPolicy has a `judge` section that
 * is not `enabled: false`. Sessions without one are judged only on demand (`orchctl judge`), so
 * adding the judge changes nothing for sessions that did not ask for it — the judge's escalation
 * stops restarts, see docs/judge.md.
 */
import type { AgentSession, SessionPolicy } from '../../api/kinds.js';
import type { JudgeConfig } from '../../llm/config.js';

export interface JudgePolicyView {
  judge?: JudgeConfig;
}

export function judgeConfigOf(policy: SessionPolicy | undefined): JudgeConfig | undefined {
  const j = (policy?.spec as JudgePolicyView | undefined)?.judge;
  return j && typeof j === 'object' ? j : undefined;
}

/** True when the session's ended runs get an Evaluation (trigger SessionEnded). */
export function shouldJudge(session: AgentSession, policy: SessionPolicy | undefined): boolean {
  if (session.metadata.deletionTimestamp) return false;
  const j = judgeConfigOf(policy);
  return !!j && j.enabled !== false;
}
