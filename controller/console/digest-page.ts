/**
 * The digest page (`/digest`): for each NotificationPolicy, what its digest would say now — the
 * preview `orchctl digest --template` prints (notify/digest/preview.ts) — with its window, its
 * channels and when the next one is due. A page load never asks an LLM (the template alone: a
 * narrative costs money and may take a minute) and writes nothing.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { NotificationPolicy } from '../api/notification.js';
import { digestDueAt, digestSettings, localTime } from '../notify/digest/index.js';
import { type DigestPreview, previewDigest } from '../notify/digest/preview.js';
import type { Ctx } from './ctx.js';
import { esc, page } from './html.js';

/** Bounds the preview's wait; the template path makes no request, so it is never reached. */
const TEMPLATE_TIMEOUT_MS = 5_000;

const keyOf = (p: NotificationPolicy) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;

/** `2026-06-01 07:00 (Europe/Paris)`, the digest's own wall clock. */
const at = (t: number | string, timeZone: string) =>
  `${localTime(typeof t === 'number' ? new Date(t).toISOString() : t, timeZone)} (${timeZone})`;

function nextDue(policy: NotificationPolicy, now: number, timeZone: string): string {
  const s = digestSettings(policy.spec!);
  const due = digestDueAt(policy, now);
  if (due === undefined) return s.enabled ? `never: the schedule "${s.schedule}" does not run` : 'off';
  const when = due <= now ? 'due now: the controller sends it on its next pass' : at(due, timeZone);
  return `${when}; schedule "${s.schedule}"`;
}

function writer(policy: NotificationPolicy): string {
  const llm = digestSettings(policy.spec!).llm;
  if (!llm || llm.backend === 'heuristic') return 'the template';
  const model = llm.model ? ` ${llm.model}` : '';
  return `the template here; the controller's digest adds a narrative by ${llm.backend}${model} on top`;
}

function field(name: string, value: string): string {
  return `<div><dt>${esc(name)}</dt><dd>${esc(value)}</dd></div>`;
}

function policySection(policy: NotificationPolicy, p: DigestPreview, now: number): string {
  const d = p.data;
  const since = p.sinceFrom === 'lastDigestAt' ? 'since the last digest' : 'no digest yet: from a day back';
  const channels = p.channels.length
    ? p.channels.map((c) => `${c.name} (${c.found ? c.type : 'not found'}, ${c.maxChars} characters)`).join(', ')
    : 'none: nothing would be sent';
  const held = d.digestItems.length;
  return (
    `<section class="digest" data-policy="${esc(keyOf(policy))}"><h2>${esc(keyOf(policy))}</h2>` +
    '<dl class="summary">' +
    field('WINDOW', `${localTime(d.since, d.timeZone)} to ${at(d.until, d.timeZone)}, ${since}`) +
    field('CHANNELS', channels) +
    field('NEXT DIGEST', nextDue(policy, now, d.timeZone)) +
    field('WRITTEN BY', writer(policy)) +
    field('HELD FOR IT', `${held} notification${held === 1 ? '' : 's'}`) +
    '</dl>' +
    `<pre class="digest">${esc(`${p.composed.title}\n\n${p.composed.body}`)}</pre></section>`
  );
}

async function digestPage(ctx: Ctx, req: FastifyRequest): Promise<string> {
  const csrf = ctx.login(req).csrf;
  const policies = (await ctx.store.list('NotificationPolicy')).items.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  if (!policies.length)
    return page(
      { title: 'Digest', csrf },
      '<p class="empty">No digest configured: the store has no NotificationPolicy. Apply one ' +
        '(<code>manifests/notifications/policy.yaml</code>) and what its digest would say shows here.</p>',
    );
  const now = Date.now();
  const sections: string[] = [];
  for (const policy of policies) {
    if (!policy.spec) continue;
    if (!digestSettings(policy.spec).enabled) {
      const key = esc(keyOf(policy));
      sections.push(
        `<section class="digest" data-policy="${key}"><h2>${key}</h2>` +
          '<p>Its digest is off (<code>spec.digest.enabled: false</code>).</p></section>',
      );
      continue;
    }
    const p = await previewDigest(ctx.store, policy, { now, template: true, timeoutMs: TEMPLATE_TIMEOUT_MS });
    sections.push(policySection(policy, p, now));
  }
  const note =
    '<p class="count">What each digest would say now, as <code>orchctl digest --template</code> prints it. ' +
    'Nothing is sent or written.</p>';
  return page({ title: 'Digest', csrf }, note + sections.join(''));
}

export function registerDigestPage(app: FastifyInstance, ctx: Ctx): void {
  app.get('/digest', async (req, reply) => reply.type('text/html').send(await digestPage(ctx, req)));
}
