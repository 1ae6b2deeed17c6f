/**
 * Seed 000 pattern 5: a restarted session — or a follow-up session in the same project — is told
 * how the previous run was judged, so the agent carries on from there instead of starting over.
 * Pure: the session and the Evaluations of its namespace in, a short prompt section out. In api/
 * because the session reconciler writes it into the prompt and the judge reconciler owns Evaluations.
 *
 * The accomplishments and failures may come from an LLM judge that read agent output, so they
 * are bounded (5 items of 200 characters each) and stripped of control characters.
 */
import { hasVerdict, type Evaluation } from './evaluation.js';
import type { AgentSession } from './kinds.js';
import { clip } from './text.js';

export const MAX_RESUME_CHARS = 1500;
const MAX_ITEMS = 5;
const MAX_ITEM = 200;

const at = (e: Evaluation) => {
  const n = Date.parse(String(e.status?.evaluatedAt ?? ''));
  return Number.isNaN(n) ? 0 : n;
};
const newest = (a: Evaluation, b: Evaluation) => (b.spec?.run ?? 0) - (a.spec?.run ?? 0) || at(b) - at(a);

/** The session's own latest judged Evaluation (owned by this very object, not a namesake that was deleted). */
export function latestOwnEvaluation(session: AgentSession, evaluations: Evaluation[]): Evaluation | undefined {
  const uid = session.metadata.uid;
  return evaluations
    .filter(
      (e) =>
        (e.metadata.namespace ?? '') === (session.metadata.namespace ?? '') &&
        e.spec?.sessionRef === session.metadata.name &&
        hasVerdict(e),
    )
    .filter((e) => !uid || !e.metadata.ownerReferences?.length || e.metadata.ownerReferences.some((r) => r.uid === uid))
    .sort(newest)[0];
}

function items(title: string, list: string[] | undefined): string[] {
  const l = (list ?? []).filter((x) => typeof x === 'string' && x.trim()).slice(0, MAX_ITEMS);
  if (!l.length) return [];
  return [`${title}:`, ...l.map((x) => `- ${clip(x.replace(/\s+/g, ' ').trim(), MAX_ITEM)}`)];
}

export function formatAssessment(ev: Evaluation, about: string): string {
  const s = ev.status!;
  const lines = [
    '## Previous run assessment',
    '',
    `${about} was judged ${s.score}/5 ` +
      `(outcome: ${s.outcome ?? 'unknown'}; recommendation: ${s.recommendation ?? 'none'}) ` +
      `by the ${s.backend ?? 'unknown'} judge (Evaluation ${ev.metadata.name}).`,
    ...items('Accomplished', s.accomplishments),
    ...items('Problems', s.failures),
    '',
    'Continue from where that run left off: keep what is done (check the git log), fix what went wrong, ' +
      'and do not start over.',
  ];
  let text = lines.join('\n');
  if (text.length > MAX_RESUME_CHARS) text = `${text.slice(0, MAX_RESUME_CHARS - 1)}…`;
  return text;
}

/**
 * The "Previous run assessment" section for the session's next run: its own latest judged run,
 * else (a follow-up session) the latest judged run of another session in the same project.
 */
export function resumeNotes(session: AgentSession, evaluations: Evaluation[]): string | undefined {
  const own = latestOwnEvaluation(session, evaluations);
  if (own) return formatAssessment(own, `Run ${own.spec!.run} of this session`);
  const project = session.spec?.projectRef;
  if (!project) return undefined;
  const other = evaluations
    .filter(
      (e) =>
        (e.metadata.namespace ?? '') === (session.metadata.namespace ?? '') &&
        e.spec?.projectRef === project &&
        e.spec?.sessionRef !== session.metadata.name &&
        hasVerdict(e),
    )
    .sort((a, b) => at(b) - at(a))[0];
  if (!other) return undefined;
  return formatAssessment(
    other,
    `The latest run in project ${project} (session ${other.spec!.sessionRef}, run ${other.spec!.run})`,
  );
}
