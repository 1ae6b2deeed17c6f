/**
 * The pages that list one kind as `orchctl get -o wide` does (the same printer columns): pipelines,
 * with a Resume box on each blocked one, nodes, the notifications outbox, and silences (create, expire).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registry } from '../config/crds.js';
import { isKind } from '../api/kinds.js';
import type { Pipeline } from '../api/pipeline.js';
import type { Resource } from '../api/types.js';
import { header, rows } from '../cli/printers/columns.js';
import { resumeAction, silenceCreateAction, silenceExpireAction } from './actions.js';
import type { Ctx } from './ctx.js';
import { done, flashOf } from './flash.js';
import { actionForm, esc, page, pathOf, table } from './html.js';

type NsName = { Params: { ns: string; name: string }; Body: Record<string, string | undefined> };

const byName = (a: Resource, b: Resource) =>
  `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name}`);

/** A table of every object of `kind` (all namespaces), with an optional last cell of trusted HTML. */
async function kindTable(ctx: Ctx, kind: string, extra?: (o: Resource) => string): Promise<string> {
  const info = registry().resolve(kind);
  const items = (await ctx.store.list(info.kind)).items.sort(byName);
  const opts = { wide: true, allNamespaces: true };
  const head = [...header(info, opts), ...(extra ? [''] : [])];
  const cells = rows(info, items, opts);
  const body = items.map((o, i) => [...cells[i], ...(extra ? [{ html: extra(o) }] : [])]);
  return items.length ? table(head, body, `id="${esc(info.plural)}"`) : `<p>No ${esc(info.plural)}.</p>`;
}

const blocked = (p: Pipeline) => (p.status?.phases ?? []).some((x) => x.state === 'Blocked');

async function pipelinesPage(ctx: Ctx, req: FastifyRequest): Promise<string> {
  const csrf = ctx.login(req).csrf;
  const resume = (o: Resource) => {
    if (!isKind(o, 'Pipeline') || !blocked(o)) return ''; // o is one: the table lists Pipelines
    const box =
      '<input name="message" placeholder="what to tell the blocked agent" aria-label="message" maxlength="4000">';
    return actionForm(
      `/pipelines/${pathOf(o.metadata.namespace ?? 'default', o.metadata.name)}/resume`,
      csrf,
      'Resume',
      box,
    );
  };
  return page({ title: 'Pipelines', csrf, flash: flashOf(ctx, req) }, await kindTable(ctx, 'pipeline', resume));
}

const SILENCE_FORM =
  '<textarea name="matchers" rows="2" required aria-label="matchers" ' +
  'placeholder="one matcher a line: reason=Stalled, involvedObject.name=~fix-.*"></textarea>' +
  '<input name="for" required placeholder="for: 2h, 90m, 3d" aria-label="for" maxlength="20">' +
  '<input name="comment" placeholder="why" aria-label="comment" maxlength="1000">' +
  '<input name="namespace" placeholder="namespace (default)" aria-label="namespace">';

async function silencesPage(ctx: Ctx, req: FastifyRequest): Promise<string> {
  const csrf = ctx.login(req).csrf;
  const expire = (o: Resource) => {
    if (!isKind(o, 'Silence') || !o.spec || Date.parse(o.spec.endsAt) <= Date.now()) return ''; // lists Silences
    return actionForm(`/silences/${pathOf(o.metadata.namespace ?? 'default', o.metadata.name)}/expire`, csrf, 'Expire');
  };
  return page(
    { title: 'Silences', csrf, flash: flashOf(ctx, req) },
    `${await kindTable(ctx, 'silence', expire)}<h2>New silence</h2>` +
      actionForm('/silences', csrf, 'Create silence', SILENCE_FORM, 'silence'),
  );
}

function registerSilences(app: FastifyInstance, ctx: Ctx): void {
  app.get('/silences', async (req, reply) => reply.type('text/html').send(await silencesPage(ctx, req)));
  app.post<{ Body: Record<string, string | undefined> }>('/silences', async (req, reply) => {
    const b = req.body ?? {};
    const matchers = (b.matchers ?? '')
      .split('\n')
      .map((m) => m.trim())
      .filter(Boolean);
    const o = { for: b.for?.trim() || undefined, comment: b.comment?.trim() || undefined };
    const r = await silenceCreateAction(ctx.actor(req), b.namespace?.trim() || 'default', matchers, o);
    return done(ctx, req, reply, r, '/silences');
  });
  app.post<NsName>('/silences/:ns/:name/expire', async (req, reply) => {
    const key = { namespace: req.params.ns, name: req.params.name };
    return done(ctx, req, reply, await silenceExpireAction(ctx.actor(req), key), '/silences');
  });
}

export function registerLists(app: FastifyInstance, ctx: Ctx): void {
  registerSilences(app, ctx);
  app.get('/pipelines', async (req, reply) => reply.type('text/html').send(await pipelinesPage(ctx, req)));
  app.post<NsName>('/pipelines/:ns/:name/resume', async (req, reply) => {
    const key = { namespace: req.params.ns, name: req.params.name };
    return done(ctx, req, reply, await resumeAction(ctx.actor(req), key, req.body?.message ?? ''), '/pipelines');
  });
  for (const [url, title, kind] of [
    ['/nodes', 'Nodes', 'node'],
    ['/notifications', 'Notifications', 'notification'],
  ] as const)
    app.get(url, async (req, reply) => {
      const csrf = ctx.login(req).csrf;
      return reply.type('text/html').send(page({ title, csrf }, await kindTable(ctx, kind)));
    });
}
