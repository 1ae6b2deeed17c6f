/**
 * The web console (`orchctl console`, `orchctl controller --console-addr`): a fastify server over
 * the same store as the CLI, on 127.0.0.1 unless told otherwise. Chosen because it is kept, small,
 * and has the cookie and form plugins the console needs; the pages are server-rendered HTML with
 * one small script, so there is no build step (docs/console.md).
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import fs from 'node:fs';
import { AuditLog } from '../observers/audit.js';
import { Tmux } from '../observers/tmux.js';
import type { Store } from '../store/store.js';
import { type ConsoleToken, Logins, loadOrCreateToken, SESSION_TTL_MS, sameSecret } from './auth.js';
import { esc, page } from './html.js';
import { Hub } from './hub.js';
import { registerPages } from './routes.js';
import { registerAssets } from './assets.js';
import { registerLinks } from './links.js';
import { COOKIE, crossOrigin, csrfOk, loginOf, loopbackHosts, securityHeaders } from './security.js';
import { TerminalFeeds } from './terminal.js';
import type { Ctx } from './ctx.js';

export interface ConsoleOptions {
  store: Store;
  home: string;
  host: string;
  port: number;
  tmuxSocket: string;
  /** The URL of a reverse proxy in front (https://console.example.org): its Host and Origin are accepted too. */
  externalUrl?: string;
  /** PEM files: required to bind beyond loopback. */
  tls?: { cert: string; key: string };
  log: { info(m: string): void; warn(m: string): void };
}

export interface ConsoleServer {
  /** The console's address, e.g. http://127.0.0.1:8080 */
  url: string;
  /** The URL that logs in (the token in its fragment, which browsers never send to a server). */
  loginUrl: string;
  close(): Promise<void>;
}

/** Past the login: its page, assets, health, and action links (the link is their credential: links.ts). */
const PUBLIC = /^\/(login|assets\/|healthz$|favicon\.ico$|link(\?|$))/;

/** `hosts()`: the Host names answered to (known once listening), undefined for any. */
function guard(
  app: FastifyInstance,
  logins: Logins,
  hosts: () => Set<string> | undefined,
  tls: boolean,
  external?: URL,
): void {
  app.addHook('onRequest', async (req, reply) => {
    securityHeaders(reply, tls);
    const known = hosts();
    if (known && !known.has(req.headers.host ?? '')) return reply.code(421).send('unknown Host\n');
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST')
      return reply.code(405).send('method not allowed\n');
    if (req.method === 'POST') {
      const why = crossOrigin(req, tls, external?.origin);
      if (why) return reply.code(403).send(`cross-origin request refused: ${why}\n`);
    }
    if (PUBLIC.test(req.url) || loginOf(req, logins)) return;
    if (req.method === 'GET' && !req.headers.accept?.includes('text/event-stream')) return reply.redirect('/login');
    return reply.code(401).send('log in first\n');
  });
  app.addHook('preHandler', async (req, reply) => {
    // /link's form carries its own CSRF token, bound to the link (links.ts).
    if (req.method !== 'POST' || req.url.startsWith('/login') || req.url === '/link') return;
    const login = loginOf(req, logins);
    if (!login || !csrfOk(req, login)) return reply.code(403).send('CSRF token missing or wrong: reload the page\n');
  });
}

