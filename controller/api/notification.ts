/**
 * The NotificationPolicy kind and silences (issue 14): how Events become notifications. Modelled
 * on Prometheus Alertmanager — an ordered route tree with matchers, `continue`, `groupBy` and the
 * group/repeat timers, inhibit rules, silences — plus what seed 002 §2.8 adds: tiers, quiet hours
 * that defer instead of mute, and a daily budget past which tier 2/3 go to the digest. The
 * routing engine (reconcilers/notifier/) reads these; the validation below bounds every field.
 *
 * Matchers are Alertmanager's strings, `name op value` with op `=`, `!=`, `=~` (regular
 * expression, anchored at both ends, case-sensitive) or `!~`, the value bare or double-quoted:
 * `reason=~"Stalled|JudgeFailed"`. The names are an Event's fields (NOTIFICATION_FIELDS) and the
 * involved object's labels as `labels.<key>`; a missing one is the empty string, as there.
 */
import type { NotificationPolicySchemaSpec } from './generated/notificationpolicy.js';
import type { SilenceSchemaSpec } from './generated/silence.js';
import { Cron } from 'croner';
import { isGoDuration, parseDuration } from './duration.js';
import { checkDns1123Subdomain, checkQualifiedName } from './names.js';
import type { NotificationTier } from './notification-channel.js';
import type { NotificationPolicyStatus } from './outbox.js';
import { checkPattern } from './patterns.js';
import type { JudgePolicy } from './session-policy.js';
import type { Resource } from './types.js';
import type { FieldError, PathPart } from './validate.js';

export type { NotificationTier };

/** An Event's fields a matcher, `groupBy` or `equal` may name, besides `labels.<key>`. */
export const NOTIFICATION_FIELDS = [
  'type',
  'reason',
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
] as const;
export const LABEL_FIELD_PREFIX = 'labels.';
/** The flat name → value view of one Event (and its object's labels) that matchers see. */
export type NotificationFields = Record<string, string>;

export type NotificationRoute = {
  /** All must match; none on the root, which takes every Event. */
  matchers?: string[];
  /** After this route matched, go on to its next sibling (by default the first match wins). */
  continue?: boolean;
  /** Unset fields are inherited from the parent route. */
  tier?: NotificationTier;
  /** NotificationChannel names. */
  channels?: string[];
  /** Events with the same values of these fields form one group; default: the involved object. */
  groupBy?: string[];
  /** How long a new group's first message waits for more of the group (Go duration; default 0s). */
  groupWait?: string;
  /** Least time between two messages of one group (default 0s). */
  groupInterval?: string;
  /** The same Event (e.g. its `count` bumped) is not notified again within this (default 4h). */
  repeatInterval?: string;
  /** Tried in order under this route; when none matches, this route takes the Event. */
  routes?: NotificationRoute[];
};

/**
 * Quiet from `start` to `end` (HH:MM, wall clock in the policy's time zone; `end` may be 24:00)
 * on `days` (default every day). A range past midnight (22:00–07:00) belongs to the day it
 * starts on: with `days: [friday]` it covers Friday night into Saturday morning.
 */
export type QuietHoursInterval = {
  /** Alertmanager's spelling: `monday`, or a range `monday:friday`. */
  days?: string[];
  start: string;
  end: string;
};

/** Alertmanager's inhibit rule: a target Event is muted while a source Event is in force. */
export type InhibitRule = {
  /** Named in the suppression; default `inhibit[i]`. */
  name?: string;
  sourceMatchers: string[];
  targetMatchers: string[];
  /** Fields that must be equal on source and target (e.g. the involved object). */
  equal?: string[];
};

/** The LLM that writes the digest's narrative: the judge's backend settings (api/session-policy.ts). */
export type DigestLlm = Omit<JudgePolicy, 'enabled' | 'maxConcurrent'>;

/**
 * The digest (seed 002 §2.6): what happened since the last one, and every notification deferred
 * to it, sent on a cron schedule. On unless `enabled: false`: it is where tier 2/3 go past the budget.
 */
