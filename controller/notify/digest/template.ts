/**
 * The digest as deterministic plain text: a few lines of counts, then a list per section, the
 * notifications held back always among them. What does not fit the channel's limit is cut list
 * by list, least important first, each cut list ending in "… N more"; the held-back list is cut
 * last, so it is listed whenever anything is. Event text is untrusted: each item is one line,
 * clipped (the channel escapes what its format needs, notify/format.ts).
 */
import { clip, oneLine } from '../format.js';
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

/** The needs-you-now items, one line each (never cut for room: the digest exists for them). */
export function needsYouLines(d: DigestData): string[] {
  return [
    ...d.decisions.map((x) => {
      const exp = x.expiresAt ? ` (expires ${shortTime(x.expiresAt, d)})` : '';
      return `- Decision ${x.name} waits for approval: ${x.what}: ${text(x.reason)}${exp}. ${x.approve} | ${x.reject}`;
    }),
    ...d.waiting.map((w) => {
      const since = w.since ? ` since ${shortTime(w.since, d)}` : '';
      return `- session ${w.session} waits for input${since}${w.message ? `: ${text(w.message)}` : ''}`;
    }),
    ...d.blocked.map(
      (b) => `- ${b.object} is blocked${b.since ? ` since ${shortTime(b.since, d)}` : ''}: ${text(b.message)}`,
    ),
    ...d.open.map(
      (e) => `- ${e.object} escalated${e.since ? ` since ${shortTime(e.since, d)}` : ''}: ${text(e.message)}`,
    ),
  ];
}

const money = (usd: number | undefined) => (usd === undefined ? 'cost unknown' : `$${usd.toFixed(2)}`);
const tokens = (n: number) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);

/** The first few names, and how many more. */
const names = (xs: string[], most = 5) =>
  xs.length > most ? `${xs.slice(0, most).join(', ')} and ${xs.length - most} more` : xs.join(', ');

function projectLine(p: DigestData['projects'][number]): string {
  const r = p.runs;
  const parts = [`runs ${r.started} started, ${r.succeeded} succeeded, ${r.failed} failed`];
  if (p.failures.length)
    parts[0] += ` (${p.failures.map((f) => `${f.reason} x${f.count}: ${names(f.sessions)}`).join('; ')})`;
  if (p.commits) parts.push(plural(p.commits, 'commit'));
  if (p.phasesDone.length) parts.push(`phases done: ${p.phasesDone.map(text).join('; ')}`);
  if (p.escalationsResolved) parts.push(`${plural(p.escalationsResolved, 'escalation')} since resolved`);
  if (p.pauses || p.resumes) parts.push(`${plural(p.pauses, 'pause')}, ${plural(p.resumes, 'resume')}`);
  return `- ${p.project}: ${parts.join('; ')}`;
}

function costLines(d: DigestData): string[] {
  const c = d.cost;
  return [
    ...c.projects.flatMap((p) => [
      `- project ${p.project}: ${tokens(p.tokens)} tokens, ${money(p.costUSD)}`,
      ...c.sessions
        .filter((x) => x.project === p.project)
        .map((x) => `  - ${x.session}: ${tokens(x.tokens)} tokens, ${money(x.costUSD)}`),
    ]),
    ...c.budgets.map((b) => `- budget ${b.policy}: ${b.display} used${b.exceeded ? ' (exceeded)' : ''}`),
  ];
}

/** How many things need a person now. */
const needsCount = (d: DigestData) => d.decisions.length + d.waiting.length + d.blocked.length + d.open.length;

/** `s` cut to at most `max` characters at a word boundary, ending in … when cut. */
function clipWords(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
}

/** The title: what needs a person first, in counts (never cut inside a word). */
export function digestTitle(d: DigestData): string {
  const parts: string[] = [];
  const needs = needsCount(d);
  if (needs) parts.push(`${needs} need${needs === 1 ? 's' : ''} you`);
  if (d.runs.failed) parts.push(plural(d.runs.failed, 'failed run'));
  if (d.runs.succeeded) parts.push(`${d.runs.succeeded} succeeded`);
  if (d.deferred.length) parts.push(`${d.deferred.length} held back`);
  const what = parts.length ? parts.join(', ') : d.empty ? 'nothing new' : 'no news needing you';
  return clipWords(`orchctl digest ${d.namespace ? `${d.namespace}/` : ''}${d.policy}: ${what}`, TITLE_MAX);
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
    `Needs you now: ${needsCount(d)} (${plural(d.decisions.length, 'pending decision')}, ${d.waiting.length} ` +
      `waiting for input, ${d.blocked.length} blocked, ${plural(d.open.length, 'open escalation')}).`,
    `Runs: ${r.started} started, ${r.succeeded} succeeded, ${r.failed} failed. ` +
      `Autopilot notices: ${d.autopilot.length}.${evaluations}`,
    `Held back: ${d.deferred.length}` +
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

function section(heading: string, items: string[], count = items.length): Section {
  const shown = Math.min(items.length, MOST);
  return { heading: `${heading} (${count}):`, items, shown, lengths: items.map(lineCost) };
}

/**
 * The digest's text in at most `maxChars` characters, an optional narrative (already bounded)
 * first. Sections in seed 002 / issue 25's order: needs you now, what happened (per project, then
 * evaluations and the autopilot's notices), cost, held back, the channels' budgets. Needs you now is
 * never cut (a narrative is shortened first); the other lists are cut least important first, down
 * to a few lines each, then to none, each cut list ending in "… N more".
 */
export function renderDigest(d: DigestData, maxChars: number, narrative?: string): DigestText {
  const s = {
    needs: section('Needs you now', needsYouLines(d)),
    happened: section('What happened, per project', d.projects.map(projectLine)),
    evaluations: section('Evaluations', d.evaluations.map(evaluationLine)),
    autopilot: section(
      'Autopilot notices',
      d.autopilot.map((e) => eventLine(e, d)),
    ),
    cost: section('Cost', costLines(d), d.cost.sessions.length),
    deferred: section(
      'Held back',
      d.deferred.map((n) => deferredLine(n, d)),
    ),
    budget: section('Notification budget used', d.budget.map(budgetLine)),
  };
  const order = [s.needs, s.happened, s.evaluations, s.autopilot, s.cost, s.deferred, s.budget];
  const cutOrder = [s.autopilot, s.evaluations, s.budget, s.cost, s.happened, s.deferred];
  const summary = summaryLines(d).join('\n');
  // The narrative gives way to the needs-you-now list, never the other way round.
  const room = maxChars - summary.length - 2 - sectionCost(s.needs) - 2;
  const story = narrative?.trim() ? clipWords(narrative.trim(), Math.max(0, room)) : undefined;
  const head = [story, summary].filter((x): x is string => !!x && x !== '…');
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