function loginRoutes(app: FastifyInstance, logins: Logins, token: ConsoleToken, audit: AuditLog, tls: boolean) {
  app.get('/login', async (_req, reply) => {
    const form =
      '<form method="post" action="/login" id="login"><label>Access token ' +
      '<input type="password" name="token" autocomplete="off" required></label> <button>Log in</button></form>' +
      '<p>The token is in <code>$ORCHCTL_HOME/console-token</code>; <code>orchctl console --print-url</code> ' +
      'prints a URL that logs in.</p>';
    return reply.type('text/html').send(page({ title: 'Log in' }, form));
  });
  app.post('/login', async (req, reply) => {
    const given = (req.body as Record<string, unknown> | undefined)?.token;
    const ok = typeof given === 'string' && sameSecret(given, token.token);
    audit.write({
      kind: 'Console',
      name: 'login',
      to: ok ? 'login' : 'login-refused',
      by: ok ? token.name : undefined,
      address: req.ip,
    });
    if (!ok)
      return reply
        .code(401)
        .type('text/html')
        .send(page({ title: 'Log in', flash: 'wrong token' }, ''));
    const { id } = logins.create(token.name);
    const secure = tls ? '; Secure' : '';
    reply.header(
      'set-cookie',
      `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_TTL_MS / 1000}${secure}`,
    );
    return reply.redirect('/', 303);
  });
  app.post('/logout', async (req, reply) => {
    audit.write({ kind: 'Console', name: 'logout', to: 'logout', by: loginOf(req, logins)?.who, address: req.ip });
    logins.drop(req.cookies[COOKIE]);
    reply.header('set-cookie', `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
    return reply.redirect('/login', 303);
  });
}

/** --external-url (or the controller's --console-url), checked: https (or http to loopback), no path. */
export function externalUrl(text: string | undefined, flag = '--external-url'): URL | undefined {
  if (text === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`${flag} "${text}" is not a URL`);
  }
  const loopback = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/.test(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback))
    throw new Error(`${flag} "${text}" must be https:// (plain http:// only to loopback)`);
  if (u.pathname !== '/' || u.search || u.hash) throw new Error(`${flag} "${text}" must have no path`);
  return u;
}

/** Starts the console; resolves once it listens. */
export async function startConsole(o: ConsoleOptions): Promise<ConsoleServer> {
  const remote = !loopbackHosts(o.host, 0);
  let hosts: Set<string> | undefined;
  if (remote && !o.tls)
    throw new Error(`the console binds beyond loopback (${o.host}) only with TLS: give --tls-cert and --tls-key`);
  const token = loadOrCreateToken(o.home);
  const tls = o.tls && { cert: fs.readFileSync(o.tls.cert), key: fs.readFileSync(o.tls.key) };
  const app: FastifyInstance = tls
    ? (Fastify({ https: tls, bodyLimit: 256 * 1024 }) as unknown as FastifyInstance)
    : Fastify({ bodyLimit: 256 * 1024 });
  await app.register(cookie);
  await app.register(formbody);
  const logins = new Logins();
  const audit = new AuditLog(o.home);
  const hub = new Hub(o.store, (m) => o.log.warn(`console: ${m}`));
  const terminals = new TerminalFeeds();
  const tmux = new Tmux(o.tmuxSocket);
  const external = externalUrl(o.externalUrl);
  guard(app, logins, () => hosts, !!tls, external);
  loginRoutes(app, logins, token, audit, !!tls);
  registerAssets(app);
  registerLinks(app, { store: o.store, home: o.home, audit });
  const ctx: Ctx = {
    store: o.store,
    home: o.home,
    hub,
    terminals,
    login: (req) => loginOf(req, logins)!,
    actor: (req) => ({ store: o.store, tmux, audit, who: loginOf(req, logins)!.who, address: req.ip }),
  };
  registerPages(app, ctx);
  app.setErrorHandler((e: Error & { statusCode?: number }, _req, reply: FastifyReply) => {
    const code = e.statusCode && e.statusCode < 500 ? e.statusCode : 500;
    reply
      .code(code)
      .type('text/html')
      .send(page({ title: 'Error' }, `<p>${esc(e.message)}</p>`));
  });
  await hub.start();
  await app.listen({ host: o.host, port: o.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  hosts = loopbackHosts(o.host, port);
  if (hosts && external) hosts.add(external.host);
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `${tls ? 'https' : 'http'}://${host}:${port}`;
  if (remote) o.log.warn(`the console listens beyond loopback on ${url}: anyone who can reach it can try the token`);
  return {
    url,
    loginUrl: `${external ? external.origin : url}/login#token=${token.token}`,
    close: async () => {
      hub.stop();
      terminals.stop();
      await app.close();
      audit.close();
    },
  };
}
