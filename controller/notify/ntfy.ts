/**
 * The ntfy channel: the message as the body of a POST to the topic's URL, the title, tier
 * priority (1 → 5 urgent … 4 → 1 min) and tags in ntfy's headers, an optional access token as a
 * Bearer header. The topic URL is a secret (`urlFrom`) or a `server` and `topic` in the object.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import type { NtfyChannelSpec } from '../api/notification-channel.js';
import type { SendContext } from './context.js';
import type { ChannelDriver } from './driver.js';
import { ntfyRequest } from './format.js';
import { postHttp } from './http.js';
import { ChannelConfigError } from './result.js';

const TOPIC = /^[-_A-Za-z0-9]{1,64}$/;

function plaintextToAnotherHost(url: string): boolean {
  try {
    return !!plaintextRefusal(new URL(url));
  } catch {
    return false;
  }
}

function topicUrl(spec: NtfyChannelSpec, ctx: SendContext): { url: URL; authorization?: string } {
  if (spec.urlFrom) return ctx.secrets.readUrl('urlFrom', spec.urlFrom);
  if (!spec.server || !spec.topic) throw new ChannelConfigError('needs urlFrom, or server and topic');
  try {
    return { url: new URL(`${spec.server.replace(/\/+$/, '')}/${encodeURIComponent(spec.topic)}`) };
  } catch {
    throw new ChannelConfigError('server is not a URL');
  }
}

export const ntfyDriver: ChannelDriver<NtfyChannelSpec, ReturnType<typeof ntfyRequest>> = {
  type: 'ntfy',
  fields: ['urlFrom', 'server', 'topic', 'tokenFrom', 'tags'],
  validate(spec) {
    if (spec.urlFrom) return spec.server || spec.topic ? 'urlFrom replaces server and topic' : undefined;
    if (!spec.server || !spec.topic) return 'ntfy needs urlFrom, or server and topic';
    if (!/^https?:\/\//.test(spec.server)) return 'server must be an http(s) URL';
    if (spec.tokenFrom && plaintextToAnotherHost(spec.server))
      return 'server is plain http:// to another host: the token (tokenFrom) would travel in clear; use https://';
    return TOPIC.test(spec.topic) ? undefined : 'topic may hold letters, digits, - and _ (at most 64)';
  },
  format: (spec, _channel, m) => ntfyRequest(m, spec.tags),
  async send(spec, ctx) {
    const target = topicUrl(spec, ctx);
    const token = spec.tokenFrom ? ctx.secrets.read('tokenFrom', spec.tokenFrom).trim() : undefined;
    const authorization = token ? `Bearer ${token}` : target.authorization;
    const { headers, body } = ntfyDriver.format(spec, ctx.name, ctx.message);
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
  },
};
