/**
 * The console's authentication: one random access token, created at first start in
 * $ORCHCTL_HOME/console-token (mode 0600), exchanged at login for a session cookie (HttpOnly,
 * SameSite=Strict; Secure over TLS), and a per-session CSRF token every POST must carry. Sessions
 * live in memory: a restarted console asks for the token again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface ConsoleToken {
  /** Who a request with this token is, in the audit log. */
  name: string;
  token: string;
}

export const TOKEN_FILE = 'console-token';
/** How long a login lasts. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** At most this many live logins: the oldest is dropped past it, so memory stays bounded. */
const MAX_SESSIONS = 1000;

const random = () => crypto.randomBytes(32).toString('base64url');

/** The token file's token, created (0600, exclusively, so two starts never disagree) when there is none. */
export function loadOrCreateToken(home: string): ConsoleToken {
  const file = path.join(home, TOKEN_FILE);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, `${JSON.stringify({ name: 'admin', token: random() })}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const mode = fs.statSync(file).mode & 0o077;
  if (mode) throw new Error(`${file} is readable by others (mode ${(mode | 0o600).toString(8)}): chmod 600 it`);
  let parsed: Partial<ConsoleToken>;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ConsoleToken>;
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message}); delete it to create a new token`);
  }
  if (typeof parsed.token !== 'string' || parsed.token.length < 32)
    throw new Error(`${file}: "token" must be a string of at least 32 characters`);
  if (typeof parsed.name !== 'string' || !/^[A-Za-z0-9._-]{1,63}$/.test(parsed.name))
    throw new Error(`${file}: "name" must be 1-63 letters, digits, dots, dashes or underscores`);
  return { name: parsed.name, token: parsed.token };
}

/** Equal strings, compared in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const x = crypto.createHash('sha256').update(a).digest();
  const y = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(x, y);
}

export interface Login {
  who: string;
  csrf: string;
  expires: number;
  /** The outcome of the last action, shown once on the next page. */
  flash?: string;
}

/** The logins of this console process, by session id (the cookie's value). */
export class Logins {
  private readonly byId = new Map<string, Login>();

  constructor(private readonly now: () => number = Date.now) {}

  create(who: string): { id: string; login: Login } {
    if (this.byId.size >= MAX_SESSIONS) this.byId.delete(this.byId.keys().next().value as string);
    const id = random();
    const login = { who, csrf: random(), expires: this.now() + SESSION_TTL_MS };
    this.byId.set(id, login);
    return { id, login };
  }

  get(id: string | undefined): Login | undefined {
    if (!id) return undefined;
    const l = this.byId.get(id);
    if (l && l.expires <= this.now()) {
      this.byId.delete(id);
      return undefined;
    }
    return l;
  }

  drop(id: string | undefined): void {
    if (id) this.byId.delete(id);
  }
}
