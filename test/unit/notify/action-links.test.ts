/** Signing and checking action links on data: the token, its expiry, the CSRF token, the key file, the flag. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decisionLinks,
  type LinkClaims,
  LINK_KEY_FILE,
  linkCsrf,
  loadOrCreateLinkKey,
  mintToken,
  parseLinkTtl,
  verifyToken,
} from '../../../controller/notify/action-links.js';

const KEY = Buffer.alloc(32, 7);
const NOW = Date.parse('2026-11-27T02:00:00Z');
const claims: LinkClaims = {
  namespace: 'default',
  name: 'pilot-1-1',
  action: 'approve',
  rv: '42',
  exp: NOW + 3_600_000,
  nonce: 'n0nce',
  channel: 'ops',
};

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  dirs = [];
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-links-'));
  dirs.push(d);
  return d;
};

describe('action link tokens', () => {
  it('verifies a token it minted and gives back every claim', () => {
    expect(verifyToken(KEY, mintToken(KEY, claims), NOW)).toEqual({ ok: true, claims });
  });

  it('refuses a token whose signature, payload or key differs', () => {
    const t = mintToken(KEY, claims);
    const [v, payload, sig] = t.split('.');
    const other = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), a: 'reject' }),
    ).toString('base64url');
    const forged = [
      `${v}.${payload}.${sig.slice(0, -2)}xx`,
      `${v}.${other}.${sig}`,
      `v2.${payload}.${sig}`,
      `${t}.extra`,
      'garbage',
      '',
    ];
    for (const f of forged)
      expect(verifyToken(KEY, f, NOW)).toMatchObject({ ok: false, why: expect.stringContaining('not valid') });
    expect(verifyToken(Buffer.alloc(32, 8), t, NOW).ok).toBe(false);
  });

  it('refuses a token at and after its expiry, saying when it expired', () => {
    const t = mintToken(KEY, claims);
    expect(verifyToken(KEY, t, claims.exp - 1).ok).toBe(true);
    expect(verifyToken(KEY, t, claims.exp)).toEqual({ ok: false, why: 'the link expired at 2026-11-27T03:00:00.000Z' });
  });

  it('binds the confirmation form CSRF token to the link token', () => {
    const a = mintToken(KEY, claims);
    const b = mintToken(KEY, { ...claims, nonce: 'other' });
    expect(linkCsrf(KEY, a)).toBe(linkCsrf(KEY, a));
    expect(linkCsrf(KEY, a)).not.toBe(linkCsrf(KEY, b));
  });

  it('mints an approve and a reject link under the configured URL, each with its own nonce and the expiry', () => {
    const links = decisionLinks(
      KEY,
      new URL('https://console.example.org'),
      { namespace: 'team', name: 'd1', resourceVersion: '9' },
      60_000,
      NOW,
      'ops',
    );
    expect(links.map((l) => [l.action, l.label, new URL(l.url).origin + new URL(l.url).pathname])).toEqual([
      ['approve', 'Approve', 'https://console.example.org/link'],
      ['reject', 'Reject', 'https://console.example.org/link'],
    ]);
    const got = links.map((l) => verifyToken(KEY, new URL(l.url).searchParams.get('t')!, NOW));
    expect(got).toMatchObject([
      {
        ok: true,
        claims: { namespace: 'team', name: 'd1', action: 'approve', rv: '9', exp: NOW + 60_000, channel: 'ops' },
      },
      { ok: true, claims: { action: 'reject' } },
    ]);
    const nonces = got.map((g) => (g.ok ? g.claims.nonce : ''));
    expect(nonces[0]).not.toBe(nonces[1]);
  });
});

describe('the link key file and --link-ttl', () => {
  it('creates the key once, mode 0600, and reads the same key afterwards', () => {
    const home = tmp();
    const k = loadOrCreateLinkKey(home);
    expect(k.length).toBe(32);
    expect(fs.statSync(path.join(home, LINK_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(loadOrCreateLinkKey(home).equals(k)).toBe(true);
  });

  it('refuses a key file others can read, naming it and the fix', () => {
    const home = tmp();
    loadOrCreateLinkKey(home);
    fs.chmodSync(path.join(home, LINK_KEY_FILE), 0o644);
    expect(() => loadOrCreateLinkKey(home)).toThrow(`${path.join(home, LINK_KEY_FILE)} is readable by others`);
  });

  it('takes 1m to 24h, 1h when not given', () => {
    expect(parseLinkTtl(undefined)).toBe(3_600_000);
    expect(parseLinkTtl('15m')).toBe(900_000);
    expect(() => parseLinkTtl('30s')).toThrow('--link-ttl 30s: must be 1m to 24h');
    expect(() => parseLinkTtl('25h')).toThrow('--link-ttl 25h: must be 1m to 24h');
  });
});
