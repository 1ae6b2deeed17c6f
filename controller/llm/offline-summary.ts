/**
 * The offline segment summariser: an LlmBackend that answers checkpoint-summary requests from
 * the structured evidence alone (no model, no network), deterministically — the same segment
 * always gives the same summary. It is the default summariser for checkpoints; a policy can
 * route summaries to the judge's backend instead.
 *
 * It reads `req.evidence` shaped like SegmentEvidence (controller/reconcilers/assessment/
 * checkpoints.ts), declared here structurally so llm/ does not import reconcilers/.
 */
import { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';

export interface SegmentDigest {
  fromSeq: number;
  toSeq: number;
  firstMsg: number;
  lastMsg: number;
  requests: string[];
  lastAssistant?: string;
  tools: Record<string, number>;
  signals: Record<string, number | undefined>;
  failedTools: string[];
  passedTools: string[];
  commits: string[];
}

export interface SegmentSummary {
  /** One or two sentences. */
  summary: string;
  /** A short title for listings ("Fixed test failures"). */
  title: string;
  attempted: string[];
  failures: string[];
  successes: string[];
  commits: string[];
}

/** JSON Schema of a segment summary (what any backend must return for purpose checkpoint-summary). */
export const SEGMENT_SUMMARY_SCHEMA: Record<string, unknown> = {
  type: 'object',
  required: ['summary', 'title'],
  additionalProperties: false,
  properties: {
    summary: { type: 'string', maxLength: 600 },
    title: { type: 'string', maxLength: 80 },
    attempted: { type: 'array', items: { type: 'string' }, maxItems: 8 },
    failures: { type: 'array', items: { type: 'string' }, maxItems: 8 },
    successes: { type: 'array', items: { type: 'string' }, maxItems: 8 },
    commits: { type: 'array', items: { type: 'string' }, maxItems: 8 },
  },
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const quote = (s: string) => `“${s}”`;

function isDigest(v: unknown): v is SegmentDigest {
  const d = v as SegmentDigest;
  return (
    !!d &&
    typeof d === 'object' &&
    Array.isArray(d.requests) &&
    typeof d.tools === 'object' &&
    typeof d.signals === 'object' &&
    Array.isArray(d.commits)
  );
}

/** The summary of a segment, from its digest. */
export function summariseSegment(d: SegmentDigest): SegmentSummary {
  const n = (k: string) => d.signals[k] ?? 0;
  const toolCalls = Object.values(d.tools).reduce((a, b) => a + b, 0);
  const toolList = Object.entries(d.tools)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 4)
    .map(([t, c]) => `${t} ${c}`)
    .join(', ');
  const attempted = d.requests.map(quote);
  const failures: string[] = [];
  const successes: string[] = [];
  for (const [sig, label] of [
    ['TestFailure', 'failing test run'],
    ['BuildFailure', 'failed build'],
    ['LintError', 'lint run with errors'],
    ['ToolFailure', 'other failed tool call'],
    ['ToolRejected', 'rejected tool call'],
    ['UserCorrection', 'correction'],
  ] as const)
    if (n(sig)) failures.push(plural(n(sig), label));
  for (const [sig, label] of [
    ['TestSuccess', 'passing test run'],
    ['BuildSuccess', 'successful build'],
    ['LintSuccess', 'clean lint run'],
  ] as const)
    if (n(sig)) successes.push(plural(n(sig), label));

  const parts: string[] = [];
  if (attempted.length)
    parts.push(
      `Asked: ${attempted.slice(0, 2).join('; ')}${attempted.length > 2 ? ` (+${attempted.length - 2} more)` : ''}.`,
    );
  parts.push(toolCalls ? `${plural(toolCalls, 'tool call')} (${toolList}).` : 'No tool calls.');
  const outcome: string[] = [];
  if (d.failedTools.length) outcome.push(`failing: ${d.failedTools.join(', ')}`);
  if (d.passedTools.length) outcome.push(`passing: ${d.passedTools.join(', ')}`);
  if (outcome.length) parts.push(`${outcome.join('; ')}.`);
  if (d.commits.length) parts.push(`${plural(d.commits.length, 'commit')}: ${d.commits.map(quote).join(', ')}.`);
  if (n('UserCorrection') || n('Frustration')) {
    const friction = [
      n('UserCorrection') ? plural(n('UserCorrection'), 'correction') : '',
      n('Frustration') ? `${n('Frustration')} frustrated message${n('Frustration') === 1 ? '' : 's'}` : '',
    ];
    parts.push(`Friction: ${friction.filter(Boolean).join(', ')}.`);
  }

  let title: string;
  if (d.commits.length) title = `Committed ${quote(d.commits.at(-1)!)}`;
  else if (d.failedTools.length && !d.passedTools.length) title = `Struggled with ${d.failedTools[0]}`;
  else if (d.failedTools.length && d.passedTools.length) title = `Fixed ${d.failedTools[0]} failures`;
  else if (d.passedTools.length) title = `${d.passedTools[0]} passing`;
  else if (d.requests.length) title = d.requests[0];
  else title = toolCalls ? `${plural(toolCalls, 'tool call')}` : 'Conversation';
  if (title.length > 80) title = `${title.slice(0, 79)}…`;
  return { summary: parts.join(' ').slice(0, 600), title, attempted, failures, successes, commits: d.commits };
}

export class OfflineSummaryBackend implements LlmBackend {
  readonly name = 'offline';
  readonly model = undefined;

  async complete(req: LlmRequest): Promise<LlmResponse> {
    if (req.purpose !== 'checkpoint-summary')
      throw new LlmError(
        'config',
        `the offline summariser only answers checkpoint-summary requests, not ${req.purpose}`,
      );
    if (!isDigest(req.evidence))
      throw new LlmError('bad_output', 'checkpoint-summary request without segment evidence');
    const value = summariseSegment(req.evidence);
    return { value, raw: JSON.stringify(value) };
  }
}
