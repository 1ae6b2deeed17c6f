/**
 * What each channel sends, built from a message (pure: no I/O). Every text is bounded here, so a
 * message made from a long Event or a huge digest still fits what the destination accepts: Slack's
 * block limits, ntfy's 4 KiB message, a sane email and stdin size. Text from Events is untrusted:
 * Slack mrkdwn gets `& < >` escaped (no `<!channel>`, no disguised links), headers get one line of
 * printable text (RFC 2047 words for the rest), argv substitution happens in one pass.
 */
import { createHash } from 'node:crypto';
import {
  type NotificationLink,
  type NotificationEventRef,
  type NotificationMessage,
  type NotificationTier,
  TIER_NAMES,
} from '../api/notification-channel.js';

export const MAX_TITLE = 250;
export const MAX_BODY = 16 * 1024;
export const MAX_EVENTS = 20;
const MAX_EVENT_MESSAGE = 500;
const MAX_LINK = 2000;
/** Slack: a header block's text, a section's text. */
export const SLACK_HEADER_MAX = 150;
export const SLACK_SECTION_MAX = 3000;
/** ntfy turns a longer message into an attachment (or refuses it): stay under. */
export const NTFY_MESSAGE_MAX_BYTES = 4096;

/** ntfy priorities 1 (min) … 5 (urgent/max) for each tier. */
export const NTFY_PRIORITY: Record<NotificationTier, number> = { 1: 5, 2: 4, 3: 2, 4: 1 };
/** ntfy turns tags that are emoji short codes into emoji in front of the title. */
const NTFY_TIER_TAG: Record<NotificationTier, string> = { 1: 'rotating_light', 2: 'bell', 3: 'memo', 4: 'mag' };
const EMAIL_PRIORITY: Record<NotificationTier, 'high' | 'normal' | 'low'> = {
  1: 'high',
  2: 'normal',
  3: 'low',
  4: 'low',
};

const ELLIPSIS = '…';

/** At most `max` UTF-16 units, ending in … when cut (never inside a surrogate pair). */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = s.slice(0, Math.max(0, max - 1));
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut + ELLIPSIS;
}

/** At most `max` bytes of UTF-8, ending in … when cut (never inside a character). */
export function clipBytes(s: string, max: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= max) return s;
  const head = new TextDecoder('utf-8').decode(buf.subarray(0, Math.max(0, max - 3)));
  return head.replace(/\uFFFD$/, '') + ELLIPSIS;
}

/** One line of text: line breaks and tabs become spaces, other control characters go. */
export function oneLine(s: string): string {
  return s
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
}