export type NotificationDigest = {
  /** 5-field cron expression (or croner's @daily, @weekly…); default "0 7 * * *". */
  schedule?: string;
  /** IANA time zone of the schedule; default the policy's timeZone. */
  timeZone?: string;
  /** NotificationChannel names; default the root route's channels. */
  channels?: string[];
  /** The narrative's writer; unset (or backend heuristic): the template alone. */
  llm?: DigestLlm;
  /** Most characters of the message body (each channel's own limit applies too). */
  maxLength?: number;
  enabled?: boolean;
};

export type NotificationPolicySpec = NotificationPolicySchemaSpec;

export type NotificationPolicy = Resource<NotificationPolicySpec, NotificationPolicyStatus>;

/** Alertmanager's silence: Events matching every matcher are not notified from startsAt to endsAt. */
export type SilenceSpec = SilenceSchemaSpec;

/** Where a silence is in its life, as Alertmanager says it (written by the notifier into status.state). */
export type SilenceState = 'pending' | 'active' | 'expired';
export type SilenceStatus = { state: SilenceState };

export type Silence = Resource<SilenceSpec, SilenceStatus>;

/** The state of a silence at `now`: before startsAt pending, until endsAt active, then expired. */
export function silenceState(spec: Pick<SilenceSpec, 'startsAt' | 'endsAt'>, now: number): SilenceState {
  if (now < Date.parse(spec.startsAt)) return 'pending';
  return now < Date.parse(spec.endsAt) ? 'active' : 'expired';
}

// ---- what routing and the decision produce ----------------------------------------------

/** One matching route, its inherited settings resolved. */
export type RoutedNotification = {
  /** The route's path in the spec: `route`, `route.routes[1].routes[0]`. */
  route: string;
  tier: NotificationTier;
  channels: string[];
  /** The route and the groupBy fields' values: messages of one group are paced together. */
  groupKey: string;
  groupWaitMs: number;
  groupIntervalMs: number;
  repeatIntervalMs: number;
};

type DecisionBase = { channel: string; tier: NotificationTier; route: string; groupKey: string };

/**
 * What becomes of one Event on one channel. Times are milliseconds since the epoch.
 * `send` now, taking along the channel's pending tier-3 batch when `flushesBatch` says so (an early
 * flush); `defer` until a time; `batch` into the channel's tier-3 batch, sent at `flushAt` or
 * earlier with the channel's next tier 1/2 message; `digest` past the daily budget, never dropped;
 * `suppress`, saying why and naming the inhibit rule or the silence.
 */
export type NotificationDecision = DecisionBase &
  (
    | { action: 'send'; flushesBatch?: number }
    | { action: 'defer'; why: 'quietHours' | 'groupWait' | 'groupInterval'; until: number }
    | { action: 'batch'; flushAt: number }
    | { action: 'digest'; why: 'budget'; used: number; budget: number }
    | { action: 'suppress'; why: 'tier4' }
    | { action: 'suppress'; why: 'inhibited'; rule: string }
    | { action: 'suppress'; why: 'silenced'; silence: string }
    | { action: 'suppress'; why: 'repeat'; until: number }
  );

export type NotificationAction = NotificationDecision['action'];

/** What becomes of a channel's tier-3 batch once its interval is up. */
export type BatchFlushDecision = { channel: string; items: number } & (
  | { action: 'send' }
  | { action: 'defer'; why: 'quietHours'; until: number }
  | { action: 'digest'; why: 'budget'; used: number; budget: number }
);

/** A channel reached BUDGET_WARNING_RATIO of its daily budget: said once per day. */
export type BudgetWarning = { channel: string; used: number; budget: number; day: string; message: string };

// ---- defaults and bounds ----------------------------------------------------------------

/** Events no route gives a tier to are only logged (the pitfall this answers is spam). */
export const DEFAULT_TIER: NotificationTier = 4;
export const DEFAULT_GROUP_BY = ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name'];
export const DEFAULT_TIME_ZONE = 'UTC';
/** Seed 002: 20 messages a day, a warning at 80 %, tier 3 batched every 4 hours. */
export const DEFAULT_DAILY_BUDGET = 20;
export const BUDGET_WARNING_RATIO = 0.8;
/** 0s, not Alertmanager's 30s/5m: tier 1 must reach the receiver within a second. */
export const DEFAULT_DURATIONS = { groupWait: '0s', groupInterval: '0s', repeatInterval: '4h', batchInterval: '4h' };
/**
 * Seed 002 §2.8: "tier 1 if error count > 2". A Warning whose reason was recorded more than `after`
 * times within `windowMs` (in the namespace, each Event's count included) goes one tier up. An
 * hour: what the store keeps of an Event after its last occurrence.
 */
