/**
 * The ntfy channel: the message as the body of a POST to the topic's URL, the title, tier
 * priority (1 → 5 urgent … 4 → 1 min) and tags in ntfy's headers, an optional access token as a
 * Bearer header. The topic URL is a secret (`urlFrom`) or a `server` and `topic` in the object.
 */
import type { NtfyChannelSpec } from '../api/notification-channel.js';
import type { SendContext } from './context.js';
import { ntfyRequest } from './format.js';
import { postHttp } from './http.js';
import { ChannelConfigError } from './result.js';

function topicUrl(spec: NtfyChannelSpec, ctx: SendContext): { url: URL; authorization?: string } {
  if (spec.urlFrom) return ctx.secrets.readUrl('urlFrom', spec.urlFrom);
  if (!spec.server || !spec.topic) throw new ChannelConfigError('needs urlFrom, or server and topic');
  try {
    return { url: new URL(`${spec.server.replace(/\/+$/, '')}/${encodeURIComponent(spec.topic)}`) };
  } catch {
    throw new ChannelConfigError('server is not a URL');
  }
}

export async function sendNtfy(spec: NtfyChannelSpec, ctx: SendContext) {
  const target = topicUrl(spec, ctx);
  const token = spec.tokenFrom ? ctx.secrets.read('tokenFrom', spec.tokenFrom).trim() : undefined;
  const authorization = token ? `Bearer ${token}` : target.authorization;
  const { headers, body } = ntfyRequest(ctx.message, spec.tags);
  return postHttp({
    label: ctx.label,
    url: target.url,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'idempotency-key': ctx.message.idempotencyKey,
      ...headers,
      ...(authorization ? { authorization } : {}),
    },
    body,
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
  });
}
