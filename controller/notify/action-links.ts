/**
 * Signed action links (docs/console.md "Action links"): a Decision's notification carries an
 * approve and a reject link to the console's configured external URL. A link is a token signed
 * with HMAC-SHA256 under a key created at first use ($ORCHCTL_HOME/action-link-key, 0600; never in
 * an object, Event, log or error). The token names the Decision, the action, the Decision's
 * resourceVersion when minted, an expiry and a random nonce. Checking one (verifyLink) is pure;
 * the single use is recorded on the Decision, in the same write as the answer (console/links.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseDuration } from '../api/duration.js';

export const LINK_KEY_FILE = 'action-link-key';
export const DEFAULT_LINK_TTL_MS = 3_600_000;
/** --link-ttl's bounds: long enough to read a message, short enough that an old mail is harmless. */
export const MIN_LINK_TTL_MS = 60_000;
export const MAX_LINK_TTL_MS = 24 * 3_600_000;
/** The path a link opens on the console. */
export const LINK_PATH = '/link';
const MAX_TOKEN = 1024;

export type LinkAction = 'approve' | 'reject';

export interface LinkClaims {
  namespace: string;
  name: string;
  action: LinkAction;
  /** The Decision's resourceVersion when the link was minted. */
  rv: string;
  /** Expiry, milliseconds since the epoch. */
  exp: number;
  nonce: string;
  /** The channel the link was sent through (the audit log's `link:<channel>`). */
  channel?: string;
}

/** The key file's key, created (0600, exclusively, so two processes never disagree) when there is none. */
export function loadOrCreateLinkKey(home: string): Buffer {
  const file = path.join(home, LINK_KEY_FILE);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const mode = fs.statSync(file).mode & 0o077;
  if (mode) throw new Error(`${file} is readable by others (mode ${(mode | 0o600).toString(8)}): chmod 600 it`);
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64url');
  if (key.length < 32)
    throw new Error(`${file}: the key is shorter than 32 bytes; delete the file to create a new one`);
  return key;
}

/** `--link-ttl`: milliseconds within the bounds, the default when not given; throws naming the flag. */
export function parseLinkTtl(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LINK_TTL_MS;
  const ms = parseDuration(text);
  if (!(ms >= MIN_LINK_TTL_MS && ms <= MAX_LINK_TTL_MS)) throw new Error(`--link-ttl ${text}: must be 1m to 24h`);
  return ms;
}

const sign = (key: Buffer, payload: string) => crypto.createHmac('sha256', key).update(payload).digest('base64url');

/** A token for these claims: `v1.<payload>.<signature>`, all base64url (safe in a URL, an ntfy header). */
export function mintToken(key: Buffer, c: LinkClaims): string {
  const payload = Buffer.from(
    JSON.stringify({ ns: c.namespace, n: c.name, a: c.action, rv: c.rv, exp: c.exp, nonce: c.nonce, ch: c.channel }),
  ).toString('base64url');
  return `v1.${payload}.${sign(key, `v1.${payload}`)}`;
}

export type Verified = { ok: true; claims: LinkClaims } | { ok: false; why: string };

/** The token's claims when its signature holds and it has not expired; else why not. Pure. */
export function verifyToken(key: Buffer, token: string, now: number): Verified {
  const bad = { ok: false as const, why: 'the link is not valid: it was changed or not made by this orchctl' };
  if (typeof token !== 'string' || token.length > MAX_TOKEN) return bad;
  const [v, payload, sig, ...rest] = token.split('.');
  if (v !== 'v1' || !payload || !sig || rest.length) return bad;
  const want = Buffer.from(sign(key, `v1.${payload}`));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return bad;
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return bad;
  }
  const { ns, n, a, rv, exp, nonce, ch } = p;
  if (typeof ns !== 'string' || typeof n !== 'string' || (a !== 'approve' && a !== 'reject')) return bad;
  if (typeof rv !== 'string' || typeof exp !== 'number' || typeof nonce !== 'string') return bad;
  if (now >= exp) return { ok: false, why: `the link expired at ${new Date(exp).toISOString()}` };
  const channel = typeof ch === 'string' ? ch : undefined;
  return { ok: true, claims: { namespace: ns, name: n, action: a, rv, exp, nonce, ...(channel ? { channel } : {}) } };
}

/** A CSRF token for the confirmation form, bound to the link's token (nothing to keep per visitor). */
export function linkCsrf(key: Buffer, token: string): string {
  return sign(key, `csrf.${token}`);
}

/** Mints the approve and reject links for a Decision at `resourceVersion`, under `base` (the external URL). */
export function decisionLinks(
  key: Buffer,
  base: URL,
  d: { namespace: string; name: string; resourceVersion: string },
  ttlMs: number,
  now: number,
  channel?: string,
): { action: LinkAction; label: string; url: string }[] {
  return (['approve', 'reject'] as const).map((action) => {
    const token = mintToken(key, {
      namespace: d.namespace,
      name: d.name,
      action,
      rv: d.resourceVersion,
      exp: now + ttlMs,
      nonce: crypto.randomBytes(16).toString('base64url'),
      ...(channel ? { channel } : {}),
    });
    const url = new URL(LINK_PATH, base);
    url.searchParams.set('t', token);
    return { action, label: action === 'approve' ? 'Approve' : 'Reject', url: url.href };
  });
}
