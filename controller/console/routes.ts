/** The console's pages and their actions (every state change a POST with the CSRF token: security.ts). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { registry } from '../config/crds.js';
import type { Decision } from '../api/autopilot.js';
import { rows as tableRows, header } from '../cli/printers/columns.js';
import { freezeAction, verdictAction } from './actions.js';
import { boardRows, parseFilter, BOARD_COLUMNS } from './board.js';
import { actionForm, esc, page, pathOf, table } from './html.js';
import { MAX_STREAMS, sortSessions } from './hub.js';
import type { Ctx } from './ctx.js';
import { registerSessionPage } from './session-page.js';
import { registerLists } from './lists.js';
import { registerDigestPage } from './digest-page.js';
import { done, flashOf } from './flash.js';

type Body = Record<string, string | undefined>;

const gzipped = promisify(gzip);

/** HTML gzip-compressed when the browser takes it: the board of 1000 sessions is ~200 kB, ~10 times less so. */
async function sendHtml(req: FastifyRequest, reply: FastifyReply, html: string): Promise<FastifyReply> {
  reply.type('text/html').header('vary', 'accept-encoding');
  if (!/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.send(html);
  return reply.header('content-encoding', 'gzip').send(await gzipped(html));
}
type NsName = { Params: { ns: string; name: string }; Body: Body };

function filterForm(f: { project?: string; phase?: string; label?: string }): string {
  const input = (n: string, v: string | undefined, ph: string) =>
    `<input name="${n}" value="${esc(v ?? '')}" placeholder="${ph}" aria-label="${n}">`;
  return (
    `<form method="get" action="/" class="filters">${input('project', f.project, 'project')}` +
    `${input('phase', f.phase, 'phase')}${input('label', f.label, 'label selector, e.g. team=web')}` +
    '<button>Filter</button></form>'
  );
}

function boardPage(ctx: Ctx, req: FastifyRequest<{ Querystring: Record<string, string> }>): string {
  const { filter, match } = parseFilter(req.query);
  const items = boardRows(sortSessions(ctx.hub.sessions.list().filter(match)));
  const head = ['NAME', ...BOARD_COLUMNS];
  const body = items.map((r) => [
    { html: `<a href="/sessions/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}">${esc(r.name)}</a>` },
    ...BOARD_COLUMNS.map((c) => r.cells[c]),
  ]);
  const version = ctx.hub.version; // read with the list above, in the same tick
  const query = Object.entries(filter).filter(([, v]) => v) as [string, string][];
  const qs = new URLSearchParams([...query, ['since', version]]).toString();
  const csrf = ctx.login(req).csrf;
  const freeze =
    '<details class="freeze"><summary>Freeze / thaw</summary>' +
    actionForm('/freeze', csrf, 'Freeze', freezeFields(), 'danger') +
    actionForm('/thaw', csrf, 'Thaw', freezeFields()) +
    '</details>';
  return page(
    { title: 'Sessions', csrf, flash: flashOf(ctx, req) },
    `${filterForm(filter)}<p class="count"><span id="count">${items.length}</span> sessions</p>` +
      table(
        head,
        body,
        `id="board" data-stream="/stream/board?${qs}"`,
        items.map((r) => r.key),
      ) +
      freeze,
  );
}

function freezeFields(): string {
  return (
    '<select name="scope" aria-label="what"><option value="projects">projects</option>' +
    '<option value="selector">sessions matching a label selector</option>' +
    '<option value="all">everything in the namespace</option></select>' +
    '<input name="target" placeholder="projects (a b c) or selector" aria-label="target">' +
    '<input name="namespace" placeholder="namespace (default)" aria-label="namespace">' +
    '<input name="message" placeholder="why" aria-label="why" maxlength="300">'
  );
}

function decisionsPage(ctx: Ctx, req: FastifyRequest): string {
  const kind = registry().resolve('decision');
  const all = ctx.hub.decisions.list();
  const pending = (d: Decision) => (d.status?.phase === 'PendingApproval' && !d.spec?.approval ? 0 : 1);
  all.sort(
    (a, b) =>
      pending(a) - pending(b) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
  );
  const csrf = ctx.login(req).csrf;
  // The answer right after the name: on a phone the rest of the row is a sideways scroll away.
  const [nameHead, ...restHead] = header(kind, {});
  const head = [nameHead, 'ANSWER', 'NAMESPACE', ...restHead];
  const cells = tableRows(kind, all, {});
  const body = all.map((d, i) => {
    const base = `/decisions/${pathOf(d.metadata.namespace ?? 'default', d.metadata.name)}`;
    const reason = '<input name="reason" placeholder="reason" aria-label="reason" maxlength="1000">';
    const answer = pending(d)
      ? d.spec?.approval
        ? `${d.spec.approval.verdict} by ${d.spec.approval.by ?? '?'}`
        : ''
      : actionForm(`${base}/approve`, csrf, 'Approve', reason) +
        actionForm(`${base}/reject`, csrf, 'Reject', reason, 'danger');
    const [name, ...rest] = cells[i];
    return [name, pending(d) ? answer : { html: answer }, d.metadata.namespace ?? 'default', ...rest];
  });
  return page({ title: 'Decisions', csrf, flash: flashOf(ctx, req) }, table(head, body, 'id="decisions"'));
}

export function registerPages(app: FastifyInstance, ctx: Ctx): void {
  app.get('/healthz', async () => 'ok\n');
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).send());
  app.get<{ Querystring: Record<string, string> }>('/', async (req, reply) =>
    sendHtml(req, reply, boardPage(ctx, req)),
  );
  app.get<{ Querystring: Record<string, string> }>('/stream/board', async (req, reply) => {
    const { match } = parseFilter(req.query);
    if (ctx.hub.streams >= MAX_STREAMS) return reply.code(503).send('too many open pages\n');
    reply.hijack();
    const since = typeof req.query.since === 'string' && req.query.since.length <= 64 ? req.query.since : undefined;
    ctx.hub.subscribe(reply.raw, match, since);
  });
  app.get('/decisions', async (req, reply) => reply.type('text/html').send(decisionsPage(ctx, req)));
  for (const verdict of ['Approved', 'Rejected'] as const)
    app.post<NsName>(`/decisions/:ns/:name/${verdict === 'Approved' ? 'approve' : 'reject'}`, async (req, reply) => {
      const key = { namespace: req.params.ns, name: req.params.name };
      const r = await verdictAction(ctx.actor(req), key, verdict, req.body?.reason ?? '');
      return done(ctx, req, reply, r, '/decisions');
    });
  for (const verb of ['freeze', 'thaw'] as const)
    app.post<{ Body: Body }>(`/${verb}`, async (req, reply) => {
      const b = req.body ?? {};
      const target = (b.target ?? '').trim();
      const o = {
        all: b.scope === 'all',
        selector: b.scope === 'selector' ? target : undefined,
        message: b.message?.trim() || undefined,
      };
      const projects = b.scope === 'projects' ? target.split(/[\s,]+/).filter(Boolean) : [];
      const r = await freezeAction(ctx.actor(req), verb, b.namespace?.trim() || 'default', projects, o);
      return done(ctx, req, reply, r, '/');
    });
  registerSessionPage(app, ctx);
  registerLists(app, ctx);
  registerDigestPage(app, ctx);
}
