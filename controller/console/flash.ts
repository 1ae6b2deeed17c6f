/** The outcome of an action, kept on the login and shown once on the page the person is sent back to. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ActionResult } from './actions.js';
import type { Ctx } from './ctx.js';

/** Shows the action's outcome once on the page the person returns to. */
export function done(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, r: ActionResult, back: string) {
  ctx.login(req).flash = `${r.ok ? '' : 'failed: '}${r.message}`;
  return reply.redirect(back, 303);
}

export function flashOf(ctx: Ctx, req: FastifyRequest): string | undefined {
  const l = ctx.login(req);
  const f = l.flash;
  l.flash = undefined;
  return f;
}
