/**
 * The secrets of one send: read from the controller's environment or a file at send time (through
 * agents/env.ts, the same `valueFrom` as an Agent's env), registered with api/redact.ts so no later
 * log or status shows them, and scrubbed from the send's result text here — including values too
 * short for the global registry, and the parts of a URL a server might echo on their own.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import type { SecretSource } from '../api/notification-channel.js';
import { REDACTED, redact, registerSecret } from '../api/redact.js';
import { EnvSourceError, resolveEnv } from '../agents/env.js';
import { ChannelConfigError } from './result.js';

/** Shorter values are not scrubbed even locally: replacing "ab" everywhere would garble the text. */
const MIN_LOCAL = 4;
/** A path segment or query value this long is token-like (a Slack webhook's last segment, a topic). */
const MIN_URL_PART = 16;

export class SecretScope {
  private readonly values = new Set<string>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The secret's value; `field` names it in errors (`urlFrom`), never the value. */
  read(field: string, source: SecretSource): string {
    let value: string;
    try {
      value = resolveEnv([{ name: field, valueFrom: source }], this.env)[0].value ?? '';
    } catch (e) {
      if (e instanceof EnvSourceError) throw new ChannelConfigError(e.message);
      throw e;
    }
    this.add(value);
    if (!value.trim()) throw new ChannelConfigError(`${field}: the secret is empty`);
    return value;
  }

  /**
   * An http(s) URL held as a secret. Credentials in it (`https://user:pass@host/…`, which fetch
   * refuses) become a Basic Authorization header.
   */
  readUrl(field: string, source: SecretSource): { url: URL; authorization?: string } {
    const raw = this.read(field, source).trim();
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ChannelConfigError(`${field}: the secret is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ChannelConfigError(`${field}: the URL must be http or https`);
    this.addUrl(url);
    // The URL is the secret (a Slack webhook's path, an ntfy topic): in clear only to this host. Its host is not named.
    if (plaintextRefusal(url))
      throw new ChannelConfigError(
        `${field}: the URL is plain http:// to another host and would travel in clear; use https:// ` +
          '(only loopback may be plain http)',
      );
    let authorization: string | undefined;
    if (url.username || url.password) {
      const user = decodeURIComponent(url.username);
      const pass = decodeURIComponent(url.password);
      this.add(user);
      this.add(pass);
      authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      this.add(authorization);
      url.username = '';
      url.password = '';
    }
    return { url, authorization };
  }

  /** A value to keep out of every text (registered globally when long enough, scrubbed here). */
  add(value: string | undefined): void {
    if (!value) return;
    registerSecret(value);
    if (value.length >= MIN_LOCAL) this.values.add(value);
  }

  private addUrl(url: URL): void {
    this.add(url.href);
    this.add(url.href.replace(/\/$/, ''));
    if (url.pathname.length > 1) this.add(url.pathname + url.search);
    for (const seg of url.pathname.split('/')) if (seg.length >= MIN_URL_PART) this.add(seg);
    for (const [, v] of url.searchParams) if (v.length >= MIN_URL_PART) this.add(v);
  }

  /** `text` with this send's secrets and anything api/redact.ts knows replaced. */
  clean(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is replaced whole.
    for (const v of [...this.values].sort((a, b) => b.length - a.length)) out = out.replaceAll(v, REDACTED);
    return redact(out);
  }
}
