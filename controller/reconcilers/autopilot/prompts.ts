/**
 * The prompts an autopilot gives the sessions it starts and restarts (seed 002 §2.3): the
 * planner's own prompt when it wrote one, else a resume prompt built from the project's notes,
 * its last run and the last Evaluation; and for a recovery restart a note naming the error.
 * Pure: text in, text out. What the agent wrote (evidence, summaries) is quoted, clipped, and
 * marked as what it is; these prompts go to the coding agent, which works on the project anyway.
 */
import type { ErrorClass } from '../../api/autopilot.js';
import type { ProjectView } from './types.js';

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What a new session of the project is asked to do when the planner gave no prompt. */
export function resumePrompt(p: ProjectView): string {
  const lines = [`Resume work on the project "${p.name}".`];
  if (p.notes) lines.push('', 'Goals and notes for this project:', clip(p.notes.trim(), 2000));
  const last = p.lastRun;
  if (last) {
    lines.push('', `The last run (session ${last.session}, run ${last.run}) ended ${last.phase}.`);
    if (last.summary) lines.push(`Its assessment: ${clip(last.summary, 600)}`);
  }
  const o = p.recentOutcomes[0];
  if (o) lines.push(`The last evaluation scored it ${o.score}/5 and recommended "${o.recommendation}".`);
  lines.push(
    '',
    'Start by reading the recent git log and any planning or state files, then carry on with the most ' +
      'important unfinished work. Commit as you go.',
  );
  return lines.join('\n');
}

const ADVICE: Record<ErrorClass, string> = {
  Transient: 'It looks transient (network, timeout or rate limit): retry the same work.',
  Dependency: 'A dependency seems missing: install or fix it first (e.g. npm install), then carry on.',
  Logic: 'The work itself failed (tests, build or types): find and fix the failure, then carry on.',
  TimeBox:
    'Its time ran out; it was not an error. Continue from where it stopped: read its handoff notes ' +
    '(handoff.md) and the git log for what is done, do not redo finished work, and commit as you go.',
  Auth: 'Credentials failed.',
  Unknown: 'The cause is unclear.',
};

/** The note a recovery restart adds to the run's prompt (the session keeps its own task). */
export function recoveryPrompt(cls: ErrorClass, attempt: number, max: number, run: number, evidence: string): string {
  if (cls === 'TimeBox')
    return [
      `Continuation ${attempt} of ${max}: the previous run (run ${run}) was stopped at its time box.`,
      `Its last output: ${clip(evidence.replace(/\s+/g, ' ').trim(), 400) || '(no output)'}`,
      ADVICE[cls],
    ].join('\n');
  return [
    `Recovery attempt ${attempt} of ${max}: the previous run (run ${run}) failed with a ${cls} error.`,
    `The error, as the agent's output showed it: ${clip(evidence.replace(/\s+/g, ' ').trim(), 400) || '(no output)'}`,
    ADVICE[cls],
  ].join('\n');
}
