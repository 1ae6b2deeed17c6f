/**
 * The webhook channel: a JSON POST to a URL that is itself a secret (Slack's incoming webhooks
 * are), with an `Idempotency-Key` header receivers can deduplicate on. `format: slack` posts
 * Slack's incoming-webhook body instead of orchctl's message.
 */
import type { WebhookChannelSpec } from '../api/notification-channel.js';
import type { SendContext } from './context.js';
import { jsonPayload, slackPayload } from './format.js';
import { postHttp } from './http.js';

export async function sendWebhook(spec: WebhookChannelSpec, ctx: SendContext) {
  const { url, authorization } = ctx.secrets.readUrl('urlFrom', spec.urlFrom);
  const m = ctx.message;
  const payload = spec.format === 'slack' ? slackPayload(m) : jsonPayload(ctx.name, m);
  return postHttp({
    label: ctx.label,
    url,
    headers: {
      'content-type': 'application/json',
      'idempotency-key': m.idempotencyKey,
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify(payload),
    timeoutMs: ctx.timeoutMs,
    signal: ctx.signal,
  });
}
