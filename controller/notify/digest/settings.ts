/**
 * The digest's settings with their defaults, when the next one is due, how long a digest may be
 * on each kind of channel, and the backend that writes its narrative.
 */
import {
  DEFAULT_DIGEST_SCHEDULE,
  DEFAULT_TIME_ZONE,
  digestCron,
  type NotificationPolicy,
  type NotificationPolicySpec,
} from '../../api/notification.js';
import type { ChannelType, WebhookChannelSpec } from '../../api/notification-channel.js';
import { LlmError, type LlmBackend } from '../../llm/backend.js';
import { resolveJudgeConfig, type ResolvedJudgeConfig } from '../../llm/config.js';
import { type BackendFactoryOptions, createBackend } from '../../llm/index.js';
import { MAX_BODY, NTFY_MESSAGE_MAX_BYTES, SLACK_SECTION_MAX } from '../format.js';

export type DigestSettings = {
  enabled: boolean;
  schedule: string;
  timeZone: string;
  /** Where the digest goes: digest.channels, else the root route's. */
  channels: string[];
  maxLength?: number;
  /** The narrative's backend, its per-request time limit and retries; unset: the template alone. */
  llm?: ResolvedJudgeConfig;
};

export function digestSettings(spec: NotificationPolicySpec): DigestSettings {
  const d = spec.digest ?? {};
  return {
    enabled: d.enabled !== false,
    schedule: d.schedule ?? DEFAULT_DIGEST_SCHEDULE,
    timeZone: d.timeZone ?? spec.timeZone ?? DEFAULT_TIME_ZONE,
    channels: d.channels ?? spec.route?.channels ?? [],
    ...(d.maxLength !== undefined ? { maxLength: d.maxLength } : {}),
    ...(d.llm ? { llm: resolveJudgeConfig({ ...d.llm, enabled: true }) } : {}),
  };
}

/** With no digest recorded yet, the first covers the day before it. */
export const FIRST_DIGEST_WINDOW_MS = 24 * 3600_000;

/** Where the next digest's window starts: the last digest's `now` (status.lastDigestAt), else a day back. */
export function digestWindowStart(lastDigestAt: string | undefined, now: number): number {
  const last = Date.parse(lastDigestAt ?? '');
  return Number.isNaN(last) ? now - FIRST_DIGEST_WINDOW_MS : last;
}

/**
 * The first scheduled digest strictly after `after` (ms since the epoch), read in the digest's
 * time zone by croner: across a DST change a 07:00 digest stays at 07:00 on the wall clock, a time
 * the spring-forward skips runs at the jump, and a time that occurs twice runs once. Undefined
 * when the digest is off (or, written around validation, the schedule cannot run).
 */
export function nextDigestAt(spec: NotificationPolicySpec, after: number): number | undefined {
  const s = digestSettings(spec);
  if (!s.enabled) return undefined;
  try {
    return digestCron(s.schedule, s.timeZone).nextRun(new Date(after))?.getTime() ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * When the notifier's next digest of `policy` is due: the first scheduled time after the last
 * digest (or, before any, the policy's creation). At or before `now`: it is sent on the
 * notifier's next pass. Undefined when the digest is off.
 */
export function digestDueAt(policy: NotificationPolicy, now: number): number | undefined {
  if (!policy.spec) return undefined;
  const after = Date.parse(policy.status?.lastDigestAt ?? policy.metadata.creationTimestamp ?? '') || now;
  return nextDigestAt(policy.spec, after);
}

/**
 * Characters of digest text a channel takes, a little under where the channel itself would cut
 * (notify/format.ts clips every message to these limits as the last guard; cutting here keeps
 * the "… N more" lines):
 * - Slack: the body is one section block, whose text Slack caps at 3000 characters after `& < >`
 *   become entities: 2800 leaves room for those.
 * - ntfy: the server turns a message over 4096 bytes into an attachment: 3500 characters leave
 *   room for the non-ASCII ones (the template's own text is ASCII but for `…`).
 * - command: 4000, what the services behind apprise and similar take (Telegram 4096) and more
 *   than a desktop bubble shows.
 * - email and JSON webhook: 16000, under notify's 16 KiB body bound; a digest is read, not glanced at.
 */
export const DIGEST_MAX_CHARS = {
  slack: SLACK_SECTION_MAX - 200,
  ntfy: NTFY_MESSAGE_MAX_BYTES - 596,
  command: 4000,
  email: MAX_BODY - 384,
  webhook: MAX_BODY - 384,
} as const;

/** The digest's length limit for a channel type (a webhook with `format: slack` is Slack's). */
export function digestMaxChars(channelType: ChannelType, format?: WebhookChannelSpec['format']): number {
  if (channelType === 'webhook' && format === 'slack') return DIGEST_MAX_CHARS.slack;
  return DIGEST_MAX_CHARS[channelType] ?? DIGEST_MAX_CHARS.command;
}

/** The digest's length on one channel: the channel type's limit, or digest.maxLength when smaller. */
export function digestChannelLimit(
  s: DigestSettings,
  channel?: { spec?: { type?: ChannelType; format?: string } },
): number {
  const type = channel?.spec?.type;
  const own = type
    ? digestMaxChars(type, channel?.spec?.format as WebhookChannelSpec['format'])
    : DIGEST_MAX_CHARS.command;
  return Math.min(own, s.maxLength ?? own);
}

/** The digest's channels, each with its limit (`channel` unset: no such NotificationChannel). */
export type DigestTarget<C> = { name: string; channel?: C; maxChars: number };

/**
 * Where the digest goes and how long its one text may be: the tightest limit of its channels
 * (none at all: a command's). The notifier and `orchctl digest`'s preview both size it so.
 */
export function digestTargets<C extends { metadata: { name: string }; spec?: { type?: ChannelType; format?: string } }>(
  s: DigestSettings,
  channels: C[],
): { targets: DigestTarget<C>[]; maxChars: number } {
  const targets = s.channels.map((name) => {
    const channel = channels.find((c) => c.metadata.name === name);
    return { name, ...(channel ? { channel } : {}), maxChars: digestChannelLimit(s, channel) };
  });
  const maxChars = targets.length ? Math.min(...targets.map((t) => t.maxChars)) : digestChannelLimit(s);
  return { targets, maxChars };
}

/** A backend whose every request fails the way creating it did: the digest falls back and says why. */
function failing(name: string, e: unknown): LlmBackend {
  const err = e instanceof LlmError ? e : new LlmError('config', (e as Error)?.message ?? String(e));
  return {
    name,
    complete: async () => {
      throw err;
    },
  };
}

/**
 * The narrative's backend: none for no `llm` or the heuristic one (no model writes prose offline:
 * the template is the offline digest). Never throws: a configuration that cannot work gives a
 * backend that fails, so the digest goes out as the template with the reason.
 */
export function digestBackend(s: DigestSettings, opts: BackendFactoryOptions = {}): LlmBackend | undefined {
  if (!s.llm || s.llm.backend === 'heuristic') return undefined;
  try {
    return createBackend(s.llm, opts);
  } catch (e) {
    return failing(s.llm.backend, e);
  }
}
