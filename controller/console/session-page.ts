/**
 * A session's page: what `orchctl describe` shows (status, conditions, Events), the last output,
 * a live read-only terminal view, and the actions — send text, approve or deny a prompt, restart,
 * stop or start — each the same operation as its CLI command (actions.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fs from 'node:fs';
import { registry } from '../config/crds.js';
import type { AgentSession } from '../api/session.js';
import { describeObject } from '../cli/printers/describe.js';
import { eventsFor } from '../client/events.js';
import { outputTail } from '../observers/output.js';
import { readTail, runWorkspace } from '../observers/workspace.js';
import { desiredAction, restartAction, sendAction } from './actions.js';
import { boardRows } from './board.js';
import { MAX_STREAMS } from './hub.js';
import { actionForm, esc, page, pathOf } from './html.js';
import { done, flashOf } from './flash.js';
import type { Ctx } from './ctx.js';

type NsName = { Params: { ns: string; name: string }; Body: Record<string, string | undefined> };

/** How much of the output log the "last output" box reads. */
const LAST_OUTPUT_BYTES = 32 * 1024;

function outputFile(ctx: Ctx, s: AgentSession): string | undefined {
  const run = s.status?.run;
  return run ? runWorkspace(ctx.home, s.metadata.namespace ?? 'default', s.metadata.name, run).outputLog : undefined;
}

function lastOutput(ctx: Ctx, s: AgentSession): string {
  const file = outputFile(ctx, s);
  if (!file || !fs.existsSync(file)) return '(no output yet)';
  return outputTail(readTail(file, LAST_OUTPUT_BYTES), 40, LAST_OUTPUT_BYTES) || '(no output yet)';
}

function actions(base: string, csrf: string, s: AgentSession): string {
  const stopped = s.spec?.desiredState === 'Stopped';
  return (
    '<section class="actions">' +
    actionForm(
      `${base}/send`,
      csrf,
      'Send',
      '<textarea name="text" rows="2" placeholder="text for the agent" aria-label="text" required></textarea>',
      'send',
    ) +
    actionForm(`${base}/approve`, csrf, 'Approve prompt') +
    actionForm(`${base}/deny`, csrf, 'Deny prompt', '', 'danger') +
    actionForm(`${base}/restart`, csrf, 'Restart') +
    (stopped ? actionForm(`${base}/start`, csrf, 'Start') : actionForm(`${base}/stop`, csrf, 'Stop', '', 'danger')) +
    '</section>'
  );
}

async function sessionPage(ctx: Ctx, req: FastifyRequest<NsName>): Promise<string | undefined> {
  const { ns, name } = req.params;
  const s = await ctx.store.get({ kind: 'AgentSession', namespace: ns, name });
  if (!s) return undefined;
  const csrf = ctx.login(req).csrf;
  const base = `/sessions/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  const row = boardRows([s])[0];
  const summary = Object.entries(row.cells)
    .map(([k, v]) => `<div><dt>${esc(k)}</dt><dd data-cell="${esc(k)}">${esc(v)}</dd></div>`)
    .join('');
  const described = describeObject(registry().resolve('agentsession'), s, await eventsFor(ctx.store, s));
  return page(
    {
      title: name,
      csrf,
      flash: flashOf(ctx, req),
      scripts: ['/assets/xterm.js'],
      styles: ['/assets/xterm.css'],
    },
    `<dl class="summary" id="summary" data-stream="/stream/board?key=${esc(encodeURIComponent(`${ns}/${name}`))}">` +
      `${summary}</dl>${actions(base, csrf, s)}` +
      `<h2>Terminal</h2><div id="terminal" data-stream="/stream/terminal/${esc(pathOf(ns, name))}"></div>` +
      `<h2>Last output</h2><pre class="output">${esc(lastOutput(ctx, s))}</pre>` +
      `<h2>Status, conditions and Events</h2><pre class="describe">${esc(described)}</pre>`,
  );
}

export function registerSessionPage(app: FastifyInstance, ctx: Ctx): void {
  app.get<NsName>('/sessions/:ns/:name', async (req, reply) => {
    const html = await sessionPage(ctx, req);
    if (!html)
      return reply
        .code(404)
        .type('text/html')
        .send(page({ title: 'Not found' }, '<p>no such session</p>'));
    return reply.type('text/html').send(html);
  });
  app.get<NsName>('/stream/terminal/:ns/:name', async (req, reply) => {
    const s = ctx.hub.sessions.get(req.params.ns, req.params.name);
    const file = s && outputFile(ctx, s);
    if (!file) return reply.code(404).send('no run to show\n');
    if (ctx.terminals.viewers >= MAX_STREAMS) return reply.code(503).send('too many open terminal views\n');
    reply.hijack();
    ctx.terminals.subscribe(file, reply.raw);
  });
  const back = (req: FastifyRequest<NsName>) =>
    `/sessions/${encodeURIComponent(req.params.ns)}/${encodeURIComponent(req.params.name)}`;
  const key = (req: FastifyRequest<NsName>) => ({ namespace: req.params.ns, name: req.params.name });
  app.post<NsName>('/sessions/:ns/:name/send', async (req, reply) => {
    const r = await sendAction(ctx.actor(req), key(req), { text: req.body?.text ?? '' });
    return done(ctx, req, reply, r, back(req));
  });
  for (const verb of ['approve', 'deny'] as const)
    app.post<NsName>(`/sessions/:ns/:name/${verb}`, async (req, reply) => {
      const mode = verb === 'approve' ? ({ approve: true } as const) : ({ deny: true } as const);
      return done(ctx, req, reply, await sendAction(ctx.actor(req), key(req), mode), back(req));
    });
  app.post<NsName>('/sessions/:ns/:name/restart', async (req, reply) =>
    done(ctx, req, reply, await restartAction(ctx.actor(req), key(req)), back(req)),
  );
  for (const [verb, desired] of [
    ['stop', 'Stopped'],
    ['start', 'Running'],
  ] as const)
    app.post<NsName>(`/sessions/:ns/:name/${verb}`, async (req, reply) =>
      done(ctx, req, reply, await desiredAction(ctx.actor(req), key(req), desired), back(req)),
    );
}