/** Text with control characters other than line breaks and tabs removed (NUL breaks argv and env). */
function printable(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

/** The link when it is an http(s) URL of sane length, else nothing. */
export function safeLink(link: string | undefined): string | undefined {
  if (!link || link.length > MAX_LINK) return undefined;
  try {
    const u = new URL(link);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** The message's action links that are http(s) URLs of sane length (at most two: approve, reject). */
export function safeActions(m: NotificationMessage): NotificationLink[] {
  return (m.actions ?? []).slice(0, 2).flatMap((a) => {
    const url = safeLink(a.url);
    return url ? [{ action: a.action, label: clip(oneLine(a.label), 40), url }] : [];
  });
}

function boundedEvents(events: NotificationEventRef[] | undefined): NotificationEventRef[] {
  return (events ?? []).slice(0, MAX_EVENTS).map((e) => ({
    ...e,
    reason: clip(oneLine(e.reason), 200),
    message: clip(printable(e.message), MAX_EVENT_MESSAGE),
  }));
}

/** The message with every field bounded: what the JSON webhook posts and a command reads on stdin. */
export function jsonPayload(channel: string, m: NotificationMessage) {
  const events = boundedEvents(m.events);
  const link = safeLink(m.link);
  const actions = safeActions(m);
  return {
    idempotencyKey: m.idempotencyKey,
    channel,
    tier: m.tier,
    tierName: TIER_NAMES[m.tier],
    title: clip(oneLine(m.title), MAX_TITLE),
    body: clip(printable(m.body), MAX_BODY),
    ...(events.length ? { events, moreEvents: (m.events?.length ?? 0) - events.length } : {}),
    ...(link ? { link } : {}),
    ...(actions.length ? { actions } : {}),
  };
}

function objectName(e: NotificationEventRef): string {
  const o = e.involvedObject;
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

/** One plain-text line per Event, and how many were left out. */
function eventLines(m: NotificationMessage): string[] {
  const events = boundedEvents(m.events);
  const lines = events.map(
    (e) =>
      `- ${e.type} ${e.reason} ${objectName(e)}${e.count && e.count > 1 ? ` (x${e.count})` : ''}: ` +
      oneLine(e.message),
  );
  const more = (m.events?.length ?? 0) - events.length;
  if (more > 0) lines.push(`- … and ${more} more`);
  return lines;
}

// ---- Slack ----

/** Slack's mrkdwn control characters as entities: text can then neither mention nor link. */
export function mrkdwnEscape(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

const ESCAPED_WIDTH: Record<string, number> = { '&': 5, '<': 4, '>': 4 };

/** Escaped text of at most `max` characters after escaping (the limit Slack applies), cut before an entity. */
function escapedWithin(s: string, max: number): string {
  const out = mrkdwnEscape(s);
  if (out.length <= max) return out;
  let width = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const w = ESCAPED_WIDTH[s[i]] ?? 1;
    if (width + w > max - 1) break;
    width += w;
  }
  const head = /[\uD800-\uDBFF]$/.test(s.slice(0, i)) ? s.slice(0, i - 1) : s.slice(0, i);
  return mrkdwnEscape(head) + ELLIPSIS;
}

type SlackText = { type: 'plain_text' | 'mrkdwn'; text: string; emoji?: boolean };
type SlackButton = { type: 'button'; text: SlackText; url: string; action_id: string; style?: 'primary' | 'danger' };
type SlackBlock =
  | { type: 'header'; text: SlackText }
  | { type: 'actions'; elements: SlackButton[] }
  | { type: 'section'; text: SlackText }
  | { type: 'context'; elements: SlackText[] };

/** A Slack incoming-webhook body: `text` (the notification's fallback) and blocks. */
export function slackPayload(m: NotificationMessage): { text: string; blocks: SlackBlock[] } {
  const title = oneLine(m.title) || '(no title)';
  const tier = TIER_NAMES[m.tier];
  // A header block is plain_text, which Slack never parses: no escaping there.
  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: clip(title, SLACK_HEADER_MAX), emoji: false } },
  ];
  const body = printable(m.body).trim();
  if (body) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: escapedWithin(body, SLACK_SECTION_MAX) } });
  const events = boundedEvents(m.events);
  if (events.length) {
    const lines = events.map(
      (e) =>
        `• *${mrkdwnEscape(e.reason)}* ${mrkdwnEscape(objectName(e))}` +
        `${e.count && e.count > 1 ? ` ×${e.count}` : ''}: ${mrkdwnEscape(oneLine(e.message))}`,
    );
    const more = (m.events?.length ?? 0) - events.length;
    if (more > 0) lines.push(`… and ${more} more`);
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(lines.join('\n'), SLACK_SECTION_MAX) } });
  }
  const buttons = safeActions(m).map(
    (a): SlackButton => ({
      type: 'button',
      text: { type: 'plain_text', text: a.label, emoji: false },
      url: a.url,
      action_id: `orchctl-${a.action}`,
      style: a.action === 'approve' ? 'primary' : 'danger',
    }),
  );
  if (buttons.length) blocks.push({ type: 'actions', elements: buttons });
  const link = safeLink(m.link);
  // `|` ends a link's URL in mrkdwn and `&` must be an entity: the URL is percent-encoded and escaped.
  const linkText = link ? ` · <${mrkdwnEscape(link.replaceAll('|', '%7C'))}|open>` : '';
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `orchctl · tier ${m.tier} (${tier})${linkText}` }],
  });
  return { text: escapedWithin(`[${tier}] ${title}`, SLACK_SECTION_MAX), blocks };
}

// ---- ntfy ----

/** A header value: printable ASCII as is, anything else as an RFC 2047 word (ntfy decodes those). */
export function headerValue(s: string): string {
  const line = oneLine(s);
  if (/^[\x20-\x7e]*$/.test(line)) return line;
  return `=?UTF-8?B?${Buffer.from(line, 'utf8').toString('base64')}?=`;
}