export const REPEAT_ESCALATION = { after: 2, windowMs: 3_600_000 } as const;
/** Seed 002 §2.6: the digest at 7 in the morning. */
export const DEFAULT_DIGEST_SCHEDULE = '0 7 * * *';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** [least, most] milliseconds of each duration field. */
export const DURATION_BOUNDS = {
  groupWait: [0, HOUR],
  groupInterval: [0, DAY],
  repeatInterval: [MIN, 7 * DAY],
  batchInterval: [MIN, DAY],
} as const;
export const LIMITS = {
  routes: 256,
  depth: 8,
  matchers: 32,
  matcherLength: 1024,
  channels: 16,
  groupBy: 16,
  inhibit: 64,
  quietHours: 32,
  dailyBudget: 10_000,
  silenceLengthMs: 366 * DAY,
  /** digest.maxLength: room for a few lines at least, at most what the roomiest channel takes. */
  digestLength: [200, 16_000],
} as const;

// ---- matchers ---------------------------------------------------------------------------

export type MatchOp = '=' | '!=' | '=~' | '!~';
export type Matcher = { name: string; op: MatchOp; value: string };

const MATCHER = /^\s*([A-Za-z0-9_./-]+)\s*(=~|!~|!=|=)\s*(.*?)\s*$/s;

/** Parses `name op value`; throws an Error saying what is wrong. */
export function parseMatcher(text: string): Matcher {
  const m = MATCHER.exec(text);
  if (!m) throw new Error(`matcher "${text}" is not name=value, name!=value, name=~regex or name!~regex`);
  const fieldProblem = checkField(m[1]);
  if (fieldProblem) throw new Error(`matcher "${text}": ${fieldProblem}`);
  let value = m[3];
  if (value.startsWith('"')) {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error(`matcher "${text}": the quoted value is not one double-quoted string`);
    }
  }
  return { name: m[1], op: m[2] as MatchOp, value };
}

/** A matcher ready to test a field's value ("" when the Event has no such field). */
export type CompiledMatcher = Matcher & { test: (value: string) => boolean };

