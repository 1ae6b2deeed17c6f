/**
 * The console's end of signed action links (docs/console.md "Action links"): GET /link?t=… shows
 * the Decision and a form (it changes nothing); POST /link answers it through decision-answer.ts.
 * No login is needed — the link is the credential for that one action — but the Origin check, the
 * CSP and the no-action-on-GET rule hold, and the form carries a CSRF token bound to the link.
 * The link's use is recorded on the Decision in the same compare-and-swap write as the answer, so
 * a link acts at most once, across restarts too; every refusal says why and changes nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Decision } from '../api/autopilot.js';
import { answer, VERB, type Verdict } from '../client/decision-answer.js';
import { type Change, updateWithRetry } from '../client/update.js';
import { type LinkClaims, linkCsrf, loadOrCreateLinkKey, verifyToken } from '../notify/action-links.js';
import type { AuditLog } from '../observers/audit.js';
import type { Store } from '../store/store.js';
import { sameSecret } from './auth.js';
import { esc, page } from './html.js';

/** On the Decision: the nonce of the link that answered it and when (the single-use record). */
export const LINK_USED_ANNOTATION = 'decisions.orchctl.io/answered-by-link';

const VERDICT: Record<LinkClaims['action'], Verdict> = { approve: 'Approved', reject: 'Rejected' };

/** Why a link for this Decision cannot act now, or undefined when it can. Pure. */
export function linkRefusal(d: Decision | undefined, c: LinkClaims): string | undefined {
  if (!d) return `decision "${c.name}" no longer exists`;
  const used = d.metadata.annotations?.[LINK_USED_ANNOTATION];
  if (used?.split(' ')[0] === c.nonce) return `this link was used already (${used.split(' ')[1] ?? ''})`;
  if (d.spec?.approval)
    return `decision "${c.name}" was already ${VERB[d.spec.approval.verdict]} by ${d.spec.approval.by ?? '?'}`;
  if (d.status?.phase !== 'PendingApproval')
    return `decision "${c.name}" is ${d.status?.phase ?? 'not decided yet'}: it no longer waits for an answer`;
  if (d.metadata.resourceVersion !== c.rv)
    return `decision "${c.name}" changed since this link was sent (it was superseded): answer it from the console`;
  return undefined;
}

/** The answer and the link's use as one change of the Decision (one write), or a refusal. Pure. */
export function answerByLink(d: Decision, c: LinkClaims, by: string, at: string, reason?: string): Change<Decision> {
  const why = linkRefusal(d, c);
  if (why) return { refuse: why };
  const change = answer(d, VERDICT[c.action], at, by, reason);
  if (!('write' in change)) return change;
  const annotations = { ...change.write.metadata.annotations, [LINK_USED_ANNOTATION]: `${c.nonce} ${at}` };
  return { write: { ...change.write, metadata: { ...change.write.metadata, annotations } } };
}

function describe(d: Decision): string {
  const t = d.spec?.target;
  const target = t ? `${t.session ? `session ${t.session}` : ''}${t.project ? ` (project ${t.project})` : ''}` : '';
  return (
    `<dl class="decision"><dt>Decision</dt><dd>${esc(`${d.metadata.namespace ?? 'default'}/${d.metadata.name}`)}</dd>` +
    `<dt>What</dt><dd>${esc(d.spec?.action)}</dd><dt>Target</dt><dd>${esc(target.trim())}</dd>` +
    `<dt>Reason</dt><dd>${esc(d.spec?.reason)}</dd></dl>`
  );
}

type LinkDeps = { store: Store; home: string; audit: AuditLog };
type Req = FastifyRequest<{ Querystring: { t?: string }; Body: Record<string, string | undefined> }>;

const refused = (reply: FastifyReply, why: string, code = 409) =>
  reply
    .code(code)
    .type('text/html')
    .send(
      page({ title: 'Link refused' }, `<p class="refused" id="refused">${esc(why)}</p><p>Nothing was changed.</p>`),
    );

async function show(d: LinkDeps, key: Buffer, req: Req, reply: FastifyReply) {
  const token = req.query.t ?? '';
  const v = verifyToken(key, token, Date.now());
  if (!v.ok) return refused(reply, v.why, 403);
  const c = v.claims;
  const dec = await d.store.get({ kind: 'Decision', namespace: c.namespace, name: c.name });
  const why = linkRefusal(dec, c);
  if (why) return refused(reply, why);
  const verb = c.action === 'approve' ? 'Approve' : 'Reject';
  const form =
    `<form method="post" action="/link" class="action ${c.action === 'reject' ? 'danger' : ''}" id="confirm">` +
    `<input type="hidden" name="t" value="${esc(token)}"><input type="hidden" name="_csrf" value="${esc(
      linkCsrf(key, token),
    )}"><input name="reason" placeholder="reason (optional)" aria-label="reason" maxlength="1000">` +
    `<button type="submit">${verb}</button></form>`;
  return reply.type('text/html').send(page({ title: `${verb} this decision?` }, describe(dec!) + form));
}

async function act(d: LinkDeps, key: Buffer, req: Req, reply: FastifyReply) {
  const b = req.body ?? {};
  const token = b.t ?? '';
  if (typeof b._csrf !== 'string' || !sameSecret(b._csrf, linkCsrf(key, token)))
    return refused(reply, 'the form is not from this link (CSRF token missing or wrong)', 403);
  const v = verifyToken(key, token, Date.now());
  if (!v.ok) return refused(reply, v.why, 403);
  const c = v.claims;
  const by = `link:${c.channel ?? 'notification'}`;
  const at = new Date().toISOString();
  const reason = b.reason?.trim().slice(0, 1000) || undefined;
  const o = await updateWithRetry<Decision>(d.store, { kind: 'Decision', namespace: c.namespace, name: c.name }, (x) =>
    answerByLink(x, c, by, at, reason),
  );
  const ok = o.outcome === 'written';
  const message = ok
    ? `decision ${c.name} ${VERB[VERDICT[c.action]]}`
    : o.outcome === 'missing'
      ? `decision "${c.name}" no longer exists`
      : o.why;
  d.audit.write({
    kind: 'Decision',
    namespace: c.namespace,
    name: c.name,
    to: c.action,
    reason: ok ? 'ConsoleLinkAction' : 'ConsoleLinkRefused',
    message,
    by,
    address: req.ip,
  });
  if (!ok) return refused(reply, message);
  return reply.type('text/html').send(page({ title: 'Done' }, `<p class="done" id="done">${esc(message)}</p>`));
}

/** Registers GET and POST /link (public: server.ts lets them past the login). */
export function registerLinks(app: FastifyInstance, d: LinkDeps): void {
  let key: Buffer | undefined;
  const keyOf = () => (key ??= loadOrCreateLinkKey(d.home));
  app.get('/link', async (req, reply) => show(d, keyOf(), req as Req, reply));
  app.post('/link', async (req, reply) => act(d, keyOf(), req as Req, reply));
}
