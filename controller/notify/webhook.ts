/**
 * The webhook channel: a JSON POST to a URL that is itself a secret (Slack's incoming webhooks
 * are), with an `Idempotency-Key` header receivers can deduplicate on. `format: slack` posts
 * Slack's incoming-webhook body instead of orchctl's message.
 */
import type { WebhookChannelSpec } from '../api/notification-channel.js';
import type { ChannelDriver } from './driver.js';
import { jsonPayload, slackPayload } from './format.js';
import { postHttp } from './http.js';

export const webhookDriver: ChannelDriver<WebhookChannelSpec> = {
  type: 'webhook',
  fields: ['urlFrom', 'format'],
  validate(spec) {
    if (!spec.urlFrom) return 'a webhook needs urlFrom (the URL is a secret)';
    if (spec.format !== undefined && spec.format !== 'json' && spec.format !== 'slack')
      return `format "${spec.format}" is not json or slack`;
    return undefined;
  },
  format: (spec, channel, m) => (spec.format === 'slack' ? slackPayload(m) : jsonPayload(channel, m)),
  async send(spec, ctx) {
    const { url, authorization } = ctx.secrets.readUrl('urlFrom', spec.urlFrom);
    const m = ctx.message;
    return postHttp({
      label: ctx.label,
      url,
      headers: {
        'content-type': 'application/json',
        'idempotency-key': m.idempotencyKey,
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify(webhookDriver.format(spec, ctx.name, m)),
      timeoutMs: ctx.timeoutMs,
      signal: ctx.signal,
    });
  },
};
