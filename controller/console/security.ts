/**
 * The checks in front of every console request: security headers (a strict Content-Security-Policy:
 * scripts and styles only from the console itself, no inline script), the Host a loopback console
 * answers to (no DNS rebinding), the Origin of a POST (no cross-site request), the login cookie,
 * and the CSRF token every POST carries.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Login, type Logins, sameSecret } from './auth.js';

export const COOKIE = 'orchctl_console';

/**
 * xterm.js writes its colours into a <style> element it creates, so styles allow 'unsafe-inline';
 * scripts never do.
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function securityHeaders(reply: FastifyReply, tls: boolean): void {
  reply.header('content-security-policy', CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  // same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` with a form's POST.
  reply.header('referrer-policy', 'same-origin');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cache-control', 'no-store');
  if (tls) reply.header('strict-transport-security', 'max-age=31536000');
}

/**
 * Why a state-changing request comes from another site, or undefined when it does not. `external`:
 * the origin of --external-url (a TLS reverse proxy in front), which is the console's too.
 */
export function crossOrigin(req: FastifyRequest, tls: boolean, external?: string): string | undefined {
  const origin = req.headers.origin;
  const expected = `${tls ? 'https' : 'http'}://${req.headers.host ?? ''}`;
  if (origin !== undefined)
    return origin === expected || origin === external ? undefined : `Origin ${origin} is not ${expected}`;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site is ${site}`;
  return undefined;
}

/** The loopback names a console bound to 127.0.0.1 / ::1 answers to; undefined: any (bound beyond loopback). */
export function loopbackHosts(host: string, port: number): Set<string> | undefined {
  if (!/^(127\.\d+\.\d+\.\d+|::1|localhost)$/.test(host)) return undefined;
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`]);
}

/** The login of this request's cookie, if any. */
export function loginOf(req: FastifyRequest, logins: Logins): Login | undefined {
  return logins.get(req.cookies[COOKIE]);
}

/** Whether a POST carries its login's CSRF token (a form's `_csrf` field or the X-CSRF-Token header). */
export function csrfOk(req: FastifyRequest, login: Login): boolean {
  const body = req.body as Record<string, unknown> | undefined;
  const given = req.headers['x-csrf-token'] ?? body?._csrf;
  return typeof given === 'string' && sameSecret(given, login.csrf);
}
