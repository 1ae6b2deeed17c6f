/**
 * When a rate or usage limit lifts, read from what the agent printed (pure: text and `now` in).
 *
 * The shapes agents use (shared/reference/claude-code-samples.md, manifests/agents/):
 *   "You've reached your usage limit · resets 3am"          a clock time, in the agent's time zone
 *   "5-hour limit reached ∙ resets 3pm"
 *   "Your limit will reset at 3pm (Europe/Berlin)"          a clock time in a named zone
 *   "Your usage resets in approximately 4 hours."           a span from now
 *   "Claude AI usage limit reached|1751122800"              epoch seconds (older transcripts): the
 *                                                           driver's `resetEpoch` (agents/driver.ts)
 *   "You've hit your usage limit. Try again at 9:37 PM."   Codex 0.171.0: the reset's clock time,
 *                                                           to the minute (rounded down)
 * Only the words after "reset" (or "try again at") are read (bounded), so a time elsewhere on the screen (a spinner's
 * "2m 18s", a commit time) is never taken for it; chrono-node reads the date itself.
 */
// The English entry: the package root loads all 15 locales (266 more modules, ~90 ms at start-up).
import * as chrono from 'chrono-node/en';

/** A limit never lasts longer than this (weekly limits are the longest): a later time is a misreading. */
const MAX_AHEAD_MS = 8 * 24 * 3600_000;
/** A reset this far in the past is stale text, not "it has just reset". */
const STALE_MS = 60_000;
/** Characters of the text looked at, and of the phrase after "reset". */
const MAX_TEXT = 4000;
const MAX_PHRASE = 80;
/** Only the last few mentions of a reset are read (the current notice is the last). */
const MAX_MENTIONS = 4;

const RESET = /\b(?:resets?|try again at)\b/gi;
const DAY_MS = 24 * 3600_000;
const ZONE = /\(([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)+|UTC)\)/;

/**
 * Epoch ms when the limit lifts, or undefined when the text does not say (or says something
 * impossible). `timeZone` (IANA) is the zone a bare clock time is in; default: this machine's,
 * where the agent runs and prints its local time. `epochRe`: the agent's form with the reset in
 * epoch seconds (group 1), from its driver.
 */
export function parseResetTime(text: string, now: number, timeZone?: string, epochRe?: RegExp): number | undefined {
  if (!Number.isFinite(now)) return undefined;
  const t = text.length > MAX_TEXT ? text.slice(-MAX_TEXT) : text;
  const epoch = epochRe?.exec(t);
  if (epoch) return plausible(Number(epoch[1]) * 1000, now);
  let found: number | undefined;
  for (const m of [...t.matchAll(RESET)].slice(-MAX_MENTIONS)) {
    const phrase = t.slice(m.index + m[0].length, m.index + m[0].length + MAX_PHRASE).split('\n')[0];
    const zone = ZONE.exec(phrase)?.[1] ?? timeZone;
    const offset = zone ? offsetMinutes(zone, now) : undefined;
    const ref = offset === undefined ? new Date(now) : { instant: new Date(now), timezone: offset };
    const date = chrono.parseDate(phrase, ref, { forwardDate: true });
    let ms = date?.getTime();
    // A clock time to the minute that has just passed (9:37 read at 9:37:40) is now, not tomorrow.
    if (ms !== undefined && ms - DAY_MS <= now && ms - DAY_MS >= now - STALE_MS) ms = now;
    const at = ms !== undefined ? plausible(ms, now) : undefined;
    if (at !== undefined) found = at; // the last notice on screen is the current one
  }
  return found;
}

function plausible(at: number, now: number): number | undefined {
  if (!Number.isFinite(at) || at < now - STALE_MS || at > now + MAX_AHEAD_MS) return undefined;
  return Math.max(at, now);
}

/** The UTC offset of an IANA zone at `at`, in minutes (undefined for a zone this runtime does not know). */
export function offsetMinutes(timeZone: string, at: number): number | undefined {
  try {
    const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
      .formatToParts(new Date(at))
      .find((p) => p.type === 'timeZoneName')?.value;
    const m = /GMT(?:([+-])(\d{2}):(\d{2}))?/.exec(name ?? '');
    if (!m) return undefined;
    return m[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  } catch {
    return undefined;
  }
}