export function ntfyRequest(
  m: NotificationMessage,
  extraTags: string[] = [],
): { headers: Record<string, string>; body: string } {
  const title = clip(oneLine(m.title), MAX_TITLE);
  const reasons = boundedEvents(m.events).map((e) => e.reason);
  const tags = [...new Set([NTFY_TIER_TAG[m.tier], ...extraTags, ...reasons])]
    .map((t) => oneLine(t).replaceAll(',', ' ').trim())
    .filter(Boolean)
    .slice(0, 8);
  const lines = eventLines(m);
  const text = [printable(m.body).trim(), lines.join('\n')].filter(Boolean).join('\n\n') || title;
  const link = safeLink(m.link);
  // "view" actions open the confirmation page; the URL is base64url and URL-safe, no `,` or `;`.
  const actions = safeActions(m)
    .filter((a) => !/[,;]/.test(a.url))
    .map((a) => `view, ${a.label.replace(/[,;]/g, ' ')}, ${a.url}`)
    .join('; ');
  return {
    headers: {
      Title: headerValue(title),
      Priority: String(NTFY_PRIORITY[m.tier]),
      Tags: headerValue(tags.join(',')),
      ...(link ? { Click: link } : {}),
      ...(actions ? { Actions: actions } : {}),
    },
    body: clipBytes(text, NTFY_MESSAGE_MAX_BYTES),
  };
}

// ---- email ----

/** The domain for Message-IDs: the sender's, else a reserved one. */
function senderDomain(from: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from.trim());
  return m ? m[1].toLowerCase() : 'orchctl.invalid';
}

/** The same key gives the same Message-ID, so a receiver (or a person) can tell a re-send. */
export function messageIdFor(idempotencyKey: string, from: string): string {
  const id = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32);
  return `<orchctl.${id}@${senderDomain(from)}>`;
}

export function emailContent(m: NotificationMessage, from: string) {
  const tier = TIER_NAMES[m.tier];
  const link = safeLink(m.link);
  const parts = [clip(printable(m.body).trim(), MAX_BODY)];
  const lines = eventLines(m);
  if (lines.length) parts.push(`Events:\n${lines.join('\n')}`);
  if (link) parts.push(`Open: ${link}`);
  const actions = safeActions(m);
  if (actions.length)
    parts.push(
      `${actions.map((a) => `${a.label}: ${a.url}`).join('\n')}\n(each link opens a page that asks you to confirm)`,
    );
  parts.push(`-- \norchctl notification, tier ${m.tier} (${tier})`);
  return {
    subject: `[orchctl ${tier}] ${clip(oneLine(m.title), MAX_TITLE)}`,
    text: `${parts.filter(Boolean).join('\n\n')}\n`,
    messageId: messageIdFor(m.idempotencyKey, from),
    priority: EMAIL_PRIORITY[m.tier],
    headers: { 'X-Orchctl-Idempotency-Key': m.idempotencyKey, 'X-Orchctl-Tier': String(m.tier) },
  };
}

// ---- command ----

/** `{{name}}` in an argument → the message's value, in one pass (a title holding `{{body}}` stays as is). */
export function commandArgs(argv: string[], m: NotificationMessage): string[] {
  const values: Record<string, string> = {
    title: clip(oneLine(m.title), MAX_TITLE),
    body: clip(printable(m.body), MAX_BODY),
    tier: String(m.tier),
    tierName: TIER_NAMES[m.tier],
    link: safeLink(m.link) ?? '',
    idempotencyKey: m.idempotencyKey,
  };
  return argv.map((a) => a.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole));
}

/** The message's fields for a command's environment (the whole message is on its stdin). */
export function commandEnv(channel: string, m: NotificationMessage): Record<string, string> {
  return {
    ORCHCTL_NOTIFICATION_CHANNEL: channel,
    ORCHCTL_NOTIFICATION_TIER: String(m.tier),
    ORCHCTL_NOTIFICATION_TIER_NAME: TIER_NAMES[m.tier],
    ORCHCTL_NOTIFICATION_TITLE: clip(oneLine(m.title), MAX_TITLE),
    ORCHCTL_NOTIFICATION_IDEMPOTENCY_KEY: m.idempotencyKey,
    // The same key under the name docs/notifications.md gives a command to deduplicate on.
    ORCHCTL_NOTIFICATION_KEY: m.idempotencyKey,
    ORCHCTL_NOTIFICATION_LINK: safeLink(m.link) ?? '',
  };
}
