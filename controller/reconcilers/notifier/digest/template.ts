/**
 * The digest as deterministic plain text: a few lines of counts, then a list per section, the
 * notifications held back always among them. What does not fit the channel's limit is cut list
 * by list, least important first, each cut list ending in "… N more"; the held-back list is cut
 * last, so it is listed whenever anything is. Event text is untrusted: each item is one line,
 * clipped (the channel escapes what its format needs, notify/format.ts).
 */
import { clip, oneLine } from '../../../notify/format.js';
import { wallClock } from '../quiet-hours.js';
import type { DigestData, DigestDeferred, DigestEvaluation, DigestEvent } from './collect.js';

export type DigestText = { title: string; body: string };

const TITLE_MAX = 150;
const ITEM_TEXT_MAX = 160;
/** Lines a list keeps before any is cut for room, and most lines a list ever shows. */
const KEEP = 3;
const MOST = 200;

const pad = (n: number) => String(n).padStart(2, '0');
const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

/** `2026-06-01 07:00` on the wall clock of `timeZone` (UTC when the zone is unknown). */
export function localTime(isoTime: string, timeZone: string): string {
  const t = Date.parse(isoTime);
  if (Number.isNaN(t)) return isoTime;
  let w: ReturnType<typeof wallClock>;
  try {
    w = wallClock(t, timeZone);
  } catch {
    w = wallClock(t, 'UTC');
  }
  return `${w.year}-${pad(w.month)}-${pad(w.day)} ${pad(Math.floor(w.minute / 60))}:${pad(w.minute % 60)}`;
}

/** `HH:MM` on the digest's last day, else `MM-DD HH:MM`. */
function shortTime(isoTime: string | undefined, d: DigestData): string {
  if (!isoTime) return '?';
  const full = localTime(isoTime, d.timeZone);
  const day = localTime(d.until, d.timeZone).slice(0, 10);
  return full.startsWith(day) ? full.slice(11) : full.slice(5);
}

const text = (s: string | undefined) => clip(oneLine(s ?? ''), ITEM_TEXT_MAX);

function eventLine(e: DigestEvent, d: DigestData): string {
  const times = e.count > 1 ? ` (x${e.count})` : '';
  return `- ${e.object} ${oneLine(e.reason)} at ${shortTime(e.at, d)}${times}: ${text(e.message)}`;
}

function evaluationLine(e: DigestEvaluation): string {
  const run = e.run !== undefined ? ` run ${e.run}` : '';
  if (e.score === undefined) return `- ${e.session}${run}: not judged yet (${e.phase ?? 'Pending'})`;
  const how = [e.outcome, e.recommendation].filter(Boolean).join(', ');
  return `- ${e.session}${run}: ${e.score}/5${how ? ` ${how}` : ''}`;
}

function deferredLine(n: DigestDeferred, d: DigestData): string {
  const why =
    n.phase === 'Digest'
      ? 'past the daily budget'
      : `held for ${n.why ?? 'later'}${n.until ? ` until ${shortTime(n.until, d)}` : ''}`;
  return `- [tier ${n.tier}] ${text(n.title)} - ${why}, since ${shortTime(n.at, d)} (${n.channels.join(', ')})`;
}

function budgetLine(b: DigestData['budget'][number]): string {
  const parts = [`${b.sent}${b.budget !== undefined ? `/${b.budget}` : ''} sent${b.day ? ` on ${b.day}` : ''}`];
  if (b.digest) parts.push(`${b.digest} for the digest`);
  if (b.deferred) parts.push(`${b.deferred} deferred`);
  if (b.batched) parts.push(`${b.batched} batched`);
  if (b.failing) parts.push('FAILING');
  return `- ${b.channel}: ${parts.join(', ')}`;
}

type Section = { heading: string; items: string[]; shown: number; lengths: number[] };

/** The title: what needs a person first, in counts. */
export function digestTitle(d: DigestData): string {
  const parts: string[] = [];
  if (d.waiting.length) parts.push(`${d.waiting.length} waiting`);
  if (d.escalations.length) parts.push(plural(d.escalations.length, 'escalation'));
  if (d.runs.failed) parts.push(plural(d.runs.failed, 'failed run'));
  if (d.runs.succeeded) parts.push(`${d.runs.succeeded} succeeded`);
  if (d.deferred.length) parts.push(`${d.deferred.length} held back`);
  const what = parts.length ? parts.join(', ') : d.empty ? 'nothing new' : 'no news needing you';
  return clip(`orchctl digest ${d.namespace ? `${d.namespace}/` : ''}${d.policy}: ${what}`, TITLE_MAX);
}

