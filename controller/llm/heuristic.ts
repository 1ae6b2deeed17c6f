/**
 * The offline judge (the default backend): deterministic, no network, and it looks only at
 * objective evidence — how the run ended (phase, exit code), commits and lines changed since
 * headBefore, the last test run, tool-failure loops, circuit-breaker openings and the status the
 * agent wrote to result.json. It never reads the prose (output tail, assistant message), which
 * an agent could word to flatter itself. Rules, in the order they apply:
 *
 *   ended         commits                          score
 *   Succeeded     yes, tests failing               3
 *                 yes, substantial, tests passing,
 *                   result.json done               5
 *                 yes, otherwise                   4
 *                 none, no git repo                4 if result done, 2 if blocked/failed, else 3
 *                 none                             3 if result done and tests pass, else 2
 *   Failed        yes                              3 (2 with failing tests or a failure loop)
 *                 none                             1
 *   TimedOut      yes                              4 if substantial and tests pass, 2 with
 *                                                  failing tests or a loop, else 3
 *                 none                             1
 *   Killed        yes                              3 (2 with a loop)      outcome abandoned
 *                 none                             1                      outcome abandoned
 *   still running yes / none                       3 / 2                  outcome partial
 *
 * "substantial" = at least 2 commits or 30 changed lines; a "loop" = 3+ consecutive tool
 * failures at the end, one command failing 3+ times, or a circuit-breaker opening. A loop or a
 * breaker opening also takes 1 off a Succeeded run with commits. Outcome: Killed → abandoned;
 * ≥ 4 → success if it Succeeded (else partial); 3 → partial; ≤ 2 → failure. Recommendation:
 * success → complete; partial/abandoned with progress → continue; failure with a loop, breaker or
 * a blocked result → escalate, else retry. The agreement with hand labels is in docs/judge.md.
 */
import { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';
import type { JudgeEvidence, Outcome, Recommendation, Verdict } from './verdict.js';

export type HeuristicHandler = (req: LlmRequest) => unknown;

const DONE = /^(done|complete|completed|success|succeeded|finished|ok)$/i;
const BLOCKED = /^(blocked|failed|failure|error|stuck|needs[-_ ]?help|gave[-_ ]?up)$/i;

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;

function minutes(s: number | undefined): string {
  if (s === undefined) return '';
  return s >= 120 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`;
}

/** The verdict for one run's evidence (pure). */
export function heuristicVerdict(e: JudgeEvidence): Verdict {
  const commits = e.git?.commits ?? 0;
  const lines = (e.git?.insertions ?? 0) + (e.git?.deletions ?? 0);
  const substantial = commits >= 2 || lines >= 30;
  const tests = e.tests?.signal ?? 'none';
  const resultStatus = e.result?.status ?? '';
  const done = DONE.test(resultStatus);
  const blocked = BLOCKED.test(resultStatus);
  const breakerOpened = (e.breaker?.openings ?? 0) > 0 || /^open$/i.test(e.breaker?.state ?? '');
  const looping =
    (e.tools?.consecutiveFailures ?? 0) >= 3 || (e.tools?.repeatedFailure?.count ?? 0) >= 3 || breakerOpened;
  const phase = e.phase;
  const accomplishments: string[] = [];
  const failures: string[] = [];

  if (commits > 0) {
    const last = e.git?.lastCommitSubject ? `; last: "${e.git.lastCommitSubject.slice(0, 120)}"` : '';
    const files = plural(e.git?.filesChanged ?? 0, 'file');
    accomplishments.push(
      `${plural(commits, 'commit')} (+${e.git?.insertions ?? 0}/-${e.git?.deletions ?? 0} lines in ${files})${last}`,
    );
  } else if (e.git) failures.push('no commits');
  else failures.push('no git repository: progress could not be measured');
  if (tests === 'passing')
    accomplishments.push(`tests passing${e.tests?.passed !== undefined ? ` (${e.tests.passed} passed)` : ''}`);
  if (tests === 'failing') {
    const passed = e.tests?.passed !== undefined ? `, ${e.tests.passed} passed` : '';
    failures.push(`tests failing${e.tests?.failed !== undefined ? ` (${e.tests.failed} failed${passed})` : ''}`);
  }
  if (done) accomplishments.push(`result.json reports status "${resultStatus}"`);
  if (blocked) failures.push(`result.json reports status "${resultStatus}"`);
  const repeated = e.tools?.repeatedFailure;
  if (repeated && repeated.count >= 3)
    failures.push(`the same command failed ${repeated.count} times: ${repeated.command.slice(0, 100)}`);
  else if ((e.tools?.consecutiveFailures ?? 0) >= 3)
    failures.push(`${e.tools!.consecutiveFailures} tool calls failed in a row at the end`);
  if (e.tools && e.tools.failures > 0 && e.tools.calls > 0 && !looping)
    failures.push(`${e.tools.failures} of ${plural(e.tools.calls, 'tool call')} failed`);
  if (breakerOpened) {
    const times = e.breaker?.openings ? ` ${plural(e.breaker.openings, 'time')}` : '';
    failures.push(`circuit breaker opened${times}${e.breaker?.reason ? ` (${e.breaker.reason})` : ''}`);
  }

  let score: number;
  let outcome: Outcome;
  switch (phase) {
    case 'Succeeded':
      if (commits > 0) {
        score = tests === 'failing' ? 3 : substantial && tests === 'passing' && done ? 5 : 4;
        if (looping) score -= 1;
      } else if (!e.git) score = done ? 4 : blocked ? 2 : 3;
      else score = done && tests === 'passing' ? 3 : 2;
      break;
    case 'Failed':
      failures.push(`exited with code ${e.exitCode ?? 'unknown'}`);
      score = commits > 0 ? (tests === 'failing' || looping ? 2 : 3) : 1;
      break;
    case 'TimedOut':
      failures.push(
        `reached its time box${e.maxDurationSeconds ? ` of ${minutes(e.maxDurationSeconds)}` : ''} before finishing`,
      );
      score = commits > 0 ? (tests === 'failing' || looping ? 2 : substantial && tests === 'passing' ? 4 : 3) : 1;
      break;
    case 'Killed':
      failures.push(
        e.reason === 'Stopped'
          ? 'stopped on request before it finished'
          : 'the session ended without an exit status (killed or lost)',
      );
      score = commits > 0 ? (looping ? 2 : 3) : 1;
      break;
    default: // a run still going (on-demand judgement)
      score = commits > 0 ? 3 : 2;
  }
  score = Math.max(1, Math.min(5, score));

  if (phase === 'Killed') outcome = 'abandoned';
  else if (!['Succeeded', 'Failed', 'TimedOut'].includes(phase)) outcome = 'partial';
  else if (score >= 4) outcome = phase === 'Succeeded' ? 'success' : 'partial';
  else if (score === 3) outcome = 'partial';
  else outcome = 'failure';

  let recommendation: Recommendation;
  if (outcome === 'success') recommendation = 'complete';
  else if ((outcome === 'partial' || outcome === 'abandoned') && score >= 3) recommendation = 'continue';
  else if (looping || blocked) recommendation = 'escalate';
  else recommendation = outcome === 'partial' ? 'continue' : 'retry';

  // More independent signals, more confidence; never certain.
  let confidence = 0.55;
  if (e.git) confidence += 0.1;
  if (tests !== 'none') confidence += 0.1;
  if (done || blocked) confidence += 0.05;
  if (e.tools) confidence += 0.05;
  if (!e.git && !e.result) confidence -= 0.2;
  confidence = Math.round(Math.max(0.3, Math.min(0.85, confidence)) * 100) / 100;

  const how =
    phase === 'Succeeded'
      ? 'exited 0'
      : phase === 'Failed'
        ? `failed with exit code ${e.exitCode ?? 'unknown'}`
        : phase === 'TimedOut'
          ? 'timed out'
          : phase === 'Killed'
            ? `was stopped (${e.reason ?? 'killed'})`
            : `is still ${phase.toLowerCase()}`;
  const progress = e.git
    ? commits
      ? `made ${plural(commits, 'commit')} (${lines} lines changed)`
      : 'made no commits'
    : 'has no git repository to measure';
  const testWord = tests === 'none' ? 'no test result was seen' : `tests were ${tests}`;
  const after = minutes(e.durationSeconds) || 'an unknown time';
  const reasoning =
    `Heuristic verdict from objective evidence only: run ${e.run} ${how} after ${after}, ${progress}, ${testWord}` +
    `${resultStatus ? `, result.json status "${resultStatus}"` : ''}` +
    `${looping ? ', and it was stuck in a failure loop' : ''}. Score ${score}/5 by the rules in docs/judge.md.`;
  return {
    score,
    recommendation,
    outcome,
    confidence,
    accomplishments: accomplishments.slice(0, 10),
    failures: failures.slice(0, 10),
    reasoning,
  };
}

export class HeuristicBackend implements LlmBackend {
  readonly name = 'heuristic';
  readonly model = 'rules-v1';
  private readonly handlers: Map<string, HeuristicHandler>;

  /** `handlers` adds offline answers for other purposes (e.g. checkpoint summaries); judge is built in. */
  constructor(handlers: Record<string, HeuristicHandler> = {}) {
    this.handlers = new Map(
      Object.entries({ judge: (req: LlmRequest) => heuristicVerdict(req.evidence as JudgeEvidence), ...handlers }),
    );
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    const h = this.handlers.get(req.purpose);
    if (!h) throw new LlmError('config', `the heuristic backend has no offline answer for "${req.purpose}"`);
    if (req.evidence === undefined) throw new LlmError('config', 'the heuristic backend needs structured evidence');
    const value = h(req);
    return { value, raw: JSON.stringify(value), model: this.model };
  }
}