/** Parses and compiles a matcher; a regular expression is anchored at both ends, as in Alertmanager. */
export function compileMatcher(text: string): CompiledMatcher {
  const m = parseMatcher(text);
  if (m.op === '=') return { ...m, test: (v) => v === m.value };
  if (m.op === '!=') return { ...m, test: (v) => v !== m.value };
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${m.value})$`);
  } catch (e) {
    const why = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    throw new Error(`matcher "${text}": invalid regular expression "${m.value}": ${why}`);
  }
  return m.op === '=~' ? { ...m, test: (v) => re.test(v) } : { ...m, test: (v) => !re.test(v) };
}

/** Why `name` is not a field matchers, groupBy and equal may use, or undefined. */
export function checkField(name: string): string | undefined {
  if ((NOTIFICATION_FIELDS as readonly string[]).includes(name)) return undefined;
  if (name.startsWith(LABEL_FIELD_PREFIX)) {
    const problem = checkQualifiedName(name.slice(LABEL_FIELD_PREFIX.length));
    return problem && `label key in "${name}": ${problem}`;
  }
  return `"${name}" is not one of ${NOTIFICATION_FIELDS.join(', ')} or ${LABEL_FIELD_PREFIX}<key>`;
}

function matcherProblem(text: unknown): string | undefined {
  if (typeof text !== 'string') return 'must be a string';
  if (text.length > LIMITS.matcherLength) return `is longer than ${LIMITS.matcherLength} characters`;
  let m: CompiledMatcher;
  try {
    m = compileMatcher(text);
  } catch (e) {
    return (e as Error).message;
  }
  return m.op === '=~' || m.op === '!~' ? checkPattern(m.value) : undefined;
}

// ---- quiet hours ------------------------------------------------------------------------

/** Index = JavaScript's getUTCDay(). */
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Minutes after midnight of `HH:MM` (00:00–24:00), or undefined. */
export function parseClock(text: string): number | undefined {
  const m = /^([01][0-9]|2[0-4]):([0-5][0-9])$/.exec(text);
  if (!m) return undefined;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 24 * 60 ? minutes : undefined;
}

/** The weekdays (0 = Sunday) `days` names; every day when unset. Throws on a bad name or range. */
export function parseDays(days: string[] | undefined): number[] {
  if (!days?.length) return [0, 1, 2, 3, 4, 5, 6];
  const out = new Set<number>();
  for (const d of days) {
    const [from, to = from, extra] = d.split(':').map((s) => WEEKDAYS.indexOf(s.trim().toLowerCase()));
    if (from < 0 || to < 0 || extra !== undefined)
      throw new Error(`"${d}" is not a weekday (monday … sunday) or a range like monday:friday`);
    if (from > to) throw new Error(`"${d}" runs backwards: write the range from the earlier day in the week`);
    for (let i = from; i <= to; i++) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

export type QuietInterval = { days: number[]; start: number; end: number };

/** The intervals as numbers; throws on what validateNotificationPolicy reports. */
export function parseQuietHours(list: QuietHoursInterval[] | undefined): QuietInterval[] {
  return (list ?? []).map((q) => {
    const start = parseClock(q.start);
    const end = parseClock(q.end);
    if (start === undefined || start === 24 * 60 || end === undefined || end === 0 || start === end)
      throw new Error(`quiet hours ${q.start}–${q.end} are not a range HH:MM–HH:MM`);
    return { days: parseDays(q.days), start, end };
  });
}

/** True when the intervals leave no minute of the week: tier 2 would never be sent. */
function coversWholeWeek(list: QuietInterval[]): boolean {
  const week = 7 * 24 * 60;
  const quiet = new Uint8Array(week);
  for (const q of list)
    for (const d of q.days) {
      const from = d * 24 * 60 + q.start;
      const to = d * 24 * 60 + (q.end > q.start ? q.end : q.end + 24 * 60);
      for (let m = from; m < to; m++) quiet[m % week] = 1;
    }
  return quiet.every((v) => v === 1);
}

/** Whether Intl knows the IANA time zone. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

// ---- the digest's schedule --------------------------------------------------------------

/**
 * The digest's schedule as a croner job (no function: it only computes times) in `timeZone`.
 * Throws an Error saying what is wrong with the expression.
 */
export function digestCron(schedule: string, timeZone: string): Cron {
  return new Cron(schedule, { timezone: timeZone, mode: '5-part' });
}

/** Why `schedule` cannot be the digest's, or undefined. At most one digest an hour: one minute value. */
export function digestScheduleProblem(schedule: unknown, timeZone: string): string | undefined {
  if (typeof schedule !== 'string') return 'must be a string';
  try {
    digestCron(schedule, timeZone);
  } catch (e) {
    return `"${schedule}" is not a 5-field cron expression: ${(e as Error).message.replace(/^\w+: /, '')}`;
  }
  const minute = schedule.trim().split(/\s+/)[0];
  if (!schedule.trim().startsWith('@') && !/^[0-5]?[0-9]$/.test(minute))
    return `the minute field "${minute}" must be one number, such as 0: at most one digest an hour`;
  return undefined;
}

// ---- validation -------------------------------------------------------------------------

const err = (path: PathPart[], message: string): FieldError => ({ path, message });

function durationErrors(v: string | undefined, field: keyof typeof DURATION_BOUNDS, at: PathPart[]): FieldError[] {
  if (v === undefined) return [];
  const path = [...at, field];
  if (typeof v !== 'string' || !isGoDuration(v)) return [err(path, `"${v}" is not a duration like 5m`)];
  const [min, max] = DURATION_BOUNDS[field];
  const ms = parseDuration(v);
  if (ms < min || ms > max) return [err(path, `must be between ${min / 1000}s and ${max / HOUR}h`)];
  return [];
}

function listErrors(list: unknown, max: number, path: PathPart[], each: (v: unknown) => string | undefined) {
  if (list === undefined) return [];
  if (!Array.isArray(list)) return [err(path, 'must be a list')];
  const out = list.length > max ? [err(path, `at most ${max} entries`)] : [];
  list.forEach((v, i) => {
    const problem = each(v);
    if (problem) out.push(err([...path, i], problem));
  });
  return out;
}

const fieldProblem = (v: unknown) => (typeof v === 'string' ? checkField(v) : 'must be a string');
const channelProblem = (v: unknown) => (typeof v === 'string' ? checkDns1123Subdomain(v) : 'must be a string');

function routeErrors(r: NotificationRoute, path: PathPart[], depth: number, count: { n: number }): FieldError[] {
  count.n++;
  const out: FieldError[] = [];
  if (depth === 0 && r.matchers?.length) out.push(err([...path, 'matchers'], 'the root route takes every Event'));
  if (depth === 0 && r.continue) out.push(err([...path, 'continue'], 'the root route has no sibling to go on to'));
  if (depth >= LIMITS.depth) out.push(err(path, `routes nest at most ${LIMITS.depth} deep`));
  if (r.tier !== undefined && ![1, 2, 3, 4].includes(r.tier))
    out.push(err([...path, 'tier'], 'must be 1 (urgent), 2 (action), 3 (summary) or 4 (debug)'));
  out.push(
    ...listErrors(r.matchers, LIMITS.matchers, [...path, 'matchers'], matcherProblem),
    ...listErrors(r.channels, LIMITS.channels, [...path, 'channels'], channelProblem),
    ...listErrors(r.groupBy, LIMITS.groupBy, [...path, 'groupBy'], fieldProblem),
    ...durationErrors(r.groupWait, 'groupWait', path),
    ...durationErrors(r.groupInterval, 'groupInterval', path),
    ...durationErrors(r.repeatInterval, 'repeatInterval', path),
  );
  if (depth < LIMITS.depth)
    (r.routes ?? []).forEach((child, i) => {
      out.push(...routeErrors(child, [...path, 'routes', i], depth + 1, count));
    });
  if (depth === 0 && count.n > LIMITS.routes) out.push(err(path, `at most ${LIMITS.routes} routes in the tree`));
  return out;
}

function quietHoursErrors(list: QuietHoursInterval[] | undefined, at: PathPart[]): FieldError[] {
  if (list === undefined) return [];
  if (list.length > LIMITS.quietHours) return [err(at, `at most ${LIMITS.quietHours} intervals`)];
  const out: FieldError[] = [];
  list.forEach((q, i) => {
    const start = parseClock(q.start);
    const end = parseClock(q.end);
    if (start === undefined || start === 24 * 60) out.push(err([...at, i, 'start'], 'must be HH:MM, 00:00–23:59'));
    if (end === undefined || end === 0) out.push(err([...at, i, 'end'], 'must be HH:MM, 00:01–24:00'));
    else if (start === end) out.push(err([...at, i, 'end'], 'equals start: write 00:00–24:00 for a whole day'));
    try {
      parseDays(q.days);
    } catch (e) {
      out.push(err([...at, i, 'days'], (e as Error).message));
    }
  });
  if (!out.length && coversWholeWeek(parseQuietHours(list)))
    out.push(err(at, 'cover the whole week: tier 2 messages would never be sent'));
  return out;
}

function digestErrors(d: NotificationDigest | undefined, policyZone: string | undefined, at: PathPart[]) {
  if (d === undefined) return [];
  const out: FieldError[] = [];
  if (d.timeZone !== undefined && !isTimeZone(d.timeZone))
    out.push(err([...at, 'timeZone'], `"${d.timeZone}" is not an IANA time zone like Europe/Berlin`));
  const zone = [d.timeZone, policyZone].find((z) => z !== undefined && isTimeZone(z)) ?? DEFAULT_TIME_ZONE;
  const schedule = d.schedule === undefined ? undefined : digestScheduleProblem(d.schedule, zone);
  if (schedule) out.push(err([...at, 'schedule'], schedule));
  out.push(...listErrors(d.channels, LIMITS.channels, [...at, 'channels'], channelProblem));
  const [least, most] = LIMITS.digestLength;
  if (d.maxLength !== undefined && (!Number.isInteger(d.maxLength) || d.maxLength < least || d.maxLength > most))
    out.push(err([...at, 'maxLength'], `must be a whole number from ${least} to ${most}`));
  const llm = d.llm;
  if (llm && (llm.backend === 'openai' || llm.backend === 'anthropic') && !llm.model)
    out.push(err([...at, 'llm', 'model'], `is required for the ${llm.backend} backend`));
  if (llm?.backend === 'command' && !llm.command?.length)
    out.push(err([...at, 'llm', 'command'], 'is required for the command backend'));
  if (llm?.timeout !== undefined && (typeof llm.timeout !== 'string' || !isGoDuration(llm.timeout)))
    out.push(err([...at, 'llm', 'timeout'], `"${llm.timeout}" is not a duration like 30s`));
  return out;
}

/** Everything wrong with a NotificationPolicy spec, each error naming its path under `spec`. */
export function validateNotificationPolicy(spec: NotificationPolicySpec): FieldError[] {
  const at: PathPart[] = ['spec'];
  const out: FieldError[] = [];
  if (!spec.route || typeof spec.route !== 'object') out.push(err([...at, 'route'], 'is required'));
  else out.push(...routeErrors(spec.route, [...at, 'route'], 0, { n: 0 }));
  if (spec.timeZone !== undefined && !isTimeZone(spec.timeZone))
    out.push(err([...at, 'timeZone'], `"${spec.timeZone}" is not an IANA time zone like Europe/Berlin`));
  out.push(...quietHoursErrors(spec.quietHours, [...at, 'quietHours']));
  const b = spec.dailyBudget;
  if (b !== undefined && (!Number.isInteger(b) || b < 0 || b > LIMITS.dailyBudget))
    out.push(err([...at, 'dailyBudget'], `must be a whole number from 0 to ${LIMITS.dailyBudget}`));
  out.push(...durationErrors(spec.batchInterval, 'batchInterval', at));
  out.push(...digestErrors(spec.digest, spec.timeZone, [...at, 'digest']));
  if (spec.inhibit !== undefined && spec.inhibit.length > LIMITS.inhibit)
    out.push(err([...at, 'inhibit'], `at most ${LIMITS.inhibit} rules`));
  (spec.inhibit ?? []).slice(0, LIMITS.inhibit).forEach((rule, i) => {
    const p = [...at, 'inhibit', i];
    if (!rule.sourceMatchers?.length) out.push(err([...p, 'sourceMatchers'], 'needs at least one matcher'));
    if (!rule.targetMatchers?.length) out.push(err([...p, 'targetMatchers'], 'needs at least one matcher'));
    out.push(
      ...listErrors(rule.sourceMatchers, LIMITS.matchers, [...p, 'sourceMatchers'], matcherProblem),
      ...listErrors(rule.targetMatchers, LIMITS.matchers, [...p, 'targetMatchers'], matcherProblem),
      ...listErrors(rule.equal, LIMITS.groupBy, [...p, 'equal'], fieldProblem),
    );
  });
  return out;
}

/** Everything wrong with a silence's spec. Like Alertmanager, one matcher must not match "". */
export function validateSilence(spec: SilenceSpec): FieldError[] {
  const at: PathPart[] = ['spec'];
  const out = listErrors(spec.matchers, LIMITS.matchers, [...at, 'matchers'], matcherProblem);
  if (!out.length && !spec.matchers?.some((t) => !compileMatcher(t).test('')))
    out.push(err([...at, 'matchers'], 'at least one matcher must not match the empty string (it would mute all)'));
  const starts = Date.parse(spec.startsAt);
  const ends = Date.parse(spec.endsAt);
  if (Number.isNaN(starts)) out.push(err([...at, 'startsAt'], 'must be an RFC 3339 time'));
  if (Number.isNaN(ends)) out.push(err([...at, 'endsAt'], 'must be an RFC 3339 time'));
  else if (ends <= starts) out.push(err([...at, 'endsAt'], 'must be after startsAt'));
  else if (ends - starts > LIMITS.silenceLengthMs) out.push(err([...at, 'endsAt'], 'at most 366 days after startsAt'));
  return out;
}