function summaryLines(d: DigestData): string[] {
  const period = `Since ${localTime(d.since, d.timeZone)} until ${localTime(d.until, d.timeZone)} (${d.timeZone}).`;
  if (d.empty) return [period, 'Nothing happened: no runs, nobody waiting for input, nothing held back.'];
  const r = d.runs;
  const evaluations = d.evaluations.length
    ? ` Evaluations: ${d.evaluations.length}${d.averageScore !== undefined ? ` (average ${d.averageScore}/5)` : ''}.`
    : '';
  const budgetHeld = d.deferred.filter((n) => n.phase === 'Digest').length;
  return [
    period,
    `Runs: ${r.started} started, ${r.succeeded} succeeded, ${r.failed} failed. ` +
      `Escalations: ${d.escalations.length}. Autopilot decisions: ${d.autopilot.length}.${evaluations}`,
    `Waiting for input now: ${d.waiting.length}. Held back: ${d.deferred.length}` +
      (d.deferred.length ? ` (${budgetHeld} past the daily budget, ${d.deferred.length - budgetHeld} deferred).` : '.'),
  ];
}

const more = (n: number) => `- … ${n} more`;
const lineCost = (s: string) => s.length + 1;

function sectionCost(s: Section): number {
  if (!s.items.length) return 0;
  let n = lineCost(s.heading) + 1; // and the blank line before it
  for (let i = 0; i < s.shown; i++) n += s.lengths[i];
  return s.shown < s.items.length ? n + lineCost(more(s.items.length - s.shown)) : n;
}

function renderSection(s: Section): string {
  const lines = [s.heading, ...s.items.slice(0, s.shown)];
  if (s.shown < s.items.length) lines.push(more(s.items.length - s.shown));
  return lines.join('\n');
}

function section(heading: string, items: string[]): Section {
  const shown = Math.min(items.length, MOST);
  return { heading: `${heading} (${items.length}):`, items, shown, lengths: items.map(lineCost) };
}

/**
 * The digest's text in at most `maxChars` characters, an optional narrative (already bounded)
 * first. Lists are cut least important first: autopilot, evaluations, budget, failed runs,
 * escalations, waiting sessions, and the held-back notifications last — first down to a few
 * lines each, then to none.
 */
export function renderDigest(d: DigestData, maxChars: number, narrative?: string): DigestText {
  const head = [narrative?.trim(), summaryLines(d).join('\n')].filter((s): s is string => !!s);
  const s = {
    waiting: section(
      'Waiting for input',
      d.waiting.map((w) => {
        const since = w.since ? ` since ${shortTime(w.since, d)}` : '';
        return `- ${w.session}${since}${w.message ? `: ${text(w.message)}` : ''}`;
      }),
    ),
    escalations: section(
      'Escalations',
      d.escalations.map((e) => eventLine(e, d)),
    ),
    failed: section(
      'Failed runs',
      d.failedRuns.map((e) => eventLine(e, d)),
    ),
    evaluations: section('Evaluations', d.evaluations.map(evaluationLine)),
    autopilot: section(
      'Autopilot decisions',
      d.autopilot.map((e) => eventLine(e, d)),
    ),
    deferred: section(
      'Held back',
      d.deferred.map((n) => deferredLine(n, d)),
    ),
    budget: section('Budget used', d.budget.map(budgetLine)),
  };
  const order = [s.waiting, s.escalations, s.failed, s.evaluations, s.autopilot, s.deferred, s.budget];
  const cutOrder = [s.autopilot, s.evaluations, s.budget, s.failed, s.escalations, s.waiting, s.deferred];
  const fixed = head.reduce((n, h) => n + h.length + 2, 0);
  let total = fixed + order.reduce((n, x) => n + sectionCost(x), 0);
  for (const floor of [KEEP, 0])
    for (const x of cutOrder)
      while (total > maxChars && x.shown > floor) {
        const before = sectionCost(x);
        x.shown--;
        total += sectionCost(x) - before;
      }
  const body = [...head, ...order.filter((x) => x.items.length).map(renderSection)].join('\n\n');
  return { title: digestTitle(d), body: clip(body, Math.max(1, maxChars)) };
}

/** The template digest (no narrative). Never throws: broken data gives a short digest saying so. */
export function renderDigestTemplate(d: DigestData, maxChars: number): DigestText {
  try {
    return renderDigest(d, maxChars);
  } catch (e) {
    const body = `The digest could not be written out (${(e as Error)?.message ?? e}); see orchctl get notifications.`;
    return { title: 'orchctl digest', body: clip(body, Math.max(1, maxChars)) };
  }
}
